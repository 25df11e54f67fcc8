/**
 * Anthropic Messages adapter: request bodies, `message` responses and stream
 * events -> native messages. Pure functions; throws only NormalizeError.
 */
import type { Adapter, NormalizedRecord, ResponseResult } from "../types.js";
import { describe, expectObj, fail, under } from "../common/guards.js";
import { isRolePair } from "../common/reply.js";
import { detect } from "./detect.js";
import { normalizeRequest } from "./request.js";
import { normalizeResponse } from "./response.js";
import { createStreamAccumulator, normalizeStream } from "./stream.js";

export { detect, normalizeRequest, normalizeResponse, normalizeStream, createStreamAccumulator };
export { normalizeMessages } from "./request.js";
export { normalizeUsage } from "./usage.js";
export { blockToNative } from "./blocks.js";

export const FORMAT = "anthropic-messages";

export function normalize(payload: unknown): NormalizedRecord {
  const out: NormalizedRecord = { format: FORMAT, metadata: { trace_provider: "anthropic" } };
  let reqModel: string | undefined;
  let res: ResponseResult | undefined;
  if (Array.isArray(payload)) {
    res = replyOrStream(payload);
  } else {
    const p = expectObj(payload, []);
    if ("request" in p || "response" in p) {
      if (p.request !== undefined && p.request !== null) {
        const req = under("request", () => normalizeRequest(p.request));
        out.inputs = { messages: req.messages };
        reqModel = req.trace_model_name;
      }
      if (p.response !== undefined && p.response !== null) {
        const r = p.response;
        res = under("response", () => replyOrStream(r));
      }
      if (!out.inputs && !res) fail([], "a {request, response} record needs at least one of them", "missing");
    } else if ("messages" in p) {
      // Dispatch on the key, not its type, so a malformed value is reported where it is.
      const req = normalizeRequest(p);
      out.inputs = { messages: req.messages };
      reqModel = req.trace_model_name;
    } else if (p.type === "message" || "choices" in p || "message" in p || "role" in p) {
      res = normalizeResponse(p);
    } else {
      fail([], `not an Anthropic Messages request, response or stream: ${describe(p)} without messages, role or type "message"`, "unknown_payload");
    }
  }
  if (res) out.outputs = { messages: res.messages };
  const model = res?.trace_model_name ?? reqModel;
  if (model !== undefined) out.metadata.trace_model_name = model;
  return out;
}

/** An array is a stream of events, unless it is SPEC §2.6's `[role, content]` reply. */
function replyOrStream(v: unknown): ResponseResult {
  if (Array.isArray(v)) return isRolePair(v) ? normalizeResponse(v) : normalizeStream(v);
  return normalizeResponse(v);
}

export const anthropicMessages: Adapter = {
  name: FORMAT,
  detect,
  normalizeRequest,
  normalizeResponse,
  normalizeStream,
  createStreamAccumulator,
  normalize,
};

export default anthropicMessages;
