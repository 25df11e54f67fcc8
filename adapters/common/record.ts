/**
 * The `normalize(payload)` record every chat adapter accepts (DESIGN's CLI
 * contract): an array of chunks/events (a stream), `{request, response}`, or a
 * lone request or response object. The dispatch and the output record are the
 * same for every vendor; what differs is how a lone object is recognised, how a
 * reply or stream is read, and the message when neither fits.
 */
import type { Adapter, NormalizedRecord, RequestResult, ResponseContext, ResponseResult } from "../types.js";
import { adapterOf, type AdapterParts } from "./adapter.js";
import { expectObj, fail, locatedUnder, type Obj } from "./guards.js";

export interface RecordReader {
  format: string;
  provider: string;
  /** `withParams` false: the record keeps no invocation parameters, so a reader may leave them out (common/request.ts). */
  normalizeRequest(request: unknown, withParams?: boolean): RequestResult;
  normalizeResponse(response: unknown, ctx?: ResponseContext): ResponseResult;
  normalizeStream(events: readonly unknown[], ctx?: ResponseContext): ResponseResult;
  /** An array that is a reply rather than a stream (SPEC §2.6's `[role, content]`), for the formats that accept one. */
  isReplyArray?(v: unknown[]): boolean;
  /** What a lone object is, decided by its keys (not their values' types, so a malformed value is reported where it is); undefined when neither. */
  kindOf(p: Obj): "request" | "response" | undefined;
  /** Why a lone object is neither (the `unknown_payload` message). */
  unknown(p: Obj): string;
}

/** A reply, or a stream when it is an array (unless the format reads that array as a reply), with the request when the record carried one. */
function replyOrStream(r: RecordReader, v: unknown, ctx?: ResponseContext): ResponseResult {
  if (Array.isArray(v) && !r.isReplyArray?.(v)) return r.normalizeStream(v, ctx);
  return r.normalizeResponse(v, ctx);
}

export function normalizeRecord(r: RecordReader, payload: unknown): NormalizedRecord {
  const out: NormalizedRecord = { format: r.format, metadata: { trace_provider: r.provider } };
  let req: RequestResult | undefined;
  let res: ResponseResult | undefined;
  // Written out with try/catch rather than `under` and closures: this runs for every record.
  if (Array.isArray(payload)) res = replyOrStream(r, payload);
  else {
    const p = expectObj(payload, []);
    if ("request" in p || "response" in p) {
      const { request, response } = p;
      if (request !== undefined && request !== null) {
        try {
          req = r.normalizeRequest(request, false);
        } catch (err) {
          throw locatedUnder("request", err);
        }
      }
      if (response !== undefined && response !== null) {
        try {
          res = replyOrStream(r, response, { request });
        } catch (err) {
          throw locatedUnder("response", err);
        }
      }
      if (!req && !res) fail([], "a {request, response} record needs at least one of them", "missing");
    } else {
      const kind = r.kindOf(p);
      if (kind === "request") req = r.normalizeRequest(p, false);
      else if (kind === "response") res = r.normalizeResponse(p);
      else fail([], r.unknown(p), "unknown_payload");
    }
  }
  if (req) out.inputs = { messages: req.messages };
  if (res) out.outputs = { messages: res.messages };
  const model = res?.trace_model_name ?? req?.trace_model_name;
  if (model !== undefined) out.metadata.trace_model_name = model;
  return out;
}

/** What a chat adapter declares of its own: its names and how a lone object is told apart. */
export type RecordSpec = Omit<RecordReader, "normalizeRequest" | "normalizeResponse" | "normalizeStream">;

/**
 * A chat adapter from its folder's parts and what it declares of its own:
 * `normalize` is normalizeRecord over the two (the reader is built once, here).
 */
export function recordAdapter(spec: RecordSpec, parts: AdapterParts): Adapter {
  const r: RecordReader = {
    ...spec,
    normalizeRequest: parts.normalizeRequest,
    normalizeResponse: parts.normalizeResponse,
    normalizeStream: parts.normalizeStream,
  };
  return adapterOf(spec.format, parts, (payload) => normalizeRecord(r, payload));
}
