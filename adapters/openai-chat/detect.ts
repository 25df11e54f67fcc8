/** Structural recognition of OpenAI chat-completions payloads. Never throws. */
import { isObj } from "../common/guards.js";
import { detector, streamOf, type ChunkProbe, type Recognisers } from "../common/detect.js";
import { chatClaims } from "../common/chat-claims.js";
import { replyEvidence } from "../common/markers.js";

function isResponse(v: unknown): boolean {
  if (!isObj(v)) return false;
  if (v.object === "chat.completion") return true;
  // SPEC §2.6's native reply shape `{choices:[{message}], usage_metadata}` belongs to the native adapter.
  if ("usage_metadata" in v && !("usage" in v)) return false;
  const c = v.choices;
  // Without the `object` marker, an Anthropic message inside `{choices}` is Anthropic's.
  return Array.isArray(c) && c.length > 0 && isObj(c[0]) && isObj(c[0].message) && !replyEvidence(c[0].message).anthropic;
}

function isChunk(v: unknown): boolean {
  if (!isObj(v)) return false;
  if (v.object === "chat.completion.chunk") return true;
  const c = v.choices;
  return Array.isArray(c) && c.length > 0 && isObj(c[0]) && isObj(c[0].delta);
}

/** Usage-only chunks have empty choices, so a stream needs one real chunk among the first. */
function probeChunk(c: unknown): ChunkProbe {
  if (isChunk(c)) return "own";
  return isObj(c) && Array.isArray(c.choices) && c.choices.length === 0 ? "neutral" : "other";
}

// SPEC §2.6's `{message}`, bare `{role, content}` and `[role, content]` replies claimed here hold an OpenAI message.
export const recognisers: Recognisers = { ...chatClaims("openai"), isResponse, isStream: streamOf(probeChunk), pairFirst: "response" };
export const detect = detector(recognisers);
