/**
 * OpenAI chat-completions adapter: request bodies, responses and streamed chunks
 * -> native messages. Pure functions; throws only NormalizeError.
 */
import type { Adapter } from "../types.js";
import { isRolePair } from "../common/reply.js";
import { recordAdapter } from "../common/record.js";
import { detect } from "./detect.js";
import { normalizeRequest } from "./request.js";
import { normalizeResponse } from "./response.js";
import { createStreamAccumulator, normalizeStream } from "./stream.js";

export { detect } from "./detect.js";
export { normalizeRequest, normalizeMessages } from "./request.js";
export { normalizeResponse } from "./response.js";
export { createStreamAccumulator, normalizeStream } from "./stream.js";
export { normalizeUsage } from "./usage.js";

export const FORMAT = "openai-chat";

export const openaiChat: Adapter = recordAdapter(
  {
    format: FORMAT,
    provider: "openai",
    // SPEC §2.6's `[role, content]` reply is an array too; anything else in an array is a stream.
    isReplyArray: isRolePair,
    kindOf: (p) => ("messages" in p ? "request" : "choices" in p || "message" in p || "role" in p ? "response" : undefined),
    unknown: () => "not an OpenAI chat-completions request, response or stream: no messages, choices, message or role",
  },
  { detect, normalizeRequest, normalizeResponse, normalizeStream, createStreamAccumulator },
);

/** A request, a response, a stream, or {request, response}: the DESIGN.md output record. */
export const normalize = openaiChat.normalize;

export default openaiChat;
