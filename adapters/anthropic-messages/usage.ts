/**
 * Anthropic usage -> native usage_metadata (DESIGN "Usage"): Anthropic's
 * input_tokens excludes cached tokens, so the native input_tokens is
 * input_tokens + cache_read_input_tokens + cache_creation_input_tokens, with
 * the two cache counts as details. Everything else (cache_creation breakdown,
 * server_tool_use, service_tier) is kept in extras.
 */
import type { UsageMetadata } from "../../src/format/schema.js";
import { expectObj, optCount, type Loc, checkedUsage } from "../common/guards.js";
import { cacheDetails, otherUsageFields } from "../common/usage.js";

const K_USAGE = new Set(["input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"]);

export function normalizeUsage(raw: unknown, loc: Loc): UsageMetadata | undefined {
  if (raw === undefined || raw === null) return undefined;
  const u = expectObj(raw, loc);
  const base = optCount(u.input_tokens, loc, "input_tokens") ?? 0;
  const read = optCount(u.cache_read_input_tokens, loc, "cache_read_input_tokens");
  const created = optCount(u.cache_creation_input_tokens, loc, "cache_creation_input_tokens");
  const output = optCount(u.output_tokens, loc, "output_tokens") ?? 0;
  const input = base + (read ?? 0) + (created ?? 0);
  const usage: UsageMetadata = { input_tokens: input, output_tokens: output, total_tokens: input + output };
  const cache = cacheDetails(read, created);
  if (cache) usage.input_token_details = cache;
  const extras = otherUsageFields(u, K_USAGE, "drop");
  if (extras) usage.extras = extras;
  return checkedUsage(usage, loc);
}
