/** Structural recognition of OpenAI chat-completions payloads. Never throws. */
import { isObj } from "../common/guards.js";
import { detector, type Recognisers } from "../common/detect.js";
import { looksLikeChatRequest, replyEvidence, requestEvidence } from "../common/markers.js";
import { replyMessage } from "../common/reply.js";

function isResponse(v: unknown): boolean {
  if (!isObj(v)) return false;
  if (v.object === "chat.completion") return true;
  // SPEC §2.6's native reply shape `{choices:[{message}], usage_metadata}` belongs to the native adapter.
  if ("usage_metadata" in v && !("usage" in v)) return false;
  const c = v.choices;
  // Without the `object` marker, an Anthropic message inside `{choices}` is Anthropic's.
  return Array.isArray(c) && c.length > 0 && isObj(c[0]) && isObj(c[0].message) && !replyEvidence(c[0].message).anthropic;
}

/** SPEC §2.6's `{message}`, bare `{role, content}` and `[role, content]` replies holding an OpenAI message. */
function isReply(v: unknown): boolean {
  const m = replyMessage(v);
  if (!m) return false;
  const ev = replyEvidence(m);
  return ev.openai && !ev.anthropic;
}

function isChunk(v: unknown): boolean {
  if (!isObj(v)) return false;
  if (v.object === "chat.completion.chunk") return true;
  const c = v.choices;
  return Array.isArray(c) && c.length > 0 && isObj(c[0]) && isObj(c[0].delta);
}

/**
 * A stream: chunks (usage-only chunks have empty choices, so one real chunk is
 * looked for). The first few elements identify the format; normalizing the
 * stream checks every chunk and names a bad one by its position.
 */
const STREAM_PROBE = 4;
function isStream(v: unknown[]): boolean {
  if (v.length === 0) return false;
  let sawChunk = false;
  let allMarked = true;
  const n = Math.min(v.length, STREAM_PROBE);
  for (let i = 0; i < n; i++) {
    const c = v[i];
    if (!isObj(c)) return false;
    const marked = c.object === "chat.completion.chunk";
    if (isChunk(c)) sawChunk = true;
    else if (!(marked || (Array.isArray(c.choices) && c.choices.length === 0))) return false;
    allMarked &&= marked;
  }
  return sawChunk || allMarked;
}

function isRequest(v: unknown): boolean {
  if (!looksLikeChatRequest(v)) return false;
  const ev = requestEvidence(v);
  return ev.openai && !ev.anthropic;
}

export const recognisers: Recognisers = {
  isRequest,
  isResponse,
  isStream,
  isReply,
  settledByResponse: (request) => looksLikeChatRequest(request) && !requestEvidence(request).anthropic,
  pairFirst: "response",
};
export const detect = detector(recognisers);
