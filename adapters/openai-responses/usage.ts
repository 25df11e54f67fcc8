/**
 * Responses API usage -> native usage_metadata (DESIGN "Usage"): `input_tokens`
 * already include cached tokens; `cached_tokens` -> cache_read,
 * `cache_write_tokens` -> cache_creation, `reasoning_tokens` -> reasoning.
 * Other numeric details keep their names.
 */
import type { UsageMetadata } from "../../src/format/schema.js";
import { expectObj, isObj, optCount, type Loc, type Obj } from "../common/guards.js";

const RENAME_IN: Record<string, string> = { cached_tokens: "cache_read", cache_write_tokens: "cache_creation", audio_tokens: "audio" };
const RENAME_OUT: Record<string, string> = { reasoning_tokens: "reasoning", audio_tokens: "audio" };
const K_USAGE = new Set(["input_tokens", "output_tokens", "total_tokens", "input_tokens_details", "output_tokens_details"]);

function details(src: unknown, loc: Loc, rename: Record<string, string>): Record<string, number> | undefined {
  if (!isObj(src)) return undefined;
  let out: Record<string, number> | undefined;
  for (const k in src) {
    const n = optCount(src[k], loc, k);
    if (n !== undefined) (out ??= {})[Object.hasOwn(rename, k) ? rename[k]! : k] = n;
  }
  return out;
}

export function normalizeUsage(raw: unknown, loc: Loc): UsageMetadata | undefined {
  if (raw === undefined || raw === null) return undefined;
  const u = expectObj(raw, loc);
  const input = optCount(u.input_tokens, loc, "input_tokens") ?? 0;
  const output = optCount(u.output_tokens, loc, "output_tokens") ?? 0;
  const total = optCount(u.total_tokens, loc, "total_tokens") ?? input + output;
  const usage: UsageMetadata = { input_tokens: input, output_tokens: output, total_tokens: total };
  const inD = details(u.input_tokens_details, [...loc, "input_tokens_details"], RENAME_IN);
  const outD = details(u.output_tokens_details, [...loc, "output_tokens_details"], RENAME_OUT);
  if (inD) usage.input_token_details = inD;
  if (outD) usage.output_token_details = outD;
  let extras: Obj | undefined;
  for (const k in u) if (!K_USAGE.has(k) && u[k] !== undefined) (extras ??= {})[k] = u[k];
  if (extras) usage.extras = extras;
  return usage;
}
