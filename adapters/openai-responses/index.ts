/**
 * OpenAI Responses API adapter: request bodies (`instructions`, `input`),
 * responses (`object: "response"`, `output` items) and the streamed event
 * sequence -> native messages. Pure functions; throws only NormalizeError.
 */
import type { Adapter } from "../types.js";
import { recordAdapter } from "../common/record.js";
import { detect } from "./detect.js";
import { normalizeRequest } from "./request.js";
import { normalizeResponse } from "./response.js";
import { createStreamAccumulator, normalizeStream } from "./stream.js";

export { detect } from "./detect.js";
export { normalizeRequest, normalizeInput } from "./request.js";
export { normalizeResponse } from "./response.js";
export { createStreamAccumulator, normalizeStream } from "./stream.js";
export { normalizeUsage } from "./usage.js";

export const FORMAT = "openai-responses";

export const openaiResponses: Adapter = recordAdapter(
  {
    format: FORMAT,
    provider: "openai",
    kindOf: (p) => ("output" in p || p.object === "response" ? "response" : "input" in p || "instructions" in p ? "request" : undefined),
    unknown: () => "not an OpenAI Responses request, response or stream: no input, instructions or output",
  },
  { detect, normalizeRequest, normalizeResponse, normalizeStream, createStreamAccumulator },
);

/** A request, a response, a stream, or {request, response}: the DESIGN.md output record. */
export const normalize = openaiResponses.normalize;

export default openaiResponses;
