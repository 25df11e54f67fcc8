/**
 * TraceSpanProcessor: an OpenTelemetry JS SDK v2 SpanProcessor that turns the
 * LLM spans other instrumentations emit into tracepipe runs.
 *
 *   new NodeTracerProvider({ spanProcessors: [new TraceSpanProcessor({ client })] })
 *
 * At span start it notes the span's parent and start time; at span end it only
 * queues the span (a few map operations: onEnd runs on the traced program's
 * path, and reading attributes, parsing message JSON and counting tokens cost
 * from tens of microseconds to, for the first estimate, the ~200 ms it takes
 * to load an encoder). Queued spans are converted in batches right after the
 * current turn of the event loop (setImmediate, a few milliseconds per turn at
 * most), or at once on forceFlush/shutdown. The queue is bounded
 * (`maxQueueSize`); past it spans are dropped and counted in `stats.dropped`,
 * as BatchSpanProcessor does. At conversion the span adapters
 * (adapters/span-index.ts: the Vercel AI SDK, OpenInference, OTel GenAI
 * current and legacy) read the span; an LLM span
 * becomes an `llm` run with native messages, other spans `chain` / `tool` /
 * `embedding` runs, or nothing, as the filter decides. Parentage and
 * `dotted_order` come from span ids and start times; a run whose parent span
 * was filtered out hangs under its nearest kept ancestor. Run ids are stable
 * functions of trace id, span id and start (the collector derives the same
 * ones from OTLP). Runs go through the ingest Client (batched, rate-limited,
 * spooled). onEnd never throws: a span whose attributes cannot be read still
 * becomes a run, with the reason.
 */
import type { Context } from "@opentelemetry/api";
import { ADAPTERS as SPAN_ADAPTERS } from "../../adapters/span-index.js";
import type { Attributes, SpanAdapter, SpanResult } from "../../adapters/spans.js";
import { ValidationError } from "../errors.js";
import type { Client } from "../ingest/client.js";
import { getDefaultClient } from "../ingest/default.js";
import { dottedSegment } from "../run/ids.js";
import type { Run } from "../run/schema.js";
import type { TraceLogRecordProcessor } from "./logs.js";
import type { SpanProcessorShape, SpanView } from "./sdk-shapes.js";
import { apiKindName, keepByMode, readSpan, spanLike, spanRunId, spanToRun, type Reading, type SpanRecord } from "../otlp/convert.js";

/**
 * Which spans become runs:
 * - `genai` (default): spans some adapter recognises (LLM calls, and the tool,
 *   agent and embedding spans of the same conventions); HTTP, database and
 *   framework spans are dropped, their LLM descendants re-attached upward;
 * - `llm`: LLM calls only;
 * - `all`: every span (unrecognised ones as `chain` runs with their attributes);
 * - a function of the span and what the adapters made of it, for anything else.
 */
export type SpanFilter = "genai" | "llm" | "all" | SpanPredicate;

/**
 * Declared as a method so that a predicate written for the SDK's own span
 * class (`(span: ReadableSpan) => ...`) is accepted: the processor hands it
 * the SDK's span object, which has every field SpanView names and more.
 */
type SpanPredicate = { keep(span: SpanView, result: SpanResult | undefined): boolean }["keep"];

export interface TraceSpanProcessorOptions {
  /** Where runs go; the default client when omitted. */
  client?: Pick<Client, "createRun" | "flush">;
  /** Project (session_name) of the runs; the client's project when omitted. */
  project?: string;
  filter?: SpanFilter;
  /** Span adapters in the order they are asked; the built-in ones by default. */
  adapters?: readonly SpanAdapter[];
  /** Estimate usage with tiktoken when a span reports none (default true). */
  estimateUsage?: boolean;
  /** Ended spans waiting for conversion, at most (default 4096); past it they are dropped and counted. */
  maxQueueSize?: number;
  /**
   * Spans started and not yet ended that are remembered for the parentage of
   * their descendants, at most (default 10000). Past it the oldest open span is
   * forgotten (counted in `stats.evicted`): a span that never ends (a stream the
   * program stopped reading, which some instrumentations never end) would
   * otherwise be held, with its attributes, for the life of the process. A
   * forgotten span that ends after all still becomes a run, as a root.
   */
  maxOpenSpans?: number;
  /**
   * The log-record processor registered on the LoggerProvider: a span's GenAI
   * log records (the official instrumentations' message content) are read
   * with it when it is converted (logs.ts).
   */
  logs?: Pick<TraceLogRecordProcessor, "take">;
}

export interface TraceSpanProcessorStats {
  /** Spans waiting for conversion now. */
  queued: number;
  /** Spans converted and handed to the client as runs. */
  recorded: number;
  /** Spans dropped because the queue was full. */
  dropped: number;
  /** Open spans forgotten because more than maxOpenSpans were open. */
  evicted: number;
}

/** Conversion yields to the event loop after this long, so a burst of spans never stalls the program for long. */
const SLICE_MS = 4;
/** Spans converted before their usage is estimated and their runs handed over (see drain). */
const GROUP = 16;

interface Node {
  key: string;
  traceId: string;
  spanId: string;
  parent?: string;
  startUs: number;
  span: SpanView;
  children: number;
  ended: boolean;
  /** Ended and waiting in the queue: kept (for the parentage of its descendants) until converted. */
  queued?: boolean;
  /** Decided once, when first needed (at its conversion, or when a descendant is converted first). */
  keep?: boolean;
  /** Its run id, made once (a hash) and reused by the runs of its descendants. */
  runId?: string;
}

const hrToUs = (t: readonly [number, number]) => t[0] * 1_000_000 + Math.floor(t[1] / 1000);
const keyOf = (traceId: string, spanId: string) => `${traceId}:${spanId}`;

export function toSpanRecord(span: SpanView): SpanRecord {
  const ctx = span.spanContext();
  const startUs = hrToUs(span.startTime);
  return {
    traceId: ctx.traceId,
    spanId: ctx.spanId,
    parentSpanId: span.parentSpanContext?.spanId,
    name: span.name,
    kind: apiKindName(span.kind),
    scope: span.instrumentationScope?.name,
    startUs,
    endUs: span.ended ? hrToUs(span.endTime) : startUs,
    attributes: span.attributes as Attributes,
    events: span.events.map((e) => ({ name: e.name, timeUs: hrToUs(e.time), attributes: (e.attributes ?? {}) as Attributes })),
    status: { code: span.status.code, message: span.status.message },
    droppedAttributesCount: span.droppedAttributesCount,
  };
}

export class TraceSpanProcessor implements SpanProcessorShape {
  /** Spans started and not yet released, by trace and span id (replaced by a new Map whenever it empties: see release). */
  private nodes = new Map<string, Node>();
  private readonly adapters: readonly SpanAdapter[];
  private readonly filter: SpanFilter;
  private readonly opts: TraceSpanProcessorOptions;
  private readonly maxQueueSize: number;
  private readonly maxOpenSpans: number;
  /** Ended spans not yet converted; `head` is the next one (a moving index, so taking one is O(1)). */
  private queue: Node[] = [];
  private head = 0;
  private scheduled?: NodeJS.Immediate;
  private closed = false;
  readonly stats: TraceSpanProcessorStats = { queued: 0, recorded: 0, dropped: 0, evicted: 0 };

  constructor(opts: TraceSpanProcessorOptions = {}) {
    this.opts = opts;
    this.adapters = opts.adapters ?? SPAN_ADAPTERS;
    this.filter = opts.filter ?? "genai";
    if (typeof this.filter !== "function" && !["genai", "llm", "all"].includes(this.filter)) {
      throw new ValidationError([
        { loc: ["filter"], msg: `expected genai, llm, all or a function, got ${JSON.stringify(this.filter)}`, type: "enum" },
      ]);
    }
    this.maxQueueSize = positiveInt(opts.maxQueueSize, 4096, "maxQueueSize");
    this.maxOpenSpans = positiveInt(opts.maxOpenSpans, 10_000, "maxOpenSpans");
  }

  private get client(): Pick<Client, "createRun" | "flush"> {
    return this.opts.client ?? getDefaultClient();
  }

  onStart(span: SpanView, _parentContext: Context): void {
    if (this.closed) return;
    const ctx = span.spanContext();
    const parentCtx = span.parentSpanContext;
    const parentKey = parentCtx && !parentCtx.isRemote ? keyOf(ctx.traceId, parentCtx.spanId) : undefined;
    const parent = parentKey ? this.nodes.get(parentKey) : undefined;
    if (parent) parent.children++;
    const key = keyOf(ctx.traceId, ctx.spanId);
    this.nodes.set(key, {
      key,
      traceId: ctx.traceId,
      spanId: ctx.spanId,
      parent: parent ? parentKey : undefined,
      startUs: hrToUs(span.startTime),
      span,
      children: 0,
      ended: false,
    });
    if (this.nodes.size > this.maxOpenSpans) this.evict();
  }

  /** Forget the oldest open spans (the map keeps start order) until no more than maxOpenSpans are held. */
  private evict(): void {
    for (const node of this.nodes.values()) {
      if (this.nodes.size <= this.maxOpenSpans) break;
      if (node.ended) continue; // waiting for conversion or for its descendants: it will be released
      this.nodes.delete(node.key);
      this.stats.evicted++;
      this.opts.logs?.take(node.traceId, node.spanId);
      const parent = node.parent ? this.nodes.get(node.parent) : undefined;
      if (parent && parent.children > 0) {
        parent.children--;
        this.release(parent);
      }
      warnEvicted(this.maxOpenSpans);
    }
  }

  /** On the program's path: note the end and queue the span; nothing is read or converted here. */
  onEnd(span: SpanView): void {
    try {
      const ctx = span.spanContext();
      const key = keyOf(ctx.traceId, ctx.spanId);
      let node = this.nodes.get(key);
      if (!node) {
        // Started before this processor was registered: a root of its own.
        node = { key, traceId: ctx.traceId, spanId: ctx.spanId, startUs: hrToUs(span.startTime), span, children: 0, ended: false };
        this.nodes.set(key, node);
      }
      node.span = span;
      node.ended = true;
      // A span already judged (as an ancestor of one that ended first) and dropped is not read again.
      if (this.closed || node.keep === false) {
        this.opts.logs?.take(node.traceId, node.spanId);
        return this.release(node);
      }
      if (this.queue.length - this.head >= this.maxQueueSize) {
        this.stats.dropped++;
        // Descendants still to come hang under the nearest ancestor that is recorded.
        node.keep ??= false;
        this.opts.logs?.take(node.traceId, node.spanId);
        warnDropped(this.maxQueueSize);
        return this.release(node);
      }
      node.queued = true;
      this.queue.push(node);
      this.stats.queued++;
      this.scheduled ??= setImmediate(() => this.drainSlice());
    } catch (err) {
      // Never let tracing break the traced program.
      process.emitWarning(`tracepipe: span ${span.name} was not recorded: ${(err as Error).message}`, "TracepipeWarning");
    }
  }

  /** One turn's share of the queue; the rest waits for the next turn so the program's own work interleaves. */
  private drainSlice(): void {
    this.scheduled = undefined;
    this.drain(performance.now() + SLICE_MS);
    if (this.head < this.queue.length) this.scheduled = setImmediate(() => this.drainSlice());
  }

  /**
   * Convert queued spans, oldest first, until the queue is empty or `until`
   * (performance.now()) has passed. A few spans at a time: their runs are
   * built, then the usage of those that reported none is estimated together,
   * then they are handed over (encoded and queued). Each phase then runs its
   * own code over a handful of spans in a row, which keeps each phase's code
   * and data warm in the processor's caches instead of cycling through all
   * three for every span.
   */
  private drain(until = Infinity): void {
    const runs: Run[] = [];
    const estimates: (() => void)[] = [];
    while (this.head < this.queue.length) {
      for (let k = 0; k < GROUP && this.head < this.queue.length; k++) {
        const node = this.queue[this.head]!;
        this.queue[this.head++] = undefined as unknown as Node; // let the span be collected
        this.stats.queued--;
        node.queued = false;
        const run = this.convert(node, estimates);
        if (run) runs.push(run);
        this.release(node);
      }
      for (const estimate of estimates) {
        try {
          estimate();
        } catch {
          // An estimate only adds to a run; without it the run is still whole.
        }
      }
      for (const run of runs) this.handOver(run);
      runs.length = 0;
      estimates.length = 0;
      if (performance.now() >= until) break;
    }
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }

  /** The span's run, its usage estimate (if one is due) pushed to `estimates`; undefined when it is not kept. */
  private convert(node: Node, estimates: (() => void)[]): Run | undefined {
    const span = node.span;
    try {
      const logs = this.opts.logs?.take(node.traceId, node.spanId);
      if (node.keep === false) return undefined;
      const record = toSpanRecord(span);
      if (logs) record.logs = logs;
      const reading = readSpan(spanLike(record), this.adapters);
      if (!this.keep(node, reading)) return undefined;
      const run = spanToRun(record, reading, this.place(node), {
        project: this.opts.project,
        estimateUsage: this.opts.estimateUsage,
        deferred: estimates,
      });
      if (record.droppedAttributesCount) warnTruncated(record.droppedAttributesCount);
      return run;
    } catch (err) {
      process.emitWarning(`tracepipe: span ${span.name} was not recorded: ${(err as Error).message}`, "TracepipeWarning");
      return undefined;
    }
  }

  private handOver(run: Run): void {
    try {
      // The run is built here for the client alone and never touched again: it need not be copied.
      this.client.createRun(run, { owned: true });
      this.stats.recorded++;
    } catch (err) {
      process.emitWarning(`tracepipe: span ${run.name} was not recorded: ${(err as Error).message}`, "TracepipeWarning");
    }
  }

  /**
   * Forget ended, converted spans nobody below still needs (for parentage).
   *
   * An emptied map is replaced by a new one. Why: a Map that lives long is in
   * V8's old generation, and while V8 marks the old generation (a larger heap
   * than the benchmark's: ~30 MB of tiktoken's WASM memory was enough), a
   * young node stored in it is kept through the next young collections along
   * with its span and attributes, and promoted: ~1.3 MB per young collection
   * against ~15 KB with a map made afresh (about every turn of the event loop
   * when spans end as they are converted), and young collections twice as long.
   */
  private release(node: Node): void {
    let n: Node | undefined = node;
    while (n && n.ended && !n.queued && n.children === 0) {
      this.nodes.delete(n.key);
      const p: Node | undefined = n.parent ? this.nodes.get(n.parent) : undefined;
      // A parent forgotten (evicted) and seen again at its end counted none of its children.
      if (p && p.children > 0) p.children--;
      n = p;
    }
    if (this.nodes.size === 0) this.nodes = new Map();
  }

  /** Kept or not, decided once; an ancestor still open is judged on the attributes it has so far. */
  private keep(node: Node, reading?: Reading): boolean {
    if (node.keep !== undefined) return node.keep;
    const r = reading ?? readSpan(spanLike(toSpanRecord(node.span)), this.adapters);
    const f = this.filter;
    node.keep = typeof f === "function" ? f(node.span, "result" in r ? r.result : undefined) : keepByMode(f, r);
    return node.keep;
  }

  /** Id, trace, parent and dotted_order: kept ancestors only, so filtered spans are skipped. */
  private place(node: Node) {
    if (!node.parent) {
      // A root (most LLM spans of an app that is not an agent framework): no chain to build.
      const id = (node.runId ??= spanRunId(node));
      return { id, traceId: id, parentId: undefined, dottedOrder: dottedSegment(node.startUs, id) };
    }
    const chain: Node[] = [node];
    for (let p = node.parent ? this.nodes.get(node.parent) : undefined; p; p = p.parent ? this.nodes.get(p.parent) : undefined) {
      if (this.keep(p)) chain.push(p);
    }
    chain.reverse();
    const ids = chain.map((n) => (n.runId ??= spanRunId(n)));
    return {
      id: ids[ids.length - 1]!,
      traceId: ids[0]!,
      parentId: ids.length > 1 ? ids[ids.length - 2] : undefined,
      dottedOrder: chain.map((n, i) => dottedSegment(n.startUs, ids[i]!)).join("."),
    };
  }

  /** Convert every queued span now, then deliver. */
  async forceFlush(): Promise<void> {
    this.drain();
    await this.client.flush();
  }

  /** Converts and delivers what has ended; spans still open are not recorded after this. */
  async shutdown(): Promise<void> {
    this.drain();
    this.closed = true;
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    await this.client.flush();
    this.nodes.clear();
  }
}

function positiveInt(v: number | undefined, fallback: number, loc: string): number {
  const n = v ?? fallback;
  if (!Number.isInteger(n) || n < 1) {
    throw new ValidationError([{ loc: [loc], msg: `expected a positive integer, got ${JSON.stringify(v)}`, type: "int_range" }]);
  }
  return n;
}

let warnedEvicted = false;
function warnEvicted(max: number): void {
  if (warnedEvicted) return;
  warnedEvicted = true;
  process.emitWarning(
    `tracepipe: more than ${max} spans were open at once, so the oldest open ones are forgotten (counted in processor.stats.evicted; they still become runs, as roots, if they end); spans an instrumentation never ends are the usual cause, or raise maxOpenSpans`,
    "TracepipeWarning",
  );
}

let warnedDropped = false;
function warnDropped(max: number): void {
  if (warnedDropped) return;
  warnedDropped = true;
  process.emitWarning(
    `tracepipe: more than ${max} ended spans were waiting for conversion, so spans are being dropped (counted in processor.stats.dropped); raise maxQueueSize if bursts are expected`,
    "TracepipeWarning",
  );
}

let warnedTruncated = false;
function warnTruncated(n: number): void {
  if (warnedTruncated) return;
  warnedTruncated = true;
  process.emitWarning(
    `tracepipe: a span lost ${n} attributes to the OpenTelemetry SDK's attribute limit, so its messages may be cut short; raise it with spanLimits: {attributeCountLimit} or OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT`,
    "TracepipeWarning",
  );
}
