/**
 * Google Gemini adapter (`generateContent` / `streamGenerateContent`, the REST
 * API and the `@google/genai` SDK's parameters and responses) -> native
 * messages. Pure functions; throws only NormalizeError.
 */
import type { Adapter, NormalizedRecord, ResponseResult } from "../types.js";
import { describe, expectObj, fail, under } from "../common/guards.js";
import { detect } from "./detect.js";
import { normalizeRequest } from "./request.js";
import { normalizeResponse } from "./response.js";
import { createStreamAccumulator, normalizeStream } from "./stream.js";

export { detect, normalizeRequest, normalizeResponse, normalizeStream, createStreamAccumulator };
export { normalizeUsage } from "./usage.js";

export const FORMAT = "gemini";

function responseOrStream(v: unknown): ResponseResult {
  return Array.isArray(v) ? normalizeStream(v) : normalizeResponse(v);
}

export function normalize(payload: unknown): NormalizedRecord {
  const out: NormalizedRecord = { format: FORMAT, metadata: { trace_provider: "google" } };
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
    } else if ("contents" in p) {
      const req = normalizeRequest(p);
      out.inputs = { messages: req.messages };
      reqModel = req.trace_model_name;
    } else if ("candidates" in p || "usageMetadata" in p || "promptFeedback" in p) {
      res = normalizeResponse(p);
    } else {
      fail([], `not a Gemini request, response or stream: ${describe(p)} without contents or candidates`, "unknown_payload");
    }
  }
  if (res) out.outputs = { messages: res.messages };
  const model = res?.trace_model_name ?? reqModel;
  if (model !== undefined) out.metadata.trace_model_name = model;
  return out;
}

export const gemini: Adapter = {
  name: FORMAT,
  detect,
  normalizeRequest,
  normalizeResponse,
  normalizeStream,
  createStreamAccumulator,
  normalize,
};

export default gemini;
