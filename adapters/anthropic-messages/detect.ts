/** Structural recognition of Anthropic Messages payloads. Never throws. */
import { isObj } from "../common/guards.js";
import { detector, type Recognisers } from "../common/detect.js";
import { looksLikeChatRequest, replyEvidence, requestEvidence } from "../common/markers.js";
import { replyMessage } from "../common/reply.js";

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

/** SPEC §2.6's other reply shapes holding an Anthropic message (tool_use, thinking, ... blocks). */
function isReply(v: unknown): boolean {
  const m = replyMessage(v);
  if (!m) return false;
  const ev = replyEvidence(m);
  return ev.anthropic && !ev.openai;
}

function isRequest(v: unknown): boolean {
  if (!looksLikeChatRequest(v)) return false;
  const ev = requestEvidence(v);
  return ev.anthropic && !ev.openai;
}

/** The first few events identify a stream; normalizing it checks every event. */
const STREAM_PROBE = 4;
function isStream(v: unknown[]): boolean {
  if (v.length === 0) return false;
  let sawMessageEvent = false;
  const n = Math.min(v.length, STREAM_PROBE);
  for (let i = 0; i < n; i++) {
    const e = v[i];
    if (!isObj(e) || typeof e.type !== "string" || !EVENT_TYPES.has(e.type)) return false;
    if (e.type !== "ping" && e.type !== "error") sawMessageEvent = true;
  }
  return sawMessageEvent;
}

export const recognisers: Recognisers = {
  isRequest,
  isResponse,
  isStream,
  isReply,
  settledByResponse: (request) => looksLikeChatRequest(request) && !requestEvidence(request).openai,
  pairFirst: "request",
};
export const detect = detector(recognisers);
