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
import { cacheDetails, otherUsageFields } from "../common/usage.js";

const K_USAGE = new Set(["inputTokens", "outputTokens", "totalTokens", "cacheReadInputTokens", "cacheWriteInputTokens"]);

export function normalizeUsage(raw: unknown, loc: Loc): UsageMetadata | undefined {
  if (raw === undefined || raw === null) return undefined;
  const u = expectObj(raw, loc);
  const base = optCount(u.inputTokens, loc, "inputTokens") ?? 0;
  const read = optCount(u.cacheReadInputTokens, loc, "cacheReadInputTokens");
  const written = optCount(u.cacheWriteInputTokens, loc, "cacheWriteInputTokens");
  const output = optCount(u.outputTokens, loc, "outputTokens") ?? 0;
  const vendorTotal = optCount(u.totalTokens, loc, "totalTokens");
  const input = base + (read ?? 0) + (written ?? 0);
  const usage: UsageMetadata = { input_tokens: input, output_tokens: output, total_tokens: input + output };
  const cache = cacheDetails(read, written);
  if (cache) usage.input_token_details = cache;
  let extras = otherUsageFields(u, K_USAGE, "drop");
  if (vendorTotal !== undefined && vendorTotal !== usage.total_tokens) (extras ??= {}).totalTokens = vendorTotal;
  if (extras) usage.extras = extras;
  return checkedUsage(usage, loc);
}
