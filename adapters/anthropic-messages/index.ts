/**
 * Anthropic Messages adapter: request bodies, `message` responses and stream
 * events -> native messages. Pure functions; throws only NormalizeError.
 */
import type { Adapter } from "../types.js";
import { describe } from "../common/guards.js";
import { isRolePair } from "../common/reply.js";
import { recordAdapter } from "../common/record.js";
import { detect } from "./detect.js";
import { normalizeRequest } from "./request.js";
import { normalizeResponse } from "./response.js";
import { createStreamAccumulator, normalizeStream } from "./stream.js";

export { blockToNative } from "./blocks.js";
export { detect } from "./detect.js";
export { normalizeRequest, normalizeMessages } from "./request.js";
export { normalizeResponse } from "./response.js";
export { createStreamAccumulator, normalizeStream } from "./stream.js";
export { normalizeUsage } from "./usage.js";

export const FORMAT = "anthropic-messages";

export const anthropicMessages: Adapter = recordAdapter(
  {
    format: FORMAT,
    provider: "anthropic",
    // SPEC §2.6's `[role, content]` reply is an array too; anything else in an array is a stream.
    isReplyArray: isRolePair,
    kindOf: (p) =>
      "messages" in p ? "request" : p.type === "message" || "choices" in p || "message" in p || "role" in p ? "response" : undefined,
    unknown: (p) => `not an Anthropic Messages request, response or stream: ${describe(p)} without messages, role or type "message"`,
  },
  { detect, normalizeRequest, normalizeResponse, normalizeStream, createStreamAccumulator },
);

/** A request, a response, a stream, or {request, response}: the DESIGN.md output record. */
export const normalize = anthropicMessages.normalize;

export default anthropicMessages;
