/**
 * The log formats backfill reads, each behind the LogReader interface (READERS): how to
 * recognise a file by its first record, and how one line becomes a call (or,
 * for native run records, a run as is).
 *
 * | format            | a line looks like                                                   |
 * |-------------------|---------------------------------------------------------------------|
 * | openai-batch      | input  `{custom_id, method, url, body}`                            |
 * |                   | output `{id, custom_id, response: {status_code, request_id, body}, error}` |
 * | anthropic-batch   | requests `{custom_id, params}`                                      |
 * |                   | results  `{custom_id, result: {type: succeeded|errored|canceled|expired, ...}}` |
 * | generic           | `{request?, response?, start_time?, end_time?, metadata?, tags?, id?}` |
 * | runs              | a native Run record (`id`, `trace_id`, `dotted_order`, `run_type`, ...) |
 * | otlp-json         | an OTLP `ExportTraceServiceRequest` per line (`resourceSpans`)      |
 *
 * A batch's request file is only read to join requests to results by
 * `custom_id`; given alone, each request becomes a run without outputs.
 */
import { ValidationError } from "../errors.js";
import { isObj, type Obj } from "../format/obj.js";
import type { CallRecord } from "./convert.js";
import { toEpochMs } from "./convert.js";

export type FileKind = "openai-batch-input" | "openai-batch-output" | "anthropic-batch-requests" | "anthropic-batch-results" | "generic" | "runs" | "otlp-json";
export const FORMATS = ["auto", "openai-batch", "anthropic-batch", "generic", "runs", "otlp-json"] as const;
export type FormatName = (typeof FORMATS)[number];


/** One parsed line, read: a call to convert, or (native records) a run as is. */
export type ReadResult = { call: CallRecord } | { run: Obj };

/**
 * A log format, as the pipeline sees it. Readers are pure: the pipeline owns
 * the file, the line numbers, the join index and the delivery.
 */
export interface LogReader {
  readonly kind: FileKind;
  /** The --format name that selects this reader. */
  readonly format: Exclude<FormatName, "auto">;
  /** Whether one parsed record looks like this kind (READERS is checked in order). */
  matches(v: Obj): boolean;
  /** Request files: the results-file kind they are joined to. */
  readonly joinedTo?: FileKind;
  /** Results files: the request-file kind they look requests up in. */
  readonly joinsWith?: FileKind;
  /** Request files: the join key and the request body a results line will look up. */
  index?(v: Obj): { customId: string; body: unknown };
  /**
   * One line to a call (or a run). `request` is the joined request of a
   * results line, when its request file was given. Throws ValidationError
   * naming the field.
   */
  read(v: Obj, line: number, request?: unknown): ReadResult;
}

const has = (v: Obj, ...keys: string[]) => keys.every((k) => k in v);

/** In detection order: the most specific shapes first. */
export const READERS: readonly LogReader[] = [
  { kind: "otlp-json", format: "otlp-json", matches: (v) => has(v, "resourceSpans"), read: () => fail([], "OTLP JSON exports cannot be backfilled yet", "unsupported_format") },
  {
    kind: "openai-batch-input",
    format: "openai-batch",
    matches: (v) => has(v, "custom_id", "method", "url", "body"),
    joinedTo: "openai-batch-output",
    index: (v) => ({ customId: customId(v), body: requestBody("openai-batch-input", v) }),
    read: (v) => ({ call: lonelyRequestCall("openai-batch-input", v) }),
  },
  {
    kind: "anthropic-batch-results",
    format: "anthropic-batch",
    matches: (v) => has(v, "custom_id", "result"),
    joinsWith: "anthropic-batch-requests",
    read: (v, _line, request) => ({ call: batchResultCall("anthropic-batch-results", v, request) }),
  },
  {
    kind: "anthropic-batch-requests",
    format: "anthropic-batch",
    matches: (v) => has(v, "custom_id", "params"),
    joinedTo: "anthropic-batch-results",
    index: (v) => ({ customId: customId(v), body: requestBody("anthropic-batch-requests", v) }),
    read: (v) => ({ call: lonelyRequestCall("anthropic-batch-requests", v) }),
  },
  {
    kind: "openai-batch-output",
    format: "openai-batch",
    matches: (v) => "custom_id" in v && ("response" in v || "error" in v) && !("result" in v) && !("request" in v),
    joinsWith: "openai-batch-input",
    read: (v, _line, request) => ({ call: batchResultCall("openai-batch-output", v, request) }),
  },
  { kind: "runs", format: "runs", matches: (v) => "id" in v && "run_type" in v && ("trace_id" in v || "dotted_order" in v || "start_time" in v), read: (v) => ({ run: v }) },
  { kind: "generic", format: "generic", matches: (v) => ("request" in v || "response" in v) && !("custom_id" in v), read: (v, line) => ({ call: genericCall(v, line) }) },
];

export const READER: Readonly<Record<FileKind, LogReader>> = Object.fromEntries(READERS.map((r) => [r.kind, r])) as Record<FileKind, LogReader>;

/** Which kind of file this is, from one parsed record (and the --format, when given). */
export function detectKind(value: unknown, format: FormatName = "auto"): FileKind | undefined {
  if (!isObj(value)) return undefined;
  for (const r of READERS) {
    if (format !== "auto" && r.format !== format) continue;
    if (r.matches(value)) return r.kind;
  }
  // With --format generic, a line with a custom_id is still a generic record.
  if (format === "generic" && ("request" in value || "response" in value)) return "generic";
  return undefined;
}

function fail(loc: (string | number)[], msg: string, type = "value_error"): never {
  throw new ValidationError([{ loc, msg, type }]);
}

function customId(v: Obj): string {
  const id = v.custom_id;
  if (typeof id !== "string" || !id) fail(["custom_id"], "expected a non-empty string", "string_type");
  return id;
}

/** The request body inside a request-file line. */
export function requestBody(kind: FileKind, v: Obj): unknown {
  if (kind === "openai-batch-input") {
    if (typeof v.url !== "string" || !/\/chat\/completions$/.test(v.url)) fail(["url"], `only /v1/chat/completions batch requests can be traced, not ${JSON.stringify(v.url)}`, "unsupported_endpoint");
    if (!isObj(v.body)) fail(["body"], "expected an object", "object_type");
    return v.body;
  }
  if (!isObj(v.params)) fail(["params"], "expected an object", "object_type");
  return v.params;
}

function errorText(e: unknown): string {
  if (typeof e === "string") return e;
  if (isObj(e)) {
    const inner = isObj(e.error) ? e.error : e;
    const type = typeof inner.type === "string" ? inner.type : typeof inner.code === "string" ? inner.code : undefined;
    const msg = typeof inner.message === "string" ? inner.message : JSON.stringify(e);
    return type ? `${type}: ${msg}` : msg;
  }
  return JSON.stringify(e);
}

/** One line of a results/output file, with its joined request when there is one. */
export function batchResultCall(kind: FileKind, v: Obj, request: unknown): CallRecord {
  const id = customId(v);
  const metadata: Obj = { custom_id: id };
  if (kind === "openai-batch-output") {
    if (typeof v.id === "string") metadata.batch_request_id = v.id;
    const r = v.response;
    const rec: CallRecord = { key: `custom_id:${id}`, request, format: "openai-chat", metadata };
    if (isObj(r)) {
      if (typeof r.request_id === "string") metadata.request_id = r.request_id;
      const status = typeof r.status_code === "number" ? r.status_code : undefined;
      if (status !== undefined) metadata.status_code = status;
      if (status !== undefined && status >= 400) rec.error = `HTTP ${status}: ${errorText(r.body)}`;
      else if (isObj(r.body)) {
        rec.response = r.body;
        rec.startMs = toEpochMs(r.body.created);
      } else fail(["response", "body"], "expected the chat.completion object", "object_type");
    } else if (r !== null && r !== undefined) fail(["response"], "expected an object or null", "object_type");
    if (v.error !== null && v.error !== undefined) rec.error = errorText(v.error);
    if (rec.response === undefined && rec.error === undefined) fail(["response"], "neither a response nor an error", "missing");
    return rec;
  }
  const result = v.result;
  if (!isObj(result)) fail(["result"], "expected an object", "object_type");
  const rec: CallRecord = { key: `custom_id:${id}`, request, format: "anthropic-messages", metadata: { ...metadata, result_type: result.type } };
  switch (result.type) {
    case "succeeded":
      if (!isObj(result.message)) fail(["result", "message"], "expected the Message object", "object_type");
      rec.response = result.message;
      return rec;
    case "errored":
      rec.error = `errored: ${errorText(result.error)}`;
      return rec;
    case "canceled":
    case "expired":
      rec.error = String(result.type);
      return rec;
    default:
      return fail(["result", "type"], `expected succeeded, errored, canceled or expired, got ${JSON.stringify(result.type)}`, "enum");
  }
}

/** A request line given without its results file: a run with inputs only. */
export function lonelyRequestCall(kind: FileKind, v: Obj): CallRecord {
  const id = customId(v);
  return { key: `custom_id:${id}`, request: requestBody(kind, v), format: kind === "openai-batch-input" ? "openai-chat" : "anthropic-messages", metadata: { custom_id: id, response_missing: true } };
}

const TTFT_MS_FIELDS = ["time_to_first_token_ms", "ttft_ms", "first_token_ms", "latency_to_first_token_ms"];

/** A generic request/response log line. */
export function genericCall(v: Obj, line: number): CallRecord {
  if (v.request === undefined && v.response === undefined) fail([], "expected `request` and/or `response`", "missing");
  const rec: CallRecord = { key: `line:${line}`, request: v.request ?? undefined, response: v.response ?? undefined };
  if (v.start_time !== undefined) rec.startMs = toEpochMs(v.start_time) ?? fail(["start_time"], "expected an ISO 8601 time or epoch seconds/milliseconds", "datetime");
  if (v.end_time !== undefined) rec.endMs = toEpochMs(v.end_time) ?? fail(["end_time"], "expected an ISO 8601 time or epoch seconds/milliseconds", "datetime");
  if (v.first_token_time !== undefined) rec.firstTokenMs = toEpochMs(v.first_token_time) ?? fail(["first_token_time"], "expected an ISO 8601 time or epoch seconds/milliseconds", "datetime");
  for (const f of TTFT_MS_FIELDS) {
    if (rec.firstTokenMs === undefined && typeof v[f] === "number" && rec.startMs !== undefined) rec.firstTokenMs = rec.startMs + (v[f] as number);
  }
  if (rec.startMs === undefined && isObj(v.response) && v.response.created !== undefined) rec.startMs = toEpochMs(v.response.created);
  if (v.metadata !== undefined) {
    if (!isObj(v.metadata)) fail(["metadata"], "expected an object", "object_type");
    rec.metadata = v.metadata;
  }
  if (v.tags !== undefined) {
    if (!Array.isArray(v.tags) || v.tags.some((t) => typeof t !== "string")) fail(["tags"], "expected an array of strings", "list_type");
    rec.tags = v.tags as string[];
  }
  if (v.id !== undefined) {
    if (typeof v.id !== "string" && typeof v.id !== "number") fail(["id"], "expected a string", "string_type");
    rec.id = String(v.id);
  }
  if (typeof v.error === "string" || isObj(v.error)) rec.error = errorText(v.error);
  if (typeof v.name === "string") rec.name = v.name;
  return rec;
}
