/**
 * OpenAI usage -> native usage_metadata (DESIGN "Usage"): prompt_tokens is
 * input_tokens with cached tokens included; cached_tokens -> cache_read;
 * reasoning_tokens -> output_token_details.reasoning; audio on both sides.
 * Other numeric details (accepted/rejected prediction tokens) keep their names.
 */
import type { UsageMetadata } from "../../src/format/schema.js";
import { expectObj, type Loc, put } from "../common/guards.js";
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
/** `renameIn` as code (DetailWriter): chat usage is read for every record. */
function promptDetail(out: Record<string, number>, k: string, n: number): void {
  switch (k) {
    case "cached_tokens":
      out.cache_read = n;
      return;
    case "audio_tokens":
      out.audio = n;
      return;
    default:
      put(out, k, n);
  }
}

/** `renameOut` as code. */
function completionDetail(out: Record<string, number>, k: string, n: number): void {
  switch (k) {
    case "reasoning_tokens":
      out.reasoning = n;
      return;
    case "audio_tokens":
      out.audio = n;
      return;
    default:
      put(out, k, n);
  }
}

// The writers stay off CHAT_FIELDS: the Responses reader spreads it and renames more.
const FIELDS = knownFields({ ...CHAT_FIELDS, writeIn: promptDetail, writeOut: completionDetail });

export function normalizeUsage(raw: unknown, loc: Loc): UsageMetadata | undefined {
  if (raw === undefined || raw === null) return undefined;
  return includedCacheUsage(expectObj(raw, loc), loc, FIELDS);
}
