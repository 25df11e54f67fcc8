/**
 * One span, read by the span adapters, to one Run; and a whole trace of spans
 * to runs. Shared by TraceSpanProcessor (live spans in this process), the
 * collector (OTLP spans received over HTTP or gRPC) and backfill (OTLP files),
 * so all make the same runs. A span's log records (the GenAI events the
 * official instrumentations emit beside it) travel with it and are read by
 * the same adapters.
 */
import { isGenAiEvent } from "../../adapters/otel-genai/index.js";
import { ADAPTERS as SPAN_ADAPTERS } from "../../adapters/span-index.js";
import type { Attributes, LogRecordLike, SpanAdapter, SpanLike, SpanResult } from "../../adapters/spans.js";
import { ValidationError } from "../errors.js";
import { dottedSegment, isoMicros, stableUuid } from "../run/ids.js";
import { addCost, buildRun, llmFields } from "../run/llm.js";
import { resolveModel } from "../tokens/index.js";
import type { Run, RunEvent } from "../run/schema.js";
import { put } from "../internal/obj.js";

/** A finished span, SDK-neutral. Times in microseconds since the epoch. */
export interface SpanRecord {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** The span kind by name (`client`, `server`, `internal`, `producer`, `consumer`): the SDK and OTLP number them differently. */
  kind?: SpanKindName;
  scope?: string;
  startUs: number;
  endUs: number;
  attributes: Attributes;
  events: readonly { name: string; timeUs: number; attributes: Attributes }[];
  status: { code: number; message?: string };
  droppedAttributesCount?: number;
  /** Its log records, oldest first. */
  logs?: readonly LogRecordLike[];
}

export type SpanKindName = "internal" | "server" | "client" | "producer" | "consumer";
const KIND_NAMES: readonly SpanKindName[] = ["internal", "server", "client", "producer", "consumer"];
/** The OTel JS API's SpanKind (INTERNAL = 0) by name. */
export const apiKindName = (kind: number | undefined): SpanKindName | undefined => (kind === undefined ? undefined : KIND_NAMES[kind]);
/** OTLP's SpanKind (UNSPECIFIED = 0, INTERNAL = 1) by name. */
export const otlpKindName = (kind: number | undefined): SpanKindName | undefined =>
  kind === undefined || kind < 1 ? undefined : KIND_NAMES[kind - 1];

/** What the adapters made of a span: a reading, nothing (no convention matched), or the error. */
export type Reading = { result: SpanResult } | { result: undefined } | { error: unknown };

export type FilterMode = "genai" | "llm" | "all";

const ERROR = 2; // SpanStatusCode.ERROR

export function spanLike(s: Pick<SpanRecord, "name" | "attributes" | "events" | "startUs" | "scope" | "logs">): SpanLike {
  const like: SpanLike = {
    name: s.name,
    attributes: s.attributes,
    events: s.events.map((e) => ({ name: e.name, offsetMs: (e.timeUs - s.startUs) / 1000, attributes: e.attributes })),
  };
  if (s.scope) like.scope = s.scope;
  if (s.logs?.length) like.logs = s.logs;
  return like;
}

export function readSpan(like: SpanLike, adapters: readonly SpanAdapter[] = SPAN_ADAPTERS): Reading {
  const adapter = adapters.find((a) => a.detect(like));
  if (!adapter) return { result: undefined };
  try {
    return { result: adapter.read(like) };
  } catch (err) {
    return { error: err };
  }
}

/** The named filters. A span recognised but unreadable still counts as an LLM span: it is kept, with the reason. */
export function keepByMode(mode: FilterMode, r: Reading): boolean {
  if (mode === "all") return true;
  if ("error" in r) return true;
  if (mode === "llm") return r.result?.run_type === "llm";
  return r.result !== undefined;
}

export interface Placement {
  id: string;
  traceId: string;
  parentId?: string;
  dottedOrder: string;
}

export interface ConvertOptions {
  project?: string;
  /** Estimate usage with tiktoken when a span reports none (default true). */
  estimateUsage?: boolean;
  /**
   * Given, an estimate is not made now but pushed here, to be run before the
   * run is handed over (the processor converts a few spans, then estimates
   * their usage together: see processor.ts).
   */
  deferred?: (() => void)[];
}

export function spanToRun(s: SpanRecord, reading: Reading, at: Placement, o: ConvertOptions = {}): Run {
  const otel: Record<string, unknown> = { trace_id: s.traceId, span_id: s.spanId };
  if (s.parentSpanId) otel.parent_span_id = s.parentSpanId;
  if (s.kind !== undefined) otel.kind = s.kind;
  if (s.scope) otel.scope = s.scope;
  if (s.droppedAttributesCount) otel.dropped_attributes = s.droppedAttributesCount;
  const error = s.status.code === ERROR ? errorOf(s) : undefined;
  // The parts every run of a span shares, written out rather than spread into a literal with more
  // fields: V8 (Node 20) takes a slow path for `{...base, more}` that cost microseconds per run.
  const run = (
    run_type: string,
    inputs: Record<string, unknown>,
    metadata: Record<string, unknown>,
    outputs?: Record<string, unknown>,
    events?: RunEvent[],
  ) =>
    withLogEvents(
      s,
      reading,
      buildRun({
        at: { id: at.id, traceId: at.traceId, parentId: at.parentId, dottedOrder: at.dottedOrder },
        name: s.name,
        startUs: s.startUs,
        endUs: s.endUs,
        error,
        project: o.project,
        run_type,
        inputs,
        outputs,
        events,
        metadata,
      }),
    );

  if ("error" in reading) {
    // Recognised, but an attribute is malformed: keep the raw attributes and say why.
    const normalize_error = reading.error instanceof ValidationError ? reading.error.issues : String(reading.error);
    return run("llm", { otel_attributes: { ...s.attributes } }, { otel, normalize_error });
  }
  const result = reading.result;
  if (!result) return run("chain", { otel_attributes: { ...s.attributes } }, { otel });
  otel.convention = result.convention;
  if (result.issues) unread(s, result.issues, otel);
  const firstTokenUs =
    result.time_to_first_token_ms !== undefined ? s.startUs + Math.round(result.time_to_first_token_ms * 1000) : undefined;
  if (result.run_type === "llm") {
    // Live spans are stored even when a message is off (with the reasons), like wrapped calls.
    const f = llmFields(
      {
        inputs: result.input_messages,
        outputs: result.output_messages,
        provider: result.trace_provider,
        responseModel: result.trace_model_name,
        invocation_params: result.invocation_params,
        usage: result.usage_metadata,
        firstTokenUs,
      },
      { validation: "annotate", estimate: o.estimateUsage === false ? "never" : o.deferred ? "defer" : "now" },
    );
    if (f.estimate) o.deferred!.push(f.estimate);
    // Object.assign, not `{ otel, ...f.metadata }`: a spread into a literal with fields is V8's slow path (see above).
    const metadata: Record<string, unknown> = Object.assign({ otel }, f.metadata);
    // A convention that recorded only usage (no output messages) keeps it on the run, priced as a message's would be.
    if (!result.output_messages && result.usage_metadata) {
      metadata.usage_metadata = result.usage_metadata;
      addCost(result.usage_metadata, resolveModel({ extra: { metadata } }));
    }
    // Neither the span nor its log records held content: the instrumentation did not capture it (an empty prompt would mislead).
    if (!result.issues && !result.input_messages?.length && !result.output_messages?.length && !result.inputs)
      metadata.content_captured = false;
    if (result.issues) metadata.normalize_error = result.issues;
    return run(
      "llm",
      // A convention that recorded only raw input values (no messages) keeps them as they are.
      !result.input_messages && result.inputs ? result.inputs : f.inputs,
      metadata,
      result.output_messages ? f.outputs : undefined,
      f.events,
    );
  }
  const metadata: Record<string, unknown> = { otel };
  if (result.issues) metadata.normalize_error = result.issues;
  if (result.trace_provider) metadata.trace_provider = result.trace_provider;
  if (result.trace_model_name) metadata.trace_model_name = result.trace_model_name;
  if (result.invocation_params) metadata.invocation_params = result.invocation_params;
  // An agent's or a chain's summed usage: on the run, not on a message, so it is not counted twice.
  if (result.usage_metadata) metadata.usage_metadata = result.usage_metadata;
  const events: RunEvent[] = firstTokenUs !== undefined ? [{ name: "new_token", time: isoMicros(firstTokenUs) }] : [];
  return run(result.run_type, result.inputs ?? {}, metadata, result.outputs, events);
}

/** An indexed legacy key (`gen_ai.prompt.3.role`) and the family it belongs to (`gen_ai.prompt.`). */
const LEGACY_INDEXED = /^(gen_ai\.(?:prompt|completion)\.)\d+\./;

/**
 * The raw values of the attributes that failed to read, beside the issues: nothing the span
 * said is lost. An issue on an indexed legacy key (a role missing from `gen_ai.prompt.1.*`)
 * fails its whole family, whose messages are read together, and may name a key the span does
 * not have: every attribute of that family is kept.
 */
function unread(s: SpanRecord, issues: readonly { loc: readonly (string | number)[] }[], otel: Record<string, unknown>): void {
  const raw: Record<string, unknown> = {};
  for (const i of issues) {
    const key = i.loc[0];
    if (typeof key !== "string") continue;
    if (s.attributes[key] !== undefined) put(raw, key, s.attributes[key]);
    const family = LEGACY_INDEXED.exec(key)?.[1];
    if (family) for (const k of Object.keys(s.attributes)) if (k.startsWith(family)) put(raw, k, s.attributes[k]);
  }
  if (Object.keys(raw).length) otel.unread_attributes = raw;
}

/** Whether the reading took the record's content into the run's messages. */
function consumed(reading: Reading, r: LogRecordLike): boolean {
  return "result" in reading && reading.result?.run_type === "llm" && reading.result.convention === "otel-genai" && isGenAiEvent(r);
}

/** A log record that is not a message of the run, as a run event: kept and visible with the run it belongs to. */
export function logEvent(r: LogRecordLike): RunEvent {
  const kwargs: Record<string, unknown> = { body: r.body, attributes: r.attributes };
  if (r.eventName) kwargs.event_name = r.eventName;
  return { name: "log", time: isoMicros(r.timeUs ?? 0), kwargs };
}

function withLogEvents(s: SpanRecord, reading: Reading, run: Run): Run {
  if (!s.logs?.length) return run;
  for (const r of s.logs) if (!consumed(reading, r)) (run.events ??= []).push(logEvent(r));
  return run;
}

function errorOf(s: SpanRecord): string {
  const ex = s.events.find((e) => e.name === "exception");
  const type = ex?.attributes["exception.type"];
  const msg = ex?.attributes["exception.message"] ?? s.status.message;
  if (typeof msg === "string" && msg) return typeof type === "string" && type ? `${type}: ${msg}` : msg;
  return s.status.message || "error";
}

/** A stable run id for a span: the same span converted twice is the same run. */
export function spanRunId(s: Pick<SpanRecord, "traceId" | "spanId" | "startUs">): string {
  return stableUuid(["otel", s.traceId, s.spanId], s.startUs / 1000);
}

export interface TraceOptions extends ConvertOptions {
  filter?: FilterMode;
  adapters?: readonly SpanAdapter[];
  /** Log records of the trace whose span is not among `spans` with them (its own records travel in SpanRecord.logs). */
  strayLogs?: readonly (LogRecordLike & { spanId: string })[];
}

/**
 * A whole trace (or what has arrived of it) to runs: the filter applied, each
 * kept span placed under its nearest kept ancestor. Spans whose parent is not
 * among `spans` are roots. Ids are stable, so converting a trace again when
 * more of it arrives upserts the same runs.
 */
export function traceToRuns(spans: readonly SpanRecord[], o: TraceOptions = {}): Run[] {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const readings = new Map<string, Reading>();
  const reading = (s: SpanRecord) => {
    let r = readings.get(s.spanId);
    if (!r) readings.set(s.spanId, (r = readSpan(spanLike(s), o.adapters)));
    return r;
  };
  const kept = (s: SpanRecord) => keepByMode(o.filter ?? "genai", reading(s));
  const runs: Run[] = [];
  const runOf = new Map<string, Run>();
  const stray = o.strayLogs ? [...o.strayLogs] : [];
  for (const s of spans) {
    if (!kept(s)) {
      for (const r of s.logs ?? []) stray.push({ ...r, spanId: s.spanId });
      continue;
    }
    const chain: SpanRecord[] = [s];
    const seen = new Set([s.spanId]);
    for (
      let p = s.parentSpanId ? byId.get(s.parentSpanId) : undefined;
      p && !seen.has(p.spanId);
      p = p.parentSpanId ? byId.get(p.parentSpanId) : undefined
    ) {
      seen.add(p.spanId); // a malformed trace may loop; stop there
      if (kept(p)) chain.push(p);
    }
    chain.reverse();
    const ids = chain.map(spanRunId);
    const run = spanToRun(
      s,
      reading(s),
      {
        id: ids[ids.length - 1]!,
        traceId: ids[0]!,
        parentId: ids.length > 1 ? ids[ids.length - 2] : undefined,
        dottedOrder: chain.map((c, i) => dottedSegment(c.startUs, ids[i]!)).join("."),
      },
      o,
    );
    runOf.set(s.spanId, run);
    runs.push(run);
  }
  if (stray.length) placeStrayLogs(stray, byId, runOf, runs);
  return runs;
}

/**
 * Log records of spans that made no run (filtered out, or not among the
 * trace's spans) go to the run of the nearest kept ancestor, else to the
 * trace's first root run, as events: kept and visible on their trace.
 */
function placeStrayLogs(
  logs: readonly (LogRecordLike & { spanId: string })[],
  byId: ReadonlyMap<string, SpanRecord>,
  runOf: ReadonlyMap<string, Run>,
  runs: readonly Run[],
): void {
  const root = runs.find((r) => !r.parent_run_id);
  for (const r of logs) {
    let target: Run | undefined;
    const seen = new Set<string>();
    const own = byId.get(r.spanId);
    for (
      let s = own?.parentSpanId ? byId.get(own.parentSpanId) : undefined;
      s && !target && !seen.has(s.spanId);
      s = s.parentSpanId ? byId.get(s.parentSpanId) : undefined
    ) {
      seen.add(s.spanId);
      target = runOf.get(s.spanId);
    }
    target ??= root;
    if (target) (target.events ??= []).push(logEvent(r));
  }
}
