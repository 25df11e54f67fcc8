/**
 * The log formats backfill reads, as pure functions of one parsed line: how a
 * line becomes a call (or, for native run records, a run as is). readers.ts
 * puts each format behind the LogReader interface.
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
import { isObj, type Obj } from "../internal/obj.js";
import type { CallRecord } from "./convert.js";
import { toEpochMs } from "./convert.js";
import type { Loc } from "../internal/types.js";

export type FileKind =
  "openai-batch-input" | "openai-batch-output" | "anthropic-batch-requests" | "anthropic-batch-results" | "generic" | "runs" | "otlp-json";
export const FORMATS = ["auto", "openai-batch", "anthropic-batch", "generic", "runs", "otlp-json"] as const;
export type FormatName = (typeof FORMATS)[number];

function fail(loc: Loc, msg: string, type = "value_error"): never {
  throw new ValidationError([{ loc, msg, type }]);
}

export function customId(v: Obj): string {
  const id = v.custom_id;
  if (typeof id !== "string" || !id) fail(["custom_id"], "expected a non-empty string", "string_type");
  return id;
}

/** The request body inside a request-file line. */
export function requestBody(kind: FileKind, v: Obj): unknown {
  if (kind === "openai-batch-input") {
    if (typeof v.url !== "string" || !/\/chat\/completions$/.test(v.url))
      fail(["url"], `only /v1/chat/completions batch requests can be traced, not ${JSON.stringify(v.url)}`, "unsupported_endpoint");
    if (!isObj(v.body)) fail(["body"], "expected an object", "object_type");
    return v.body;
  }
  if (!isObj(v.params)) fail(["params"], "expected an object", "object_type");
  return v.params;
}

/** A vendor's error value (a string, or an object with a type or code and a message) as one line. */
function vendorErrorText(e: unknown): string {
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
      if (status !== undefined && status >= 400) rec.error = `HTTP ${status}: ${vendorErrorText(r.body)}`;
      else if (isObj(r.body)) {
        rec.response = r.body;
        rec.startMs = toEpochMs(r.body.created);
      } else fail(["response", "body"], "expected the chat.completion object", "object_type");
    } else if (r !== null && r !== undefined) fail(["response"], "expected an object or null", "object_type");
    if (v.error !== null && v.error !== undefined) rec.error = vendorErrorText(v.error);
    if (rec.response === undefined && rec.error === undefined) fail(["response"], "neither a response nor an error", "missing");
    return rec;
  }
  const result = v.result;
  if (!isObj(result)) fail(["result"], "expected an object", "object_type");
  const rec: CallRecord = {
    key: `custom_id:${id}`,
    request,
    format: "anthropic-messages",
    metadata: { ...metadata, result_type: result.type },
  };
  switch (result.type) {
    case "succeeded":
      if (!isObj(result.message)) fail(["result", "message"], "expected the Message object", "object_type");
      rec.response = result.message;
      return rec;
    case "errored":
      rec.error = `errored: ${vendorErrorText(result.error)}`;
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
  return {
    key: `custom_id:${id}`,
    request: requestBody(kind, v),
    format: kind === "openai-batch-input" ? "openai-chat" : "anthropic-messages",
    metadata: { custom_id: id, response_missing: true },
  };
}

const TTFT_MS_FIELDS = ["time_to_first_token_ms", "ttft_ms", "first_token_ms", "latency_to_first_token_ms"];

/** A generic request/response log line. */
export function genericCall(v: Obj, line: number): CallRecord {
  if (v.request === undefined && v.response === undefined) fail([], "expected `request` and/or `response`", "missing");
  const rec: CallRecord = { key: `line:${line}`, request: v.request ?? undefined, response: v.response ?? undefined };
  if (v.start_time !== undefined)
    rec.startMs = toEpochMs(v.start_time) ?? fail(["start_time"], "expected an ISO 8601 time or epoch seconds/milliseconds", "datetime");
  if (v.end_time !== undefined)
    rec.endMs = toEpochMs(v.end_time) ?? fail(["end_time"], "expected an ISO 8601 time or epoch seconds/milliseconds", "datetime");
  if (v.first_token_time !== undefined)
    rec.firstTokenMs =
      toEpochMs(v.first_token_time) ?? fail(["first_token_time"], "expected an ISO 8601 time or epoch seconds/milliseconds", "datetime");
  for (const f of TTFT_MS_FIELDS) {
    if (rec.firstTokenMs === undefined && typeof v[f] === "number" && rec.startMs !== undefined)
      rec.firstTokenMs = rec.startMs + (v[f] as number);
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
  if (typeof v.error === "string" || isObj(v.error)) rec.error = vendorErrorText(v.error);
  if (typeof v.name === "string") rec.name = v.name;
  return rec;
}
