/**
 * Amazon Bedrock Converse adapter: Converse / ConverseStream inputs, Converse
 * responses and ConverseStream events (as the AWS SDK yields them, or as the
 * service's JSON with bytes in base64) -> native messages. Pure functions;
 * throws only NormalizeError.
 */
import type { Adapter, NormalizedRecord, ResponseResult } from "../types.js";
import { describe, expectObj, fail, under } from "../common/guards.js";
import { detect } from "./detect.js";
import { normalizeRequest } from "./request.js";
import { normalizeResponse } from "./response.js";
import { createStreamAccumulator, normalizeStream } from "./stream.js";

export { detect, normalizeRequest, normalizeResponse, normalizeStream, createStreamAccumulator };
export { normalizeMessages } from "./request.js";
export { normalizeUsage } from "./usage.js";
export { blockToNative } from "./blocks.js";

export const FORMAT = "bedrock-converse";

function responseOrStream(v: unknown): ResponseResult {
  return Array.isArray(v) ? normalizeStream(v) : normalizeResponse(v);
}

export function normalize(payload: unknown): NormalizedRecord {
  const out: NormalizedRecord = { format: FORMAT, metadata: { trace_provider: "bedrock" } };
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
    } else if ("output" in p) {
      res = normalizeResponse(p);
    } else if ("messages" in p || "modelId" in p || "system" in p) {
      const req = normalizeRequest(p);
      out.inputs = { messages: req.messages };
      reqModel = req.trace_model_name;
    } else if ("role" in p) {
      res = normalizeResponse(p);
    } else {
      fail([], `not a Bedrock Converse request, response or stream: ${describe(p)} without modelId, messages or output`, "unknown_payload");
    }
  }
  if (res) out.outputs = { messages: res.messages };
  const model = res?.trace_model_name ?? reqModel;
  if (model !== undefined) out.metadata.trace_model_name = model;
  return out;
}

export const bedrockConverse: Adapter = {
  name: FORMAT,
  detect,
  normalizeRequest,
  normalizeResponse,
  normalizeStream,
  createStreamAccumulator,
  normalize,
};

export default bedrockConverse;
