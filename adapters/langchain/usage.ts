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
import { normalizeUsage as openaiUsage } from "../openai-chat/usage.js";
import { normalizeUsage as anthropicUsage } from "../anthropic-messages/usage.js";

const NATIVE_KEYS = new Set(["input_tokens", "output_tokens", "total_tokens", "input_token_details", "output_token_details"]);

/** Details objects: counts under any name (the native schema types the known ones and keeps the rest). */
function details(v: unknown, loc: Loc, key: string): Obj | undefined {
  if (v === undefined || v === null) return undefined;
  const d = expectObj(v, loc, key);
  let out: Obj | undefined;
  for (const k in d) {
    const n = optCount(d[k], loc, key, k);
    if (n !== undefined) (out ??= {})[k] = n;
  }
  return out;
}

/** An AI message's `usage_metadata`, as it is; fields beyond LangChain's go to `extras`. */
export function messageUsage(raw: unknown, loc: Loc): UsageMetadata | undefined {
  if (raw === undefined || raw === null) return undefined;
  const u = expectObj(raw, loc);
  const input = optCount(u.input_tokens, loc, "input_tokens") ?? 0;
  const output = optCount(u.output_tokens, loc, "output_tokens") ?? 0;
  const total = optCount(u.total_tokens, loc, "total_tokens") ?? input + output;
  const usage: UsageMetadata = { input_tokens: input, output_tokens: output, total_tokens: total };
  const inD = details(u.input_token_details, loc, "input_token_details");
  const outD = details(u.output_token_details, loc, "output_token_details");
  if (inD) usage.input_token_details = inD;
  if (outD) usage.output_token_details = outD;
  let extras: Obj | undefined;
  for (const k in u) if (!NATIVE_KEYS.has(k) && u[k] !== undefined && u[k] !== null) (extras ??= {})[k] = u[k];
  if (extras) usage.extras = extras;
  return checkedUsage(usage, loc);
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
