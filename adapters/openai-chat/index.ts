/**
 * OpenAI chat-completions adapter: request bodies, responses and streamed chunks
 * -> native messages. Pure functions; throws only NormalizeError.
 */
import type { Adapter, NormalizedRecord, ResponseContext, ResponseResult } from "../types.js";
import { describe, expectObj, fail, isObj, under } from "../common/guards.js";
import { isRolePair } from "../common/reply.js";
import { detect } from "./detect.js";
import { normalizeRequest } from "./request.js";
import { normalizeResponse } from "./response.js";
import { createStreamAccumulator, normalizeStream } from "./stream.js";

export { detect, normalizeRequest, normalizeResponse, normalizeStream, createStreamAccumulator };
export { normalizeMessages } from "./request.js";
export { normalizeUsage } from "./usage.js";

export const FORMAT = "openai-chat";

export function normalize(payload: unknown): NormalizedRecord {
  const out: NormalizedRecord = { format: FORMAT, metadata: { trace_provider: "openai" } };
  let reqModel: string | undefined;
  let res: ResponseResult | undefined;
  if (Array.isArray(payload)) {
    res = replyOrStream(payload);
  } else {
    const p = expectObj(payload, []);
    if ("request" in p || "response" in p) {
      const request = p.request;
      if (request !== undefined && request !== null) {
        const req = under("request", () => normalizeRequest(request));
        out.inputs = { messages: req.messages };
        reqModel = req.trace_model_name;
      }
      if (p.response !== undefined && p.response !== null) {
        const r = p.response;
        res = under("response", () => replyOrStream(r, { request }));
      }
      if (!out.inputs && !res) fail([], "a {request, response} record needs at least one of them", "missing");
    } else if ("messages" in p) {
      // Dispatch on the key, not its type, so a malformed value is reported where it is.
      const req = normalizeRequest(p);
      out.inputs = { messages: req.messages };
      reqModel = req.trace_model_name;
    } else if ("choices" in p || "message" in p || "role" in p) {
      res = normalizeResponse(p);
    } else {
      fail([], `not an OpenAI chat-completions request, response or stream: ${isObj(p) ? "no messages, choices, message or role" : describe(p)}`, "unknown_payload");
    }
  }
  if (res) out.outputs = { messages: res.messages };
  const model = res?.trace_model_name ?? reqModel;
  if (model !== undefined) out.metadata.trace_model_name = model;
  return out;
}

/** An array is a stream of chunks, unless it is SPEC §2.6's `[role, content]` reply. */
function replyOrStream(v: unknown, ctx?: ResponseContext): ResponseResult {
  if (Array.isArray(v)) return isRolePair(v) ? normalizeResponse(v, ctx) : normalizeStream(v, ctx);
  return normalizeResponse(v, ctx);
}

export const openaiChat: Adapter = {
  name: FORMAT,
  detect,
  normalizeRequest,
  normalizeResponse,
  normalizeStream,
  createStreamAccumulator,
  normalize,
};

export default openaiChat;
