/**
 * Converse `TokenUsage` -> native usage_metadata (DESIGN "Usage"). Like
 * Anthropic's, Bedrock's `inputTokens` counts only the tokens read fresh: cache
 * reads and writes are reported beside it (`cacheReadInputTokens`,
 * `cacheWriteInputTokens`). Our rule is that input_tokens include cached
 * tokens, so input_tokens = inputTokens + cacheReadInputTokens +
 * cacheWriteInputTokens, with cache_read / cache_creation as details, and
 * total_tokens = input_tokens + output_tokens. Bedrock's own `totalTokens` is
 * kept in extras only when it says something else; `cacheDetails` (writes by
 * TTL) and any other field are kept in extras.
 */
import type { UsageMetadata } from "../../src/format/schema.js";
import { checkedUsage, expectObj, optCount, type Loc } from "../common/guards.js";
import { knownFields, separateCacheUsage, type SeparateCacheFields } from "../common/usage.js";

// Bedrock's own total is read apart: kept in extras only when it says something else.
const FIELDS = knownFields<SeparateCacheFields>(
  { input: "inputTokens", output: "outputTokens", cacheRead: "cacheReadInputTokens", cacheWrite: "cacheWriteInputTokens" },
  ["totalTokens"],
);

export function normalizeUsage(raw: unknown, loc: Loc): UsageMetadata | undefined {
  if (raw === undefined || raw === null) return undefined;
  const u = expectObj(raw, loc);
  const usage = separateCacheUsage(u, loc, FIELDS);
  const vendorTotal = optCount(u.totalTokens, loc, "totalTokens");
  if (vendorTotal !== undefined && vendorTotal !== usage.total_tokens) (usage.extras ??= {}).totalTokens = vendorTotal;
  return checkedUsage(usage, loc);
}
