/**
 * OpenAI usage -> native usage_metadata (DESIGN "Usage"): prompt_tokens is
 * input_tokens with cached tokens included; cached_tokens -> cache_read;
 * reasoning_tokens -> output_token_details.reasoning; audio on both sides.
 * Other numeric details (accepted/rejected prediction tokens) keep their names.
 */
import type { UsageMetadata } from "../../src/format/schema.js";
import { expectObj, isObj, optCount, type Loc, type Obj, put } from "../common/guards.js";
import { countSum, type IncludedCacheFields } from "../common/usage.js";

/** Also the Responses API's fields, under its own names (openai-responses/usage.ts). */
export const CHAT_FIELDS: IncludedCacheFields = {
  input: "prompt_tokens",
  output: "completion_tokens",
  total: "total_tokens",
  inputDetails: "prompt_tokens_details",
  outputDetails: "completion_tokens_details",
  renameIn: { cached_tokens: "cache_read", audio_tokens: "audio" },
  renameOut: { reasoning_tokens: "reasoning", audio_tokens: "audio" },
  badDetails: "skip",
  checkSum: true,
  nulls: "keep",
};
/** `renameIn` as code (DetailWriter): chat usage is read for every record. */
function promptDetail(out: Record<string, number>, k: string, n: number): void {
  switch (k) {
    case "cached_tokens":
      out.cache_read = n;
      return;
    case "audio_tokens":
      out.audio = n;
      return;
    default:
      put(out, k, n);
  }
}

/** `renameOut` as code. */
function completionDetail(out: Record<string, number>, k: string, n: number): void {
  switch (k) {
    case "reasoning_tokens":
      out.reasoning = n;
      return;
    case "audio_tokens":
      out.audio = n;
      return;
    default:
      put(out, k, n);
  }
}

/** The usage fields read as counts and details; every other field goes to extras (a switch: chat usage is read for every record). */
function isChatUsageField(k: string): boolean {
  switch (k) {
    case "prompt_tokens":
    case "completion_tokens":
    case "total_tokens":
    case "prompt_tokens_details":
    case "completion_tokens_details":
      return true;
    default:
      return false;
  }
}

function promptDetails(src: unknown, loc: Loc): Record<string, number> | undefined {
  if (!isObj(src)) return undefined;
  let out: Record<string, number> | undefined;
  for (const k in src) {
    const n = optCount(src[k], loc, "prompt_tokens_details", k);
    if (n !== undefined) promptDetail((out ??= {}), k, n);
  }
  return out;
}

function completionDetails(src: unknown, loc: Loc): Record<string, number> | undefined {
  if (!isObj(src)) return undefined;
  let out: Record<string, number> | undefined;
  for (const k in src) {
    const n = optCount(src[k], loc, "completion_tokens_details", k);
    if (n !== undefined) completionDetail((out ??= {}), k, n);
  }
  return out;
}

/**
 * `includedCacheUsage` with CHAT_FIELDS (common/usage.ts), written out with chat's
 * names: every field read by name and every detail written by a direct call,
 * where the shared reader reads by computed keys and calls its writers through
 * the rule. Chat usage is read for every record. The same reads in the same order,
 * so the same result and the same first error (a test holds the two together).
 */
export function normalizeUsage(raw: unknown, loc: Loc): UsageMetadata | undefined {
  if (raw === undefined || raw === null) return undefined;
  const u = expectObj(raw, loc);
  const input = optCount(u.prompt_tokens, loc, "prompt_tokens") ?? 0;
  const output = optCount(u.completion_tokens, loc, "completion_tokens") ?? 0;
  const total = optCount(u.total_tokens, loc, "total_tokens") ?? countSum(input, output, loc, "total_tokens");
  const usage: UsageMetadata = { input_tokens: input, output_tokens: output, total_tokens: total };
  const inD = promptDetails(u.prompt_tokens_details, loc);
  const outD = completionDetails(u.completion_tokens_details, loc);
  if (inD) usage.input_token_details = inD;
  if (outD) usage.output_token_details = outD;
  let extras: Obj | undefined;
  for (const k in u) {
    const v = u[k];
    // Nulls are kept: OpenAI writes null for "not applicable".
    if (isChatUsageField(k) || v === undefined) continue;
    put((extras ??= {}), k, v);
  }
  if (extras) usage.extras = extras;
  return usage;
}
