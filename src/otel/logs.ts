/**
 * TraceLogRecordProcessor: an OpenTelemetry JS LogRecordProcessor that holds
 * the GenAI log records of live spans until the span processor converts the
 * span, which then reads them as the span's messages. The official GenAI
 * instrumentations emit a call's content this way (`gen_ai.user.message`,
 * `gen_ai.choice`, ...: logs beside the span, not on it).
 *
 *   const logs = new TraceLogRecordProcessor();
 *   new NodeTracerProvider({ spanProcessors: [new TraceSpanProcessor({ logs })] });
 *   new LoggerProvider({ processors: [logs] });
 *
 * Records are held by trace and span id, only those named `gen_ai.*` and
 * emitted inside a span. Memory is bounded: at most `maxRecords` are held and
 * none longer than `maxAgeMs` (a span that never ends, or one the span
 * processor does not record); past either the oldest go first, counted in
 * `stats.expired`. onEmit copies three fields and never throws.
 */
import type { Context } from "@opentelemetry/api";
import type { LogRecordLike } from "../../adapters/spans.js";
import { ValidationError } from "../errors.js";
import type { LogRecordProcessorShape, LogRecordView } from "./sdk-shapes.js";

export interface TraceLogRecordProcessorOptions {
  /** Records held at most (default 10000). */
  maxRecords?: number;
  /** How long a record waits for its span's conversion, at most (default 10 minutes). */
  maxAgeMs?: number;
}

export interface TraceLogRecordProcessorStats {
  /** Records held now. */
  held: number;
  /** Records handed to the span processor with their span. */
  joined: number;
  /** Records let go unjoined: too old, or past maxRecords. */
  expired: number;
}

interface Held {
  records: LogRecordLike[];
  /** When its first record came (performance.now()). */
  since: number;
}

const hrToUs = (t: readonly [number, number]) => t[0] * 1_000_000 + Math.floor(t[1] / 1000);

function positive(v: number | undefined, fallback: number, loc: string): number {
  const n = v ?? fallback;
  if (!Number.isFinite(n) || n <= 0)
    throw new ValidationError([{ loc: [loc], msg: `expected a positive number, got ${JSON.stringify(v)}`, type: "greater_than" }]);
  return n;
}

export class TraceLogRecordProcessor implements LogRecordProcessorShape {
  /** By `traceId:spanId`, in the order their first record came (a Map keeps it): the oldest first to go. */
  private readonly bySpan = new Map<string, Held>();
  private readonly maxRecords: number;
  private readonly maxAgeMs: number;
  private closed = false;
  readonly stats: TraceLogRecordProcessorStats = { held: 0, joined: 0, expired: 0 };

  constructor(opts: TraceLogRecordProcessorOptions = {}) {
    this.maxRecords = positive(opts.maxRecords, 10_000, "maxRecords");
    this.maxAgeMs = positive(opts.maxAgeMs, 600_000, "maxAgeMs");
  }

  onEmit(record: LogRecordView, _context?: Context): void {
    try {
      if (this.closed) return;
      const span = record.spanContext;
      if (!span?.spanId) return;
      const attributes = (record.attributes ?? {}) as Record<string, unknown>;
      const named = record.eventName || attributes["event.name"];
      if (typeof named !== "string" || !named.startsWith("gen_ai.")) return;
      const key = `${span.traceId}:${span.spanId}`;
      let held = this.bySpan.get(key);
      if (!held) this.bySpan.set(key, (held = { records: [], since: performance.now() }));
      held.records.push({ eventName: named, body: record.body, attributes, timeUs: hrToUs(record.hrTime) });
      this.stats.held++;
      this.expire();
    } catch (err) {
      // Never let tracing break the traced program.
      process.emitWarning(`tracepipe: a log record was not held: ${(err as Error).message}`, "TracepipeWarning");
    }
  }

  /** The span's records, oldest first, handed over once (the span processor calls this when it converts the span). */
  take(traceId: string, spanId: string): LogRecordLike[] | undefined {
    const key = `${traceId}:${spanId}`;
    const held = this.bySpan.get(key);
    if (!held) return undefined;
    this.bySpan.delete(key);
    this.stats.held -= held.records.length;
    this.stats.joined += held.records.length;
    return held.records;
  }

  /** Lets the oldest spans' records go while there are too many or they are too old. */
  private expire(): void {
    const tooOld = performance.now() - this.maxAgeMs;
    for (const [key, held] of this.bySpan) {
      if (this.stats.held <= this.maxRecords && held.since > tooOld) break;
      this.bySpan.delete(key);
      this.stats.held -= held.records.length;
      this.stats.expired += held.records.length;
    }
  }

  async forceFlush(): Promise<void> {}

  /** Records still held are let go: their spans are not converted after the span processor's shutdown either. */
  async shutdown(): Promise<void> {
    this.closed = true;
    this.stats.expired += this.stats.held;
    this.stats.held = 0;
    this.bySpan.clear();
  }
}
