/**
 * OpenAI Responses API adapter: request bodies (`instructions`, `input`),
 * responses (`object: "response"`, `output` items) and the streamed event
 * sequence -> native messages. Pure functions; throws only NormalizeError.
 */
import type { Adapter, NormalizedRecord, ResponseResult } from "../types.js";
import { describe, expectObj, fail, isObj, under } from "../common/guards.js";
import { detect } from "./detect.js";
import { normalizeRequest } from "./request.js";
import { normalizeResponse } from "./response.js";
import { createStreamAccumulator, normalizeStream } from "./stream.js";

export { detect, normalizeRequest, normalizeResponse, normalizeStream, createStreamAccumulator };
export { normalizeInput } from "./request.js";
export { normalizeUsage } from "./usage.js";

export const FORMAT = "openai-responses";

function responseOrStream(v: unknown): ResponseResult {
  return Array.isArray(v) ? normalizeStream(v) : normalizeResponse(v);
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
      if (response !== undefined && response !== null) res = under("response", () => responseOrStream(response));
      if (!out.inputs && !res) fail([], "a {request, response} record needs at least one of them", "missing");
    } else if ("output" in p || p.object === "response") {
      res = normalizeResponse(p);
    } else if ("input" in p || "instructions" in p) {
      const req = normalizeRequest(p);
      out.inputs = { messages: req.messages };
      reqModel = req.trace_model_name;
    } else {
      fail([], `not an OpenAI Responses request, response or stream: ${isObj(p) ? "no input, instructions or output" : describe(p)}`, "unknown_payload");
    }
  }
  if (res) out.outputs = { messages: res.messages };
  const model = res?.trace_model_name ?? reqModel;
  if (model !== undefined) out.metadata.trace_model_name = model;
  return out;
}

export const openaiResponses: Adapter = {
  name: FORMAT,
  detect,
  normalizeRequest,
  normalizeResponse,
  normalizeStream,
  createStreamAccumulator,
  normalize,
};

export default openaiResponses;
