/**
 * Structural recognition of legacy OpenAI completions (`/v1/completions`)
 * payloads. Never throws. Chosen so that no other format's payloads are
 * claimed: a request has `prompt` and none of `messages` / `input` /
 * `contents`; a response or stream chunk has `object: "text_completion"` or
 * choices carrying `text` (chat choices carry `message` or `delta`).
 *
 * A request names no vendor by its shape (`{model, prompt}` is also Ollama's,
 * Bedrock InvokeModel's, Anthropic's legacy text completions'), so it is
 * claimed only with OpenAI evidence: an OpenAI model family or a parameter
 * only OpenAI's completions API takes. Otherwise it is left unclaimed and
 * `normalize` asks for `--format`, as for a chat request without markers.
 */
import { isObj, type Obj } from "../common/guards.js";
import { detector, streamOf, type ChunkProbe, type Recognisers } from "../common/detect.js";
import { modelHint } from "../common/markers.js";

/** Parameters of OpenAI's completions API that the look-alike APIs do not take. */
const OPENAI_KEYS = [
  "suffix",
  "echo",
  "best_of",
  "logit_bias",
  "stream_options",
  "frequency_penalty",
  "presence_penalty",
  "n",
  "seed",
  "logprobs",
];
/** Parameters of the look-alikes: Anthropic legacy, Bedrock Llama / Titan, Ollama. */
const OTHER_KEYS = [
  "max_tokens_to_sample",
  "max_gen_len",
  "textGenerationConfig",
  "inputText",
  "raw",
  "keep_alive",
  "images",
  "template",
  "context",
];

function isTokenList(v: unknown): boolean {
  return Array.isArray(v) && v.length > 0 && typeof v[0] === "number";
}

/** string, string[], number[] or number[][], judged by the first element (normalizing checks them all). */
export function isPromptShape(p: unknown): boolean {
  if (typeof p === "string") return true;
  if (!Array.isArray(p) || p.length === 0) return false;
  const first = p[0];
  return typeof first === "string" || typeof first === "number" || isTokenList(first);
}

export function isRequest(v: unknown): v is Obj {
  if (!isObj(v) || "messages" in v || "input" in v || "contents" in v) return false;
  if (!isPromptShape(v.prompt)) return false;
  for (const k of OTHER_KEYS) if (k in v) return false;
  const hint = modelHint(v.model);
  if (hint.anthropic) return false;
  if (hint.openai) return true;
  for (const k of OPENAI_KEYS) if (k in v) return true;
  return false;
}

function textChoice(c: unknown): boolean {
  return isObj(c) && typeof c.text === "string" && !("message" in c) && !("delta" in c);
}

/** A response or a stream chunk (same shape): marked, or choices holding `text`. */
export function isCompletion(v: unknown): boolean {
  if (!isObj(v)) return false;
  if (v.object === "text_completion") return Array.isArray(v.choices);
  const c = v.choices;
  return Array.isArray(c) && c.length > 0 && textChoice(c[0]);
}

/** Chunks; the usage-only chunk has empty choices, so one real chunk among the first few is required. */
function probeChunk(c: unknown): ChunkProbe {
  if (isCompletion(c)) return "own";
  return isObj(c) && Array.isArray(c.choices) && c.choices.length === 0 ? "neutral" : "other";
}

export const isStream = streamOf(probeChunk);

export const recognisers: Recognisers = {
  isRequest,
  isResponse: isCompletion,
  isStream,
  settledByResponse: (request: unknown) => isObj(request) && !("messages" in request) && isPromptShape(request.prompt),
  pairFirst: "response",
};
export const detect = detector(recognisers);
