/**
 * OpenAI usage -> native usage_metadata (DESIGN "Usage"): prompt_tokens is
 * input_tokens with cached tokens included; cached_tokens -> cache_read;
 * reasoning_tokens -> output_token_details.reasoning; audio on both sides.
 * Other numeric details (accepted/rejected prediction tokens) keep their names.
 */
import type { UsageMetadata } from "../../src/format/schema.js";
import { expectObj, fail, optCount, type Loc } from "../common/guards.js";
import { countDetails, otherUsageFields } from "../common/usage.js";

const RENAME_IN: Record<string, string> = { cached_tokens: "cache_read", audio_tokens: "audio" };
const RENAME_OUT: Record<string, string> = { reasoning_tokens: "reasoning", audio_tokens: "audio" };

const K_USAGE = new Set(["prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details", "completion_tokens_details"]);

export function normalizeUsage(raw: unknown, loc: Loc): UsageMetadata | undefined {
  if (raw === undefined || raw === null) return undefined;
  const u = expectObj(raw, loc);
  const input = optCount(u.prompt_tokens, loc, "prompt_tokens") ?? 0;
  const output = optCount(u.completion_tokens, loc, "completion_tokens") ?? 0;
  // Every count below passed optCount; only a total we add up ourselves can leave the safe range.
  const total = optCount(u.total_tokens, loc, "total_tokens") ?? sum(input, output, loc);
  const usage: UsageMetadata = { input_tokens: input, output_tokens: output, total_tokens: total };
  const inD = countDetails(u.prompt_tokens_details, loc, "prompt_tokens_details", RENAME_IN);
  const outD = countDetails(u.completion_tokens_details, loc, "completion_tokens_details", RENAME_OUT);
  if (inD) usage.input_token_details = inD;
  if (outD) usage.output_token_details = outD;
  const extras = otherUsageFields(u, K_USAGE, "keep");
  if (extras) usage.extras = extras;
  return usage;
}

function sum(a: number, b: number, loc: Loc): number {
  const t = a + b;
  if (!Number.isSafeInteger(t))
    fail([...loc, "total_tokens"], `token count ${t} is not a non-negative integer of at most 2^53 - 1`, "int_type");
  return t;
}
