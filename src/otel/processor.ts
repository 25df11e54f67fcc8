/**
 * TraceSpanProcessor: an OpenTelemetry JS SDK v2 SpanProcessor that turns the
 * LLM spans other instrumentations emit into tracepipe runs.
 *
 *   new NodeTracerProvider({ spanProcessors: [new TraceSpanProcessor({ client })] })
 *
 * At span start it notes the span's parent and start time (cheap, nothing is
 * converted). At span end, the span adapters (adapters/span-index.ts: the Vercel
 * AI SDK, OpenInference, OTel GenAI current and legacy) read it; an LLM
 * span becomes an `llm` run with native messages, other spans `chain` / `tool`
 * / `embedding` runs, or nothing, as the filter decides. Parentage and
 * `dotted_order` come from span ids and start times; a run whose parent span
 * was filtered out hangs under its nearest kept ancestor. Runs go through the
 * ingest Client (batched, rate-limited, spooled). onEnd never throws: a span
 * whose attributes cannot be read still becomes a run, with the reason.
 */
import type { Context } from "@opentelemetry/api";
import type { ReadableSpan, Span, SpanProcessor } from "@opentelemetry/sdk-trace-node";
import { ADAPTERS as SPAN_ADAPTERS } from "../../adapters/span-index.js";
import type { SpanAdapter, SpanLike, SpanResult } from "../../adapters/spans.js";
import { ValidationError } from "../errors.js";
import { validate } from "../format/validate.js";
import type { Message } from "../format/schema.js";
import type { Client } from "../ingest/client.js";
import { getDefaultClient } from "../ingest/default.js";
import { dottedSegment, isoMicros, uuidv7 } from "../run/ids.js";
import type { Run, RunEvent } from "../run/schema.js";
import { estimateUsage } from "../tokens/index.js";

/**
 * Which spans become runs:
 * - `genai` (default): spans some adapter recognises (LLM calls, and the tool,
 *   agent and embedding spans of the same conventions); HTTP, database and
 *   framework spans are dropped, their LLM descendants re-attached upward;
 * - `llm`: LLM calls only;
 * - `all`: every span (unrecognised ones as `chain` runs with their attributes);
 * - a function of the span, for anything else.
 */
export type SpanFilter = "genai" | "llm" | "all" | ((span: ReadableSpan, result: SpanResult | undefined) => boolean);

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
}

interface Node {
  runId: string;
  parent?: string;
  startUs: number;
  span: Span | ReadableSpan;
  children: number;
  ended: boolean;
  /** Decided once, when first needed (at its end, or when a descendant ends first). */
  keep?: boolean;
  result?: SpanResult | null;
}

const hrToUs = (t: readonly [number, number]) => t[0] * 1_000_000 + Math.floor(t[1] / 1000);
const keyOf = (traceId: string, spanId: string) => `${traceId}:${spanId}`;
const ERROR = 2; // SpanStatusCode.ERROR

export class TraceSpanProcessor implements SpanProcessor {
  private readonly nodes = new Map<string, Node>();
  private readonly adapters: readonly SpanAdapter[];
  private readonly filter: SpanFilter;
  private readonly opts: TraceSpanProcessorOptions;
  private closed = false;

  constructor(opts: TraceSpanProcessorOptions = {}) {
    this.opts = opts;
    this.adapters = opts.adapters ?? SPAN_ADAPTERS;
    this.filter = opts.filter ?? "genai";
    if (typeof this.filter !== "function" && !["genai", "llm", "all"].includes(this.filter)) {
      throw new ValidationError([{ loc: ["filter"], msg: `expected genai, llm, all or a function, got ${JSON.stringify(this.filter)}`, type: "enum" }]);
    }
  }

  private get client(): Pick<Client, "createRun" | "flush"> {
    return this.opts.client ?? getDefaultClient();
  }

  onStart(span: Span, _parentContext: Context): void {
    if (this.closed) return;
    const ctx = span.spanContext();
    const parentCtx = span.parentSpanContext;
    const parentKey = parentCtx && !parentCtx.isRemote ? keyOf(ctx.traceId, parentCtx.spanId) : undefined;
    const parent = parentKey ? this.nodes.get(parentKey) : undefined;
    if (parent) parent.children++;
    const startUs = hrToUs(span.startTime);
    this.nodes.set(keyOf(ctx.traceId, ctx.spanId), { runId: uuidv7(startUs / 1000), parent: parent ? parentKey : undefined, startUs, span, children: 0, ended: false });
  }

  onEnd(span: ReadableSpan): void {
    const ctx = span.spanContext();
    const key = keyOf(ctx.traceId, ctx.spanId);
    let node = this.nodes.get(key);
    if (!node) {
      // Started before this processor was registered: a root of its own.
      const startUs = hrToUs(span.startTime);
      node = { runId: uuidv7(startUs / 1000), startUs, span, children: 0, ended: false };
      this.nodes.set(key, node);
    }
    node.span = span;
    node.ended = true;
    try {
      if (!this.closed && this.keep(node)) this.client.createRun(this.toRun(node, span));
    } catch (err) {
      // Never let tracing break the traced program.
      process.emitWarning(`tracepipe: span ${span.name} was not recorded: ${(err as Error).message}`, "TracepipeWarning");
    }
    this.release(key, node);
  }

  /** Forget ended spans nobody below still needs (for parentage). */
  private release(key: string, node: Node): void {
    let k: string | undefined = key;
    let n: Node | undefined = node;
    while (k && n && n.ended && n.children === 0) {
      this.nodes.delete(k);
      const pk: string | undefined = n.parent;
      const p: Node | undefined = pk ? this.nodes.get(pk) : undefined;
      if (p) p.children--;
      k = pk;
      n = p;
    }
  }

  /** The adapters' reading of a span; cached only once it has ended (attributes are final then). */
  private read(node: Node): SpanResult | undefined {
    if (node.ended && node.result !== undefined) return node.result ?? undefined;
    const like = spanLike(node.span);
    const adapter = this.adapters.find((a) => a.detect(like));
    const result = adapter ? adapter.read(like) : null;
    if (node.ended) node.result = result;
    return result ?? undefined;
  }

  private keep(node: Node): boolean {
    if (node.keep !== undefined) return node.keep;
    let result: SpanResult | undefined;
    let unreadable = false;
    try {
      result = this.read(node);
    } catch {
      unreadable = true; // recognised but malformed: still an LLM-ish span worth keeping
    }
    const f = this.filter;
    node.keep =
      typeof f === "function" ? f(node.span as ReadableSpan, result) : f === "all" ? true : f === "llm" ? unreadable || result?.run_type === "llm" : unreadable || result !== undefined;
    return node.keep;
  }

  private toRun(node: Node, span: ReadableSpan): Run {
    // Kept ancestors, nearest first: the parent and the dotted_order skip filtered spans.
    const chain: Node[] = [node];
    for (let p = node.parent ? this.nodes.get(node.parent) : undefined; p; p = p.parent ? this.nodes.get(p.parent) : undefined) {
      if (this.keep(p)) chain.push(p);
    }
    chain.reverse();
    const ctx = span.spanContext();
    const startUs = node.startUs;
    const endUs = Math.max(hrToUs(span.endTime), startUs);
    const metadata: Record<string, unknown> = {
      otel: {
        trace_id: ctx.traceId,
        span_id: ctx.spanId,
        ...(span.parentSpanContext ? { parent_span_id: span.parentSpanContext.spanId } : {}),
        kind: span.kind,
        scope: span.instrumentationScope?.name,
      },
    };
    const run: Run = {
      id: node.runId,
      trace_id: chain[0]!.runId,
      dotted_order: chain.map((n) => dottedSegment(n.startUs, n.runId)).join("."),
      name: span.name,
      run_type: "chain",
      start_time: isoMicros(startUs),
      end_time: isoMicros(endUs),
      inputs: {},
      events: [],
      tags: [],
      extra: { metadata },
    };
    if (chain.length > 1) run.parent_run_id = chain[chain.length - 2]!.runId;
    if (span.droppedAttributesCount > 0) {
      // The SDK's attribute limit (128 by default) cut attributes off: with indexed conventions
      // that is the end of a long conversation. Say so on the run, and once in the log.
      (metadata.otel as Record<string, unknown>).dropped_attributes = span.droppedAttributesCount;
      warnTruncated(span.droppedAttributesCount);
    }
    if (this.opts.project) run.session_name = this.opts.project;
    if (span.status.code === ERROR) run.error = errorOf(span);

    let result: SpanResult | undefined;
    try {
      result = this.read(node);
    } catch (err) {
      // Recognised, but an attribute is malformed: keep the raw attributes and say why.
      run.run_type = "llm";
      run.inputs = { otel_attributes: { ...span.attributes } };
      metadata.normalize_error = err instanceof ValidationError ? err.issues : String(err);
      return run;
    }
    if (!result) {
      run.inputs = { otel_attributes: { ...span.attributes } };
      return run;
    }
    run.run_type = result.run_type;
    (metadata.otel as Record<string, unknown>).convention = result.convention;
    if (result.trace_provider) metadata.trace_provider = result.trace_provider;
    if (result.trace_model_name) metadata.trace_model_name = result.trace_model_name;
    if (result.invocation_params) metadata.invocation_params = result.invocation_params;
    if (result.run_type === "llm") {
      const inputs: Message[] = result.input_messages ?? [];
      const outputs: Message[] = result.output_messages ?? [];
      if (outputs[0] && result.usage_metadata) outputs[0].usage_metadata = result.usage_metadata;
      else if (outputs[0] && this.opts.estimateUsage !== false) {
        outputs[0].usage_metadata = estimateUsage({ model: result.trace_model_name, provider: result.trace_provider, inputs, outputs });
      }
      const problems = validate([...inputs, ...outputs]);
      if (problems.length) metadata.validation_errors = problems;
      // A convention that recorded only raw input values (no messages) keeps them as they are.
      run.inputs = !result.input_messages && result.inputs ? result.inputs : { messages: inputs };
      if (result.output_messages) run.outputs = { messages: outputs };
      else if (result.usage_metadata) metadata.usage_metadata = result.usage_metadata;
    } else {
      run.inputs = result.inputs ?? {};
      if (result.outputs) run.outputs = result.outputs;
    }
    const events: RunEvent[] = [];
    if (result.time_to_first_token_ms !== undefined) events.push({ name: "new_token", time: isoMicros(startUs + Math.round(result.time_to_first_token_ms * 1000)) });
    run.events = events;
    return run;
  }

  async forceFlush(): Promise<void> {
    await this.client.flush();
  }

  /** Delivers what has ended; spans still open are not recorded after this. */
  async shutdown(): Promise<void> {
    this.closed = true;
    await this.client.flush();
    this.nodes.clear();
  }
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

function spanLike(span: Span | ReadableSpan): SpanLike {
  const startUs = hrToUs(span.startTime);
  return {
    name: span.name,
    attributes: span.attributes as SpanLike["attributes"],
    events: span.events.map((e) => ({ name: e.name, offsetMs: (hrToUs(e.time) - startUs) / 1000, attributes: (e.attributes ?? {}) as SpanLike["attributes"] })),
  };
}

function errorOf(span: ReadableSpan): string {
  const ex = span.events.find((e) => e.name === "exception");
  const type = ex?.attributes?.["exception.type"];
  const msg = ex?.attributes?.["exception.message"] ?? span.status.message;
  if (typeof msg === "string" && msg) return typeof type === "string" && type ? `${type}: ${msg}` : msg;
  return span.status.message || "error";
}
