/**
 * What a traced call had at the time, taken before the caller can change it:
 * a wrapper builds its run later (run/deferred.ts), and the caller owns the
 * request body it sent and the reply it got (appending the reply to the same
 * `messages` array for the next turn is the common case). The copy is taken
 * only of values that are plain JSON as checkSafe() (run/safe.ts) sees them (plain objects
 * and arrays, strings, finite numbers, booleans, null: what the SDKs send and
 * parse), so it holds exactly what the value held and the run built from it is
 * the one that would have been built at call time. Anything else (a Date, a
 * class instance, a cycle, a value over the size limits) gets undefined: the
 * caller then builds the run at call time, from the live values.
 */
import { SAFE_DEFAULTS, TRACK_AFTER } from "../run/safe.js";

/** A copy of `value` when it is plain JSON, else undefined. Never throws. */
export function plainCopy<T>(value: T): T | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  // A getter of the value copied could copy another value: that one gets a copier of its own.
  const c = copier.busy ? new Copier() : copier;
  c.busy = true;
  c.left = SAFE_DEFAULTS.maxBytes;
  c.objects = 0;
  try {
    const out = c.object(value, 0);
    return out !== undefined && c.left > 0 ? (out as T) : undefined;
  } catch {
    // a getter or proxy that throws: build at call time instead
    return undefined;
  } finally {
    c.busy = false;
  }
}

/**
 * checkSafe's walk (run/safe.ts Checker, default limits) and the copy in one
 * pass: the same tests, spending the same budget, in the same order, so a
 * value gets a copy exactly when checkSafe accepts it. One pass rather than a
 * check and then a copy: both sit on the caller's path, and each host getter
 * runs once. Undefined (from any level) means "not plain JSON".
 */
class Copier {
  busy = false;
  left = 0;
  objects = 0;

  /** A copy of `v` (a non-null object), or undefined when checkSafe would refuse it. */
  object(v: object, depth: number): object | undefined {
    if (depth >= SAFE_DEFAULTS.maxDepth || this.left <= 0 || ++this.objects > TRACK_AFTER) return undefined;
    this.left -= 2;
    const inner = depth + 1;
    if (Array.isArray(v)) {
      const out = new Array<unknown>(v.length);
      for (let i = 0; i < v.length; i++) {
        const x: unknown = v[i];
        if (typeof x === "string") {
          if (x.length > SAFE_DEFAULTS.maxStringLength) return undefined;
          this.left -= x.length + 2;
          out[i] = x;
        } else if (typeof x === "object" && x !== null) {
          const y = this.object(x, inner);
          if (y === undefined) return undefined;
          out[i] = y;
        } else if (x === undefined || !this.scalar(x)) return undefined;
        else out[i] = x;
        if ((this.left -= 1) <= 0) return undefined;
      }
      return this.left > 0 ? out : undefined;
    }
    const proto: unknown = Object.getPrototypeOf(v);
    if ((proto !== Object.prototype && proto !== null) || typeof (v as { toJSON?: unknown }).toJSON === "function") return undefined;
    const o = v as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const k in o) {
      if (k === "__proto__") return undefined;
      const x = o[k];
      if (typeof x === "string") {
        if (x.length > SAFE_DEFAULTS.maxStringLength) return undefined;
        this.left -= x.length + 2;
      } else if (typeof x === "object" && x !== null) {
        const y = this.object(x, inner);
        if (y === undefined) return undefined;
        out[k] = y;
        if ((this.left -= k.length + 4) <= 0) return undefined;
        continue;
      } else if (x !== undefined && !this.scalar(x)) return undefined;
      out[k] = x;
      if (x !== undefined && (this.left -= k.length + 4) <= 0) return undefined;
    }
    return this.left > 0 ? out : undefined;
  }

  /** A boolean, finite number or null (the walk's other leaves), spending what checkSafe spends. */
  private scalar(x: unknown): boolean {
    if (x === null) return ((this.left -= 4), true);
    if (typeof x === "boolean") return ((this.left -= 5), true);
    if (typeof x === "number") return ((this.left -= 8), Number.isFinite(x));
    return false;
  }
}

const copier = new Copier();
