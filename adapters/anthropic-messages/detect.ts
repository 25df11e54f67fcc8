/** Structural recognition of Anthropic Messages payloads. Never throws. */
import { isObj } from "../common/guards.js";
import { detector, streamOf, type ChunkProbe, type Recognisers } from "../common/detect.js";
import { chatClaims } from "../common/chat-claims.js";

const EVENT_TYPES = new Set([
  "message_start",
  "content_block_start",
  "content_block_delta",
  "content_block_stop",
  "message_delta",
  "message_stop",
  "ping",
  "error",
]);

function isResponse(v: unknown): boolean {
  return isObj(v) && v.type === "message" && v.role === "assistant" && Array.isArray(v.content);
}

/** Pings and errors come in any Messages stream; the other events name it. */
function probeEvent(e: unknown): ChunkProbe {
  if (!isObj(e) || typeof e.type !== "string" || !EVENT_TYPES.has(e.type)) return "other";
  return e.type === "ping" || e.type === "error" ? "neutral" : "own";
}

// SPEC §2.6's other reply shapes claimed here hold an Anthropic message (tool_use, thinking, ... blocks).
export const recognisers: Recognisers = { ...chatClaims("anthropic"), isResponse, isStream: streamOf(probeEvent), pairFirst: "request" };
export const detect = detector(recognisers);
