/**
 * What a traced call had at the time, taken before the caller can change it:
 * a wrapper builds its run later (run/deferred.ts), and the caller owns the
 * request body it sent and the reply it got (appending the reply to the same
 * `messages` array for the next turn is the common case). The copy is taken
 * only of values that are plain JSON as checkSafe() sees them (plain objects
 * and arrays, strings, finite numbers, booleans, null: what the SDKs send and
 * parse), so it holds exactly what the value held and the run built from it is
 * the one that would have been built at call time. Anything else (a Date, a
 * class instance, a cycle, a value over the size limits) gets undefined: the
 * caller then builds the run at call time, from the live values.
 */
import { checkSafe } from "../run/safe.js";

/** A copy of `value` when it is plain JSON, else undefined. Never throws. */
export function plainCopy<T>(value: T): T | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  if (checkSafe(value) === undefined) return undefined;
  try {
    return clone(value) as T;
  } catch {
    // a getter that answered the check and throws now: build at call time instead
    return undefined;
  }
}

/**
 * The copy of a value checkSafe accepted: plain prototypes, no cycle, bounded depth and size, so
 * a plain recursive walk is enough (none of makeSafe's markers or budget keeping can apply).
 */
function clone(v: object): unknown {
  if (Array.isArray(v)) {
    const out = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      out[i] = typeof x === "object" && x !== null ? clone(x) : x;
    }
    return out;
  }
  const o = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k in o) {
    const x = o[k];
    out[k] = typeof x === "object" && x !== null ? clone(x) : x;
  }
  return out;
}
