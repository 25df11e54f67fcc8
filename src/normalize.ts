/**
 * normalize(payload, {format}) -> DESIGN.md's output record, or NormalizeError.
 *
 * `auto` first tries adapters/fast-detect.ts, which names the format of an
 * OpenAI chat or Anthropic Messages pair from a few keys and one scan of the
 * request, and of any other pair whose response only one adapter reads, with
 * the answer the steps below would give; anything it leaves open asks every
 * adapter's `detect`. Resolution, never a guess:
 * 1. a payload with nothing but native fields whose content is native blocks
 *    stays native (DESIGN: any vendor-only field, `model` included, makes a
 *    vendor record, which the native adapter never claims);
 * 2. otherwise exactly one vendor claim wins (it also knows the provider);
 * 3. otherwise a native claim (string shorthand content, reply shapes) wins;
 * 4. no claim, or two vendor claims, is a NormalizeError that says what was seen.
 */
import type { NormalizedRecord } from "../adapters/types.js";
import { ADAPTERS, FORMAT_NAMES, getAdapter, detectionScope, fastDetect, isStrictlyNative, soleResponseClaim } from "../adapters/index.js";
import { NormalizeError } from "./errors.js";

export interface NormalizeOptions {
  /** `auto` (default) or an adapter name: `native`, `openai-chat`, `openai-responses`, `openai-completions`, `anthropic-messages`, `gemini`, `bedrock-converse`, `langchain`. */
  format?: string;
}

function describePayload(p: unknown): string {
  if (Array.isArray(p)) return `an array of ${p.length} element(s)`;
  if (p === null || typeof p !== "object") return `a ${p === null ? "null" : typeof p}`;
  const keys = Object.keys(p).slice(0, 8);
  return `an object with keys ${keys.map((k) => JSON.stringify(k)).join(", ") || "(none)"}`;
}

export function detectFormat(payload: unknown): string {
  return fastDetect(payload) ?? soleResponseClaim(payload) ?? detectFormatFully(payload);
}

/** Every adapter asked, no fast path: what `detectFormat` must answer (the fast path's tests compare the two). */
export function detectFormatFully(payload: unknown): string {
  // A plain loop: detection runs on every record, and the claims are few.
  let nativeClaim = false;
  const vendors: string[] = [];
  detectionScope(() => {
    for (const a of ADAPTERS) {
      if (a.detect(payload) === null) continue;
      if (a.name === "native") nativeClaim = true;
      else vendors.push(a.name);
    }
  });
  if (nativeClaim && isStrictlyNative(payload)) return "native";
  if (vendors.length === 1) return vendors[0]!;
  if (vendors.length === 0 && nativeClaim) return "native";
  if (vendors.length === 0) {
    throw new NormalizeError([
      {
        loc: [],
        msg: `could not detect the format of ${describePayload(payload)}: it is not a native record, nor an OpenAI chat-completions, OpenAI Responses, OpenAI completions, Anthropic Messages, Gemini, Bedrock Converse or LangChain request, response or stream with a distinguishing field (model name, vendor-only role, part or parameter); pass --format`,
        type: "unknown_format",
      },
    ]);
  }
  throw new NormalizeError([
    { loc: [], msg: `ambiguous payload: it matches ${vendors.join(" and ")}; pass --format`, type: "ambiguous_format" },
  ]);
}

export function normalize(payload: unknown, opts: NormalizeOptions = {}): NormalizedRecord {
  const format = opts.format ?? "auto";
  if (format === "auto") return getAdapter(detectFormat(payload))!.normalize(payload);
  const adapter = getAdapter(format);
  if (!adapter) {
    throw new NormalizeError([
      {
        loc: ["format"],
        msg: `unknown format ${JSON.stringify(format)}; expected auto or one of ${FORMAT_NAMES.join(", ")}`,
        type: "unknown_format",
      },
    ]);
  }
  return adapter.normalize(payload);
}
