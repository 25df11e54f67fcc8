/**
 * OpenAI legacy completions adapter (`/v1/completions`: `prompt` in, choices
 * of `text` out): request bodies, `text_completion` responses and streamed
 * chunks -> native messages. Pure functions; throws only NormalizeError.
 * The mapping is described in request.ts and reply.ts.
 */
import type { Adapter } from "../types.js";
import { recordAdapter } from "../common/record.js";
import { detect } from "./detect.js";
import { normalizeRequest } from "./request.js";
import { normalizeResponse } from "./response.js";
import { createStreamAccumulator, normalizeStream } from "./stream.js";

export { detect } from "./detect.js";
export { normalizeRequest, promptMessages } from "./request.js";
export { normalizeResponse } from "./response.js";
export { createStreamAccumulator, normalizeStream } from "./stream.js";

export const FORMAT = "openai-completions";

export const openaiCompletions: Adapter = recordAdapter(
  {
    format: FORMAT,
    provider: "openai",
    kindOf: (p) => ("choices" in p ? "response" : "prompt" in p ? "request" : undefined),
    unknown: () => "not an OpenAI completions request, response or stream: no prompt or choices",
  },
  { detect, normalizeRequest, normalizeResponse, normalizeStream, createStreamAccumulator },
);

/** A request, a response, a stream, or {request, response}: the DESIGN.md output record. */
export const normalize = openaiCompletions.normalize;

export default openaiCompletions;
