/**
 * OpenAI Responses API adapter: request bodies (`instructions`, `input`),
 * responses (`object: "response"`, `output` items) and the streamed event
 * sequence -> native messages. Pure functions; throws only NormalizeError.
 */
import type { Adapter, NormalizedRecord } from "../types.js";
import { normalizeRecord, type RecordReader } from "../common/record.js";
import { detect } from "./detect.js";
import { normalizeRequest } from "./request.js";
import { normalizeResponse } from "./response.js";
import { createStreamAccumulator, normalizeStream } from "./stream.js";

export { detect, normalizeRequest, normalizeResponse, normalizeStream, createStreamAccumulator };
export { normalizeInput } from "./request.js";
export { normalizeUsage } from "./usage.js";

export const FORMAT = "openai-responses";

const reader: RecordReader = {
  format: FORMAT,
  provider: "openai",
  normalizeRequest,
  normalizeResponse,
  normalizeStream,
  kindOf: (p) => ("output" in p || p.object === "response" ? "response" : "input" in p || "instructions" in p ? "request" : undefined),
  unknown: () => "not an OpenAI Responses request, response or stream: no input, instructions or output",
};

export function normalize(payload: unknown): NormalizedRecord {
  return normalizeRecord(reader, payload);
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
