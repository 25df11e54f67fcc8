/**
 * OpenAI legacy completions adapter (`/v1/completions`: `prompt` in, choices
 * of `text` out): request bodies, `text_completion` responses and streamed
 * chunks -> native messages. Pure functions; throws only NormalizeError.
 * The mapping is described in request.ts and reply.ts.
 */
import type { Adapter, NormalizedRecord, ResponseContext, ResponseResult } from "../types.js";
import { describe, expectObj, fail, isObj, under } from "../common/guards.js";
import { detect } from "./detect.js";
import { normalizeRequest } from "./request.js";
import { normalizeResponse } from "./response.js";
import { createStreamAccumulator, normalizeStream } from "./stream.js";

export { detect, normalizeRequest, normalizeResponse, normalizeStream, createStreamAccumulator };
export { promptMessages } from "./request.js";

export const FORMAT = "openai-completions";

function responseOrStream(v: unknown, ctx?: ResponseContext): ResponseResult {
  return Array.isArray(v) ? normalizeStream(v, ctx) : normalizeResponse(v, ctx);
}

export function normalize(payload: unknown): NormalizedRecord {
  const out: NormalizedRecord = { format: FORMAT, metadata: { trace_provider: "openai" } };
  let reqModel: string | undefined;
  let res: ResponseResult | undefined;
  if (Array.isArray(payload)) res = normalizeStream(payload);
  else {
    const p = expectObj(payload, []);
    if ("request" in p || "response" in p) {
      const { request, response } = p;
      if (request !== undefined && request !== null) {
        const req = under("request", () => normalizeRequest(request));
        out.inputs = { messages: req.messages };
        reqModel = req.trace_model_name;
      }
      // The request tells the reply how to split an echoed prompt and which prompt a choice answers.
      if (response !== undefined && response !== null) res = under("response", () => responseOrStream(response, { request }));
      if (!out.inputs && !res) fail([], "a {request, response} record needs at least one of them", "missing");
    } else if ("choices" in p) {
      res = normalizeResponse(p);
    } else if ("prompt" in p) {
      const req = normalizeRequest(p);
      out.inputs = { messages: req.messages };
      reqModel = req.trace_model_name;
    } else {
      fail([], `not an OpenAI completions request, response or stream: ${isObj(p) ? "no prompt or choices" : describe(p)}`, "unknown_payload");
    }
  }
  if (res) out.outputs = { messages: res.messages };
  const model = res?.trace_model_name ?? reqModel;
  if (model !== undefined) out.metadata.trace_model_name = model;
  return out;
}

export const openaiCompletions: Adapter = {
  name: FORMAT,
  detect,
  normalizeRequest,
  normalizeResponse,
  normalizeStream,
  createStreamAccumulator,
  normalize,
};

export default openaiCompletions;
