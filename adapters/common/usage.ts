/**
 * Pieces every usage reader is made of (DESIGN "Usage"): per-kind token
 * details renamed to the native names, cache details, and the vendor's other
 * usage fields kept in `extras` (nothing dropped).
 */
import type { UsageMetadata } from "../../src/format/schema.js";
import { isObj, optCount, type Loc, type Obj } from "./guards.js";

/**
 * A vendor's details object (`prompt_tokens_details`, ...) at `loc` + `key`:
 * every count, renamed by `rename` where it names one (own keys only, so a
 * vendor key named like an Object.prototype member stays itself). The location
 * is passed in pieces so none is built unless a count is bad.
 */
export function countDetails(
  src: unknown,
  loc: Loc,
  key: string,
  rename: Readonly<Record<string, string>>,
): Record<string, number> | undefined {
  if (!isObj(src)) return undefined;
  let out: Record<string, number> | undefined;
  for (const k in src) {
    const n = optCount(src[k], loc, key, k);
    if (n !== undefined) (out ??= {})[Object.hasOwn(rename, k) ? rename[k]! : k] = n;
  }
  return out;
}

/** Cache reads and writes as `input_token_details`, or undefined when the vendor reported neither. */
export function cacheDetails(read: number | undefined, creation: number | undefined): UsageMetadata["input_token_details"] {
  if (read === undefined && creation === undefined) return undefined;
  const d: NonNullable<UsageMetadata["input_token_details"]> = {};
  if (read !== undefined) d.cache_read = read;
  if (creation !== undefined) d.cache_creation = creation;
  return d;
}

/**
 * The usage object's fields other than `known`, for `usage.extras`. `nulls`
 * says whether a null the vendor sent is kept (OpenAI writes null for "not
 * applicable", which a reader may want to see) or dropped.
 */
export function otherUsageFields(u: Obj, known: ReadonlySet<string>, nulls: "keep" | "drop"): Obj | undefined {
  let extras: Obj | undefined;
  for (const k in u) {
    const v = u[k];
    if (known.has(k) || v === undefined || (v === null && nulls === "drop")) continue;
    (extras ??= {})[k] = v;
  }
  return extras;
}
