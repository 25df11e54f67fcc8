/**
 * Stored OTLP rows (spans and log records, as plain.ts and logs.ts make them)
 * back to the SDK-neutral records the converter reads.
 */
import type { Attributes, LogRecordLike } from "../../adapters/spans.js";
import { otlpKindName, type SpanRecord } from "./convert.js";
import type { PlainLog } from "./logs.js";
import type { PlainSpan } from "./plain.js";

/** A canonical ISO time (microseconds) to microseconds since the epoch; 0 when absent or unreadable. */
export function isoToUs(iso: unknown): number {
  if (typeof iso !== "string" || !iso) return 0;
  const m = /\.(\d{1,6})\d*Z$/.exec(iso);
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? Math.floor(ms / 1000) * 1_000_000 + (m ? Number(m[1]!.padEnd(6, "0")) : (ms % 1000) * 1000) : 0;
}

export function parseJson<T>(text: unknown, fallback: T): T {
  if (typeof text !== "string") return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

/** A stored span row back to the SDK-neutral record the converter reads. */
export function plainToSpanRecord(r: PlainSpan | Record<string, unknown>): SpanRecord {
  const events = parseJson<{ name: string; time: string; attributes: Attributes }[]>(r.events, []);
  return {
    traceId: String(r.trace_id),
    spanId: String(r.span_id),
    parentSpanId: typeof r.parent_span_id === "string" && r.parent_span_id ? r.parent_span_id : undefined,
    name: String(r.name ?? ""),
    kind: otlpKindName(typeof r.kind === "number" ? r.kind : undefined),
    scope: parseJson<{ name?: string }>(r.scope, {}).name || undefined,
    startUs: isoToUs(r.start_time),
    endUs: isoToUs(r.end_time),
    attributes: parseJson<Attributes>(r.attributes, {}),
    events: events.map((e) => ({ name: e.name, timeUs: isoToUs(e.time), attributes: e.attributes ?? {} })),
    status: parseJson<{ code: number; message?: string }>(r.status, { code: 0 }),
  };
}

/** A stored log record row back to what the span adapters read. */
export function plainToLogRecord(r: PlainLog | Record<string, unknown>): LogRecordLike {
  return {
    eventName: String(r.event_name ?? ""),
    body: parseJson<unknown>(r.body, null),
    attributes: parseJson<Record<string, unknown>>(r.attributes, {}),
    timeUs: isoToUs(r.time),
  };
}
