/** Small structural helpers shared by the adapters. Pure; throw only NormalizeError. */
import { NormalizeError } from "../../src/errors.js";

export type Key = string | number;

/**
 * The expect* helpers take the parent location plus up to two trailing keys, so
 * the success path (nearly every call) allocates no location array; the full
 * path is only built when something is wrong.
 */
function at(loc: Loc, k1?: Key, k2?: Key): Loc {
  if (k1 === undefined) return loc;
  return k2 === undefined ? [...loc, k1] : [...loc, k1, k2];
}
export { isObj, put, putAll, type Obj } from "../../src/internal/obj.js";
import { isObj, put, type Obj } from "../../src/internal/obj.js";
export type { Loc } from "../../src/internal/types.js";
import type { Loc } from "../../src/internal/types.js";

/** Throw the one error type adapters are allowed to throw, naming the field. */
export function fail(loc: Loc, msg: string, type = "value_error"): never {
  throw new NormalizeError([{ loc, msg, type }]);
}

export function expectObj(v: unknown, loc: Loc, k1?: Key, k2?: Key): Obj {
  if (!isObj(v)) fail(at(loc, k1, k2), `expected an object, got ${describe(v)}`, "object_type");
  return v;
}

export function expectArray(v: unknown, loc: Loc, k1?: Key, k2?: Key): unknown[] {
  if (!Array.isArray(v)) fail(at(loc, k1, k2), `expected an array, got ${describe(v)}`, "list_type");
  return v;
}

export function expectString(v: unknown, loc: Loc, k1?: Key, k2?: Key): string {
  if (typeof v !== "string") fail(at(loc, k1, k2), `expected a string, got ${describe(v)}`, "string_type");
  return v;
}

export function optString(v: unknown, loc: Loc, k1?: Key, k2?: Key): string | undefined {
  if (v === undefined || v === null) return undefined;
  return expectString(v, loc, k1, k2);
}

/**
 * A non-negative safe integer (`Number.isSafeInteger(v) && v >= 0`), by comparisons:
 * every count of every usage object is checked, and the comparisons compile to a
 * few instructions where the call did not.
 */
export function isCount(v: unknown): v is number {
  return typeof v === "number" && v >= 0 && v <= Number.MAX_SAFE_INTEGER && Math.floor(v) === v;
}

/** Non-negative integer token count, or undefined when absent; anything else is an error. */
export function optCount(v: unknown, loc: Loc, k1?: Key, k2?: Key): number | undefined {
  // Safe integers only: the native schema (and JSON consumers) cannot hold more exactly.
  if (isCount(v)) return v;
  if (v === undefined || v === null) return undefined;
  return fail(
    at(loc, k1, k2),
    `expected a non-negative integer (at most 2^53 - 1), got ${typeof v === "number" ? v : describe(v)}`,
    "int_type",
  );
}

/**
 * A value as JSON text, for structured content kept as text (tool results). A value
 * JSON cannot write (a cycle, a BigInt, nesting deeper than the stack) is a
 * NormalizeError at `where()` (built only then), never a TypeError or RangeError out of an adapter.
 */
export function jsonText(v: unknown, where: () => Loc): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(v);
  } catch (err) {
    fail(where(), `cannot be written as JSON: ${(err as Error).message}`, "json_invalid");
  }
  return text ?? "null";
}

export function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v;
}

/**
 * Copy the keys of `src` not listed in `known` into an extras object, or return
 * undefined when there are none. DESIGN: nothing a vendor sent is dropped.
 */
export function leftovers(src: Obj, known: ReadonlySet<string>): Obj | undefined {
  let out: Obj | undefined;
  for (const k in src) {
    if (known.has(k) || src[k] === undefined) continue;
    put((out ??= {}), k, src[k]);
  }
  return out;
}

/**
 * `leftovers` for up to five known keys: compared as strings (for-in keys and
 * literals are the same interned strings, so each test is one comparison), no
 * set lookup. For objects read once per part or per message.
 */
export function leftoversBut(src: Obj, a: string, b: string = a, c: string = a, d: string = a, e: string = a): Obj | undefined {
  let out: Obj | undefined;
  for (const k in src) {
    if (k === a || k === b || k === c || k === d || k === e) continue;
    const v = src[k];
    if (v !== undefined) put((out ??= {}), k, v);
  }
  return out;
}

/** Whether `names` (a few field names) holds `k`: a loop of comparisons, cheaper than a set lookup for a handful. */
export function listed(k: string, names: readonly string[]): boolean {
  for (let i = 0; i < names.length; i++) if (names[i] === k) return true;
  return false;
}

type Located = { issues: { loc: Loc }[] };

/** `err` with the locations of its issues prefixed by `prefix` when it is a NormalizeError (anything else untouched), for rethrowing. */
export function locatedUnder(prefix: string | number, err: unknown): unknown {
  if (err && typeof err === "object" && Array.isArray((err as Located).issues))
    for (const i of (err as Located).issues) i.loc = [prefix, ...i.loc];
  return err;
}

/** Run `fn`, prefixing the locations of any NormalizeError it throws with `prefix` (e.g. "request"). */
export function under<T>(prefix: string | number, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw locatedUnder(prefix, err);
  }
}

/**
 * Usage whose counts (sums included) all fit the native schema: non-negative
 * safe integers. Huge vendor counts would otherwise add up past 2^53 and
 * `normalize` would emit what `validate` rejects.
 */
export function checkedUsage<U extends Record<string, unknown>>(u: U, loc: Loc): U {
  checkCounts(u, loc);
  return u;
}

// A plain recursive function, not a closure made per call: usage is checked for every record.
function checkCounts(o: Record<string, unknown>, at: Loc): void {
  for (const k in o) {
    if (k === "extras") continue; // the vendor's own fields, kept as they came
    const v = o[k];
    if (typeof v === "number") {
      if (!isCount(v)) fail([...at, k], `token count ${v} is not a non-negative integer of at most 2^53 - 1`, "int_type");
    } else if (isObj(v)) checkCounts(v, [...at, k]);
  }
}
