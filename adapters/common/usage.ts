/**
 * Pieces every usage reader is made of (DESIGN "Usage"): per-kind token
 * details renamed to the native names, cache details, the vendor's other
 * usage fields kept in `extras` (nothing dropped), and the two ways vendors
 * count cached input: inside the input count (OpenAI, LangChain) or beside it
 * (Anthropic, Bedrock). Each vendor's usage.ts names its fields and its rule.
 */
import type { UsageMetadata } from "../../src/format/schema.js";
import { expectObj, fail, isCount, isObj, listed, optCount, type Loc, type Obj, put } from "./guards.js";

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
    if (n !== undefined) put((out ??= {}), Object.hasOwn(rename, k) ? rename[k]! : k, n);
  }
  return out;
}

/**
 * Writes one detail count under its native name. A vendor whose usage is read for
 * every record writes a switch over its own names: each case stores one named
 * member, where a renaming table makes every store a generic keyed one.
 */
export type DetailWriter = (out: Record<string, number>, key: string, n: number) => void;

/** `countDetails` with the native names chosen by `write`. */
export function writeDetails(src: unknown, loc: Loc, key: string, write: DetailWriter): Record<string, number> | undefined {
  if (!isObj(src)) return undefined;
  let out: Record<string, number> | undefined;
  for (const k in src) {
    const n = optCount(src[k], loc, key, k);
    if (n !== undefined) write((out ??= {}), k, n);
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
 * applicable", which a reader may want to see) or dropped. The vendors' own
 * readers pass a list (a handful of names, compared one by one).
 */
export function otherUsageFields(u: Obj, known: ReadonlySet<string> | readonly string[], nulls: "keep" | "drop"): Obj | undefined {
  const set = known instanceof Set ? (known as ReadonlySet<string>) : undefined;
  const list = known as readonly string[];
  let extras: Obj | undefined;
  for (const k in u) {
    const v = u[k];
    if ((set ? set.has(k) : listed(k, list)) || v === undefined || (v === null && nulls === "drop")) continue;
    put((extras ??= {}), k, v);
  }
  return extras;
}

/** A usage rule's fields with the names `extras` leaves out (a handful: a list, compared one by one), built once per vendor. */
export type Known<F> = F & { readonly known: readonly string[] };

/** `f` with its count and details names (and `alsoKnown`, names the vendor's reader handles itself) as the names extras leaves out. */
export function knownFields<F extends IncludedCacheFields | SeparateCacheFields>(f: F, alsoKnown: readonly string[] = []): Known<F> {
  const names =
    "total" in f ? [f.input, f.output, f.total, f.inputDetails, f.outputDetails] : [f.input, f.output, f.cacheRead, f.cacheWrite];
  return { ...f, known: [...names, ...alsoKnown] };
}

/** Where a usage object whose input count already includes cached tokens keeps its counts. */
export interface IncludedCacheFields {
  input: string;
  output: string;
  total: string;
  inputDetails: string;
  outputDetails: string;
  /** Detail names the vendor spells otherwise (`cached_tokens` -> `cache_read`); the rest keep theirs. */
  renameIn: Readonly<Record<string, string>>;
  renameOut: Readonly<Record<string, string>>;
  /** The same renaming written as code (DetailWriter), used instead of the tables when given. */
  writeIn?: DetailWriter;
  writeOut?: DetailWriter;
  /** A details value that is not an object: passed over (`skip`) or an error (`reject`). */
  badDetails: "skip" | "reject";
  /**
   * Whether a total added up here (the vendor sent none) is checked at once; every
   * count read is checked by optCount, but their sum can leave the safe range.
   */
  checkSum: boolean;
  nulls: "keep" | "drop";
}

/**
 * Usage whose input count includes cached tokens: the three counts (absent ones 0,
 * an absent total their sum), the two details objects renamed, the rest in extras.
 */
export function includedCacheUsage(u: Obj, loc: Loc, f: Known<IncludedCacheFields>): UsageMetadata {
  const input = optCount(u[f.input], loc, f.input) ?? 0;
  const output = optCount(u[f.output], loc, f.output) ?? 0;
  const total = optCount(u[f.total], loc, f.total) ?? (f.checkSum ? countSum(input, output, loc, f.total) : input + output);
  const usage: UsageMetadata = { input_tokens: input, output_tokens: output, total_tokens: total };
  const inD = details(u[f.inputDetails], loc, f.inputDetails, f.renameIn, f.writeIn, f.badDetails);
  const outD = details(u[f.outputDetails], loc, f.outputDetails, f.renameOut, f.writeOut, f.badDetails);
  if (inD) usage.input_token_details = inD;
  if (outD) usage.output_token_details = outD;
  const extras = otherUsageFields(u, f.known, f.nulls);
  if (extras) usage.extras = extras;
  return usage;
}

function details(
  v: unknown,
  loc: Loc,
  key: string,
  rename: Readonly<Record<string, string>>,
  write: DetailWriter | undefined,
  bad: "skip" | "reject",
) {
  if (bad === "reject" && v !== undefined && v !== null) expectObj(v, loc, key);
  return write ? writeDetails(v, loc, key, write) : countDetails(v, loc, key, rename);
}

/** `a + b`, two counts, checked to be a count (their sum can leave the safe range). */
export function countSum(a: number, b: number, loc: Loc, key: string): number {
  const t = a + b;
  if (!isCount(t)) fail([...loc, key], `token count ${t} is not a non-negative integer of at most 2^53 - 1`, "int_type");
  return t;
}

/** Where a usage object that counts cache reads and writes beside its fresh input keeps its counts. */
export interface SeparateCacheFields {
  input: string;
  output: string;
  cacheRead: string;
  cacheWrite: string;
}

/**
 * Usage whose input count leaves out cached tokens: the native input_tokens adds
 * the cache reads and writes (our rule: input includes cached tokens), which become
 * the `cache_read` / `cache_creation` details; total is input + output; the other
 * fields (nulls dropped) go to extras. The caller checks the sums (checkedUsage).
 */
export function separateCacheUsage(u: Obj, loc: Loc, f: Known<SeparateCacheFields>): UsageMetadata {
  const base = optCount(u[f.input], loc, f.input) ?? 0;
  const read = optCount(u[f.cacheRead], loc, f.cacheRead);
  const written = optCount(u[f.cacheWrite], loc, f.cacheWrite);
  const output = optCount(u[f.output], loc, f.output) ?? 0;
  const input = base + (read ?? 0) + (written ?? 0);
  const usage: UsageMetadata = { input_tokens: input, output_tokens: output, total_tokens: input + output };
  const cache = cacheDetails(read, written);
  if (cache) usage.input_token_details = cache;
  const extras = otherUsageFields(u, f.known, "drop");
  if (extras) usage.extras = extras;
  return usage;
}
