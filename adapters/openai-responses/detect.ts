/**
 * Structural recognition of Responses API payloads. Never throws. Chosen so
 * that chat-completions payloads are never claimed: a Responses request has
 * `input` or `instructions` and no `messages`; a response has
 * `object: "response"` and an `output` list; stream events are typed
 * `response.*`. An embeddings request (`{model, input}` too) is told apart by
 * its embedding model or its embedding-only parameters (a moderations request
 * by its model).
 */
import { isObj } from "../common/guards.js";
import { detector, streamOf, type ChunkProbe, type Recognisers } from "../common/detect.js";

const EMBEDDING_KEYS = ["encoding_format", "dimensions"];

function isItem(v: unknown): boolean {
  return isObj(v) && (typeof v.type === "string" || typeof v.role === "string");
}

export function isRequest(v: unknown): boolean {
  if (!isObj(v) || "messages" in v || "contents" in v || "prompt" in v) return false;
  if (EMBEDDING_KEYS.some((k) => k in v)) return false;
  // Embeddings and moderations requests are `{model, input}` too.
  if (typeof v.model === "string" && /embed|moderation/i.test(v.model)) return false;
  const input = v.input;
  const hasInstructions = typeof v.instructions === "string";
  if (Array.isArray(input)) return input.every(isItem) && (input.length > 0 || hasInstructions || typeof v.model === "string");
  if (typeof input === "string") return typeof v.model === "string" || hasInstructions;
  return input === undefined && hasInstructions && typeof v.model === "string";
}

export function isResponse(v: unknown): boolean {
  return isObj(v) && v.object === "response" && Array.isArray(v.output);
}

/** An error event comes in any stream; the `response.*` events name this one. */
function probeEvent(v: unknown): ChunkProbe {
  if (!isObj(v) || typeof v.type !== "string") return "other";
  return v.type.startsWith("response.") ? "own" : v.type === "error" ? "neutral" : "other";
}

export const isStream = streamOf(probeEvent);

export const recognisers: Recognisers = { isRequest, isResponse, isStream, pairFirst: "response" };
export const detect = detector(recognisers);
