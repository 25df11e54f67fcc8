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
import { checkedUsage, expectObj, optCount, type Loc, type Obj } from "../common/guards.js";

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
  if (read !== undefined || written !== undefined) {
    usage.input_token_details = {};
    if (read !== undefined) usage.input_token_details.cache_read = read;
    if (written !== undefined) usage.input_token_details.cache_creation = written;
  }
  let extras: Obj | undefined;
  for (const k in u) if (!K_USAGE.has(k) && u[k] !== undefined && u[k] !== null) (extras ??= {})[k] = u[k];
  if (vendorTotal !== undefined && vendorTotal !== usage.total_tokens) (extras ??= {}).totalTokens = vendorTotal;
  if (extras) usage.extras = extras;
  return checkedUsage(usage, loc);
}
