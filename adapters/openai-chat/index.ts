/**
 * OpenAI chat-completions adapter: request bodies, responses and streamed chunks
 * -> native messages. Pure functions; throws only NormalizeError.
 */
import type { Adapter, NormalizedRecord, ResponseResult } from "../types.js";
import { describe, expectObj, fail, isObj, under } from "../common/guards.js";
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
    res = normalizeStream(payload);
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
        res = under("response", () => (Array.isArray(r) ? normalizeStream(r) : normalizeResponse(r)));
      }
      if (!out.inputs && !res) fail([], "a {request, response} record needs at least one of them", "missing");
    } else if (Array.isArray(p.choices)) {
      res = normalizeResponse(p);
    } else if (Array.isArray(p.messages)) {
      const req = normalizeRequest(p);
      out.inputs = { messages: req.messages };
      reqModel = req.trace_model_name;
    } else {
      fail([], `not an OpenAI chat-completions request, response or stream: ${isObj(p) ? "no messages or choices" : describe(p)}`, "unknown_payload");
    }
  }
  if (res) out.outputs = { messages: res.messages };
  const model = res?.trace_model_name ?? reqModel;
  if (model !== undefined) out.metadata.trace_model_name = model;
  return out;
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
