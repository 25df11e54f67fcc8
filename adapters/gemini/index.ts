/**
 * Google Gemini adapter (`generateContent` / `streamGenerateContent`, the REST
 * API and the `@google/genai` SDK's parameters and responses) -> native
 * messages. Pure functions; throws only NormalizeError.
 */
import type { Adapter } from "../types.js";
import { describe } from "../common/guards.js";
import { recordAdapter } from "../common/record.js";
import { detect } from "./detect.js";
import { normalizeRequest } from "./request.js";
import { normalizeResponse } from "./response.js";
import { createStreamAccumulator, normalizeStream } from "./stream.js";

export { detect } from "./detect.js";
export { normalizeRequest } from "./request.js";
export { normalizeResponse } from "./response.js";
export { createStreamAccumulator, normalizeStream } from "./stream.js";
export { normalizeUsage } from "./usage.js";

export const FORMAT = "gemini";

export const gemini: Adapter = recordAdapter(
  {
    format: FORMAT,
    provider: "google",
    kindOf: (p) =>
      "contents" in p
        ? "request"
        : "candidates" in p || "usageMetadata" in p || "promptFeedback" in p || "usage_metadata" in p || "prompt_feedback" in p
          ? "response"
          : undefined,
    unknown: (p) => `not a Gemini request, response or stream: ${describe(p)} without contents or candidates`,
  },
  { detect, normalizeRequest, normalizeResponse, normalizeStream, createStreamAccumulator },
);

/** A request, a response, a stream, or {request, response}: the DESIGN.md output record. */
export const normalize = gemini.normalize;

export default gemini;
