/**
 * Google Gemini adapter (`generateContent` / `streamGenerateContent`, the REST
 * API and the `@google/genai` SDK's parameters and responses) -> native
 * messages. Pure functions; throws only NormalizeError.
 */
import type { Adapter } from "../types.js";
import { describe } from "../common/guards.js";
import { recordAdapter, type RecordReader } from "../common/record.js";
import { detect } from "./detect.js";
import { normalizeRequest } from "./request.js";
import { normalizeResponse } from "./response.js";
import { createStreamAccumulator, normalizeStream } from "./stream.js";

export { detect, normalizeRequest, normalizeResponse, normalizeStream, createStreamAccumulator };
export { normalizeUsage } from "./usage.js";

export const FORMAT = "gemini";

const reader: RecordReader = {
  format: FORMAT,
  provider: "google",
  normalizeRequest,
  normalizeResponse,
  normalizeStream,
  kindOf: (p) =>
    "contents" in p
      ? "request"
      : "candidates" in p || "usageMetadata" in p || "promptFeedback" in p || "usage_metadata" in p || "prompt_feedback" in p
        ? "response"
        : undefined,
  unknown: (p) => `not a Gemini request, response or stream: ${describe(p)} without contents or candidates`,
};

export const gemini: Adapter = recordAdapter(reader, { detect, createStreamAccumulator });

/** A request, a response, a stream, or {request, response}: the DESIGN.md output record. */
export const normalize = gemini.normalize;

export default gemini;
