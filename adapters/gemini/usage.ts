/**
 * Gemini `usageMetadata` -> native usage_metadata (DESIGN "Usage"):
 * - `input_tokens` = promptTokenCount + toolUsePromptTokenCount. The prompt
 *   count already includes cached content, so `cachedContentTokenCount` is the
 *   `cache_read` detail, not an addend; tool-use prompt tokens (results of tools
 *   the server ran, fed back to the model) are input the model read, detail `tool_use`.
 * - `output_tokens` = candidatesTokenCount + thoughtsTokenCount: Gemini counts
 *   thinking apart from the candidates, and both are billed as output;
 *   `thoughtsTokenCount` is the `reasoning` detail.
 * - `total_tokens` = totalTokenCount (the vendor's sum of the same four), else our sum.
 * The per-modality breakdowns, traffic type and the rest stay in extras.
 */
import type { UsageMetadata } from "../../src/format/schema.js";
import { checkedUsage, expectObj, optCount, type Loc } from "../common/guards.js";
import { otherUsageFields } from "../common/usage.js";

const K_USAGE: readonly string[] = [
  "promptTokenCount",
  "toolUsePromptTokenCount",
  "cachedContentTokenCount",
  "candidatesTokenCount",
  "thoughtsTokenCount",
  "totalTokenCount",
];

export function normalizeUsage(raw: unknown, loc: Loc): UsageMetadata | undefined {
  if (raw === undefined || raw === null) return undefined;
  const u = expectObj(raw, loc);
  const prompt = optCount(u.promptTokenCount, loc, "promptTokenCount") ?? 0;
  const toolUse = optCount(u.toolUsePromptTokenCount, loc, "toolUsePromptTokenCount");
  const cached = optCount(u.cachedContentTokenCount, loc, "cachedContentTokenCount");
  const candidates = optCount(u.candidatesTokenCount, loc, "candidatesTokenCount") ?? 0;
  const thoughts = optCount(u.thoughtsTokenCount, loc, "thoughtsTokenCount");
  const input = prompt + (toolUse ?? 0);
  const output = candidates + (thoughts ?? 0);
  const total = optCount(u.totalTokenCount, loc, "totalTokenCount") ?? input + output;
  const usage: UsageMetadata = { input_tokens: input, output_tokens: output, total_tokens: total };
  if (cached !== undefined || toolUse !== undefined) {
    usage.input_token_details = {};
    if (cached !== undefined) usage.input_token_details.cache_read = cached;
    if (toolUse !== undefined) usage.input_token_details.tool_use = toolUse;
  }
  if (thoughts !== undefined) usage.output_token_details = { reasoning: thoughts };
  const extras = otherUsageFields(u, K_USAGE, "drop");
  if (extras) usage.extras = extras;
  return checkedUsage(usage, loc);
}
