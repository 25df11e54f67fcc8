/**
 * Responses API usage -> native usage_metadata (DESIGN "Usage"): `input_tokens`
 * already include cached tokens; `cached_tokens` -> cache_read,
 * `cache_write_tokens` -> cache_creation, `reasoning_tokens` -> reasoning.
 * Other numeric details keep their names.
 */
import type { UsageMetadata } from "../../src/format/schema.js";
import { expectObj, optCount, type Loc } from "../common/guards.js";
import { countDetails, otherUsageFields } from "../common/usage.js";

const RENAME_IN: Record<string, string> = { cached_tokens: "cache_read", cache_write_tokens: "cache_creation", audio_tokens: "audio" };
const RENAME_OUT: Record<string, string> = { reasoning_tokens: "reasoning", audio_tokens: "audio" };
const K_USAGE = new Set(["input_tokens", "output_tokens", "total_tokens", "input_tokens_details", "output_tokens_details"]);

export function normalizeUsage(raw: unknown, loc: Loc): UsageMetadata | undefined {
  if (raw === undefined || raw === null) return undefined;
  const u = expectObj(raw, loc);
  const input = optCount(u.input_tokens, loc, "input_tokens") ?? 0;
  const output = optCount(u.output_tokens, loc, "output_tokens") ?? 0;
  const total = optCount(u.total_tokens, loc, "total_tokens") ?? input + output;
  const usage: UsageMetadata = { input_tokens: input, output_tokens: output, total_tokens: total };
  const inD = countDetails(u.input_tokens_details, loc, "input_tokens_details", RENAME_IN);
  const outD = countDetails(u.output_tokens_details, loc, "output_tokens_details", RENAME_OUT);
  if (inD) usage.input_token_details = inD;
  if (outD) usage.output_token_details = outD;
  const extras = otherUsageFields(u, K_USAGE, "keep");
  if (extras) usage.extras = extras;
  return usage;
}
