/**
 * Structural recognition of Gemini generateContent payloads. Never throws.
 * No other adapter's shapes overlap: a request has `contents` (never
 * `messages` or `input`), a response has a `candidates` array (or, when the
 * prompt was blocked, `promptFeedback` with `usageMetadata`), and a stream is
 * an array of such responses. The chat adapters need `messages` / `choices`,
 * Responses needs `input` / `output`, and Anthropic needs typed events.
 */
import { isObj } from "../common/guards.js";
import { detector, streamOf, type Recognisers } from "../common/detect.js";

// Both JSON spellings the API accepts (spelling.ts): lowerCamelCase and the proto names.
const PART_KEYS = [
  "text",
  "inlineData",
  "fileData",
  "functionCall",
  "functionResponse",
  "executableCode",
  "codeExecutionResult",
  "thought",
  "toolCall",
  "toolResponse",
  "inline_data",
  "file_data",
  "function_call",
  "function_response",
  "executable_code",
  "code_execution_result",
  "tool_call",
  "tool_response",
];

function isPartLike(v: unknown): boolean {
  if (typeof v === "string") return true;
  if (!isObj(v)) return false;
  for (const k of PART_KEYS) if (k in v) return true;
  return false;
}

function isContentLike(v: unknown): boolean {
  return isObj(v) && (Array.isArray(v.parts) || typeof v.role === "string");
}

export function isRequest(v: unknown): boolean {
  if (!isObj(v) || "messages" in v || "input" in v || "prompt" in v) return false;
  const c = v.contents;
  if (typeof c === "string") return true;
  if (Array.isArray(c)) {
    // The first few elements decide; normalizing checks them all.
    const n = Math.min(c.length, 4);
    for (let i = 0; i < n; i++) if (!isContentLike(c[i]) && !isPartLike(c[i])) return false;
    return c.length > 0 || typeof v.model === "string" || "generationConfig" in v || "generation_config" in v || "config" in v;
  }
  return isContentLike(c) || isPartLike(c);
}

export function isResponse(v: unknown): boolean {
  if (!isObj(v) || "choices" in v || "output" in v || "type" in v || "object" in v) return false;
  if (Array.isArray(v.candidates)) return true;
  const usage = v.usageMetadata ?? v.usage_metadata;
  return (
    isObj(usage) &&
    (isObj(v.promptFeedback ?? v.prompt_feedback) ||
      typeof (v.modelVersion ?? v.model_version) === "string" ||
      typeof (v.responseId ?? v.response_id) === "string")
  );
}

export const isStream = streamOf((c) => (isResponse(c) ? "own" : "other"));

export const recognisers: Recognisers = { isRequest, isResponse, isStream, pairFirst: "request" };
export const detect = detector(recognisers);
