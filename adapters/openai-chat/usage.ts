/**
 * OpenAI usage -> native usage_metadata (DESIGN "Usage"): prompt_tokens is
 * input_tokens with cached tokens included; cached_tokens -> cache_read;
 * reasoning_tokens -> output_token_details.reasoning; audio on both sides.
 * Other numeric details (accepted/rejected prediction tokens) keep their names.
 */
import type { UsageMetadata } from "../../src/format/schema.js";
import { expectObj, type Loc } from "../common/guards.js";
import { includedCacheUsage, knownFields, type IncludedCacheFields } from "../common/usage.js";

/** Also the Responses API's fields, under its own names (openai-responses/usage.ts). */
export const CHAT_FIELDS: IncludedCacheFields = {
  input: "prompt_tokens",
  output: "completion_tokens",
  total: "total_tokens",
  inputDetails: "prompt_tokens_details",
  outputDetails: "completion_tokens_details",
  renameIn: { cached_tokens: "cache_read", audio_tokens: "audio" },
  renameOut: { reasoning_tokens: "reasoning", audio_tokens: "audio" },
  badDetails: "skip",
  checkSum: true,
  nulls: "keep",
};
const FIELDS = knownFields(CHAT_FIELDS);

export function normalizeUsage(raw: unknown, loc: Loc): UsageMetadata | undefined {
  if (raw === undefined || raw === null) return undefined;
  return includedCacheUsage(expectObj(raw, loc), loc, FIELDS);
}
