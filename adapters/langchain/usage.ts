/**
 * LangChain usage -> native usage_metadata. An AI message's `usage_metadata` is
 * already the native shape (LangChain's names are the native ones: input,
 * output and total tokens, cache_read / cache_creation / reasoning details), so
 * it is kept as it is, its counts checked. When a reply carries none, the
 * `llm_output` beside the generations may: OpenAI's `token_usage`, LangChain.js's
 * camelCase `tokenUsage`, or Anthropic's `usage`, each read by its own rule.
 */
import type { UsageMetadata } from "../../src/format/schema.js";
import { checkedUsage, expectObj, isObj, optCount, type Loc, type Obj } from "../common/guards.js";
import { includedCacheUsage, knownFields, type IncludedCacheFields } from "../common/usage.js";
import { normalizeUsage as openaiUsage } from "../openai-chat/usage.js";
import { normalizeUsage as anthropicUsage } from "../anthropic-messages/usage.js";

const FIELDS = knownFields<IncludedCacheFields>({
  input: "input_tokens",
  output: "output_tokens",
  total: "total_tokens",
  inputDetails: "input_token_details",
  outputDetails: "output_token_details",
  // Details keep their names: the native schema types the known ones and keeps the rest.
  renameIn: {},
  renameOut: {},
  badDetails: "reject",
  checkSum: false,
  nulls: "drop",
});

/** An AI message's `usage_metadata`, as it is; fields beyond LangChain's go to `extras`. */
export function messageUsage(raw: unknown, loc: Loc): UsageMetadata | undefined {
  if (raw === undefined || raw === null) return undefined;
  return checkedUsage(includedCacheUsage(expectObj(raw, loc), loc, FIELDS), loc);
}

/** LangChain.js's `tokenUsage` ({promptTokens, completionTokens, totalTokens}) in native names. */
function camelUsage(u: Obj, loc: Loc): UsageMetadata {
  const input = optCount(u.promptTokens, loc, "promptTokens") ?? 0;
  const output = optCount(u.completionTokens, loc, "completionTokens") ?? 0;
  const total = optCount(u.totalTokens, loc, "totalTokens") ?? input + output;
  return checkedUsage({ input_tokens: input, output_tokens: output, total_tokens: total }, loc);
}

/** Usage from an `llm_output` / `llmOutput` object, when it reports any. */
export function llmOutputUsage(llmOutput: Obj, loc: Loc): UsageMetadata | undefined {
  const tu = llmOutput.token_usage;
  if (isObj(tu)) return "input_tokens" in tu ? messageUsage(tu, [...loc, "token_usage"]) : openaiUsage(tu, [...loc, "token_usage"]);
  if (isObj(llmOutput.tokenUsage)) return camelUsage(llmOutput.tokenUsage, [...loc, "tokenUsage"]);
  if (isObj(llmOutput.usage) && "input_tokens" in llmOutput.usage) return anthropicUsage(llmOutput.usage, [...loc, "usage"]);
  return undefined;
}
