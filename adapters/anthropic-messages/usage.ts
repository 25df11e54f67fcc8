/**
 * Anthropic usage -> native usage_metadata (DESIGN "Usage"): Anthropic's
 * input_tokens excludes cached tokens, so the native input_tokens is
 * input_tokens + cache_read_input_tokens + cache_creation_input_tokens, with
 * the two cache counts as details. Everything else (cache_creation breakdown,
 * server_tool_use, service_tier) is kept in extras.
 */
import type { UsageMetadata } from "../../src/format/schema.js";
import { expectObj, type Loc, checkedUsage } from "../common/guards.js";
import { knownFields, separateCacheUsage, type SeparateCacheFields } from "../common/usage.js";

const FIELDS = knownFields<SeparateCacheFields>({
  input: "input_tokens",
  output: "output_tokens",
  cacheRead: "cache_read_input_tokens",
  cacheWrite: "cache_creation_input_tokens",
});

export function normalizeUsage(raw: unknown, loc: Loc): UsageMetadata | undefined {
  if (raw === undefined || raw === null) return undefined;
  return checkedUsage(separateCacheUsage(expectObj(raw, loc), loc, FIELDS), loc);
}
