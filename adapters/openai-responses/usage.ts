/**
 * Responses API usage -> native usage_metadata (DESIGN "Usage"): `input_tokens`
 * already include cached tokens; `cached_tokens` -> cache_read,
 * `cache_write_tokens` -> cache_creation, `reasoning_tokens` -> reasoning.
 * Other numeric details keep their names.
 */
import type { UsageMetadata } from "../../src/format/schema.js";
import { expectObj, type Loc } from "../common/guards.js";
import { includedCacheUsage, knownFields, type IncludedCacheFields } from "../common/usage.js";
import { CHAT_FIELDS } from "../openai-chat/usage.js";

const FIELDS = knownFields<IncludedCacheFields>({
  ...CHAT_FIELDS,
  input: "input_tokens",
  output: "output_tokens",
  inputDetails: "input_tokens_details",
  outputDetails: "output_tokens_details",
  renameIn: { ...CHAT_FIELDS.renameIn, cache_write_tokens: "cache_creation" },
  checkSum: false,
});

export function normalizeUsage(raw: unknown, loc: Loc): UsageMetadata | undefined {
  if (raw === undefined || raw === null) return undefined;
  return includedCacheUsage(expectObj(raw, loc), loc, FIELDS);
}
