/**
 * makeSafe(value): a JSON-encodable copy of anything handed to the library,
 * made once, in time linear in the value's size and bounded by `maxBytes`,
 * and never throwing. After it, measuring, encoding, spooling and
 * dead-lettering the copy cannot throw or blow up.
 *
 * | value                         | becomes                                                   |
 * |-------------------------------|-----------------------------------------------------------|
 * | a reference to an ancestor    | "[Circular]"                                              |
 * | a shared (non-circular) object| written again while the size budget allows, else "[Shared]" |
 * | BigInt                        | its decimal string, e.g. "12345678901234567890"          |
 * | Error                         | {name, message, stack, cause?, ...own enumerable fields}  |
 * | Date                          | ISO string (invalid dates: null)                          |
 * | Map                           | {"__type": "Map", "entries": [[key, value], ...]}         |
 * | Set                           | {"__type": "Set", "values": [...]}                        |
 * | Buffer                        | {"__type": "Buffer", "base64": "..."}                     |
 * | typed array / DataView        | {"__type": "Float32Array", "length": n, "base64": "..."}  |
 * | ArrayBuffer                   | {"__type": "ArrayBuffer", "base64": "..."}                |
 * | bytes whose base64 is over the string cap or the budget | {"__type", "byteLength", "truncated": true} |
 * | function                      | "[Function name]"                                         |
 * | symbol                        | "Symbol(description)"                                     |
 * | undefined                     | omitted in objects, null in arrays (as JSON does)         |
 * | NaN / Infinity                | null (as JSON does)                                       |
 * | object with toJSON()          | what toJSON returns, made safe again                      |
 * | a getter that throws          | "[Thrown: message]"                                       |
 * | deeper than `maxDepth`        | "[MaxDepth]"                                              |
 * | string over `maxStringLength` | its head + "…[truncated N chars]"                          |
 * | past the `maxBytes` budget    | "[Truncated]"; arrays/objects end with a count of what was cut |
 */
import { errorMessage } from "../internal/quietly.js";
import { put } from "../internal/obj.js";

export interface SafeLimits {
  /** Nesting kept; deeper values become "[MaxDepth]". Default 64. */
  maxDepth?: number;
  /** Characters kept of one string (binary buffers count their base64 length). Default 8 Mi. */
  maxStringLength?: number;
  /** Approximate JSON bytes of the whole copy; past it values become "[Truncated]". Default 16 MiB. */
  maxBytes?: number;
}

export interface SafeResult {
  value: unknown;
  /** Approximate JSON length of `value` (escapes and non-ASCII not counted exactly). */
  bytes: number;
}

export const CIRCULAR = "[Circular]";
export const SHARED = "[Shared]";
export const TRUNCATED = "[Truncated]";
export const MAX_DEPTH_MARK = "[MaxDepth]";

/** The key under which an object records how many of its keys the size budget cut. */
export const TRUNCATED_KEYS = "__truncated_keys";

/** Objects a value may hold before makeSafe starts tracking shared ones (and checkSafe leaves the value to it). */
export const TRACK_AFTER = 1000;

/** The default SafeLimits. */
export const SAFE_DEFAULTS = { maxDepth: 64, maxStringLength: 8 * 1024 * 1024, maxBytes: 16 * 1024 * 1024 } as const;
const DEFAULTS = SAFE_DEFAULTS;
/** The default budget of one run's copy (SafeLimits.maxBytes). */
export const DEFAULT_MAX_BYTES = DEFAULTS.maxBytes;

class Walker {
  /** Budget left, in approximate JSON bytes. Every value written spends from it, so repeats and huge values are bounded. */
  left: number;
  /** The objects on the current path, by depth: meeting one again is a cycle. A scan of at most maxDepth entries, cheaper than a Set for the usual shallow values. */
  private readonly path: object[] = [];
  /**
   * Objects already written, with the bytes their copy took: a shared object
   * is written again only if the budget allows. Kept only once a value has
   * more than TRACK_AFTER objects: small values cannot blow up, and the map
   * would be most of the cost of copying them.
   */
  private done?: Map<object, number>;
  private objects = 0;

  /**
   * Bytes that repeats of shared objects may take. Without it a DAG whose
   * nodes each reference the next twice would fill the whole budget with
   * copies (2^n of them); with it, repeats cost at most a sixteenth.
   */
  private repeatLeft: number;

  constructor(readonly lim: Required<SafeLimits>) {
    this.left = lim.maxBytes;
    this.repeatLeft = Math.max(4096, lim.maxBytes / 16);
  }

  private spend(n: number): boolean {
    if (n > this.left) {
      this.left = 0;
      return false;
    }
    this.left -= n;
    return true;
  }

  private str(s: string): string {
    const max = this.lim.maxStringLength;
    let out = s;
    if (s.length > max) out = `${s.slice(0, max)}…[truncated ${s.length - max} chars]`;
    if (out.length + 2 > this.left) {
      // The budget is nearly gone: keep what fits and say how much was cut.
      const keep = Math.max(0, this.left - 40);
      out = keep > 0 ? `${s.slice(0, keep)}…[truncated ${s.length - keep} chars]` : TRUNCATED;
      this.left = 0;
      return out;
    }
    this.left -= out.length + 2;
    return out;
  }

  private binary(type: string, u: ArrayBufferView | ArrayBuffer, length?: number): unknown {
    const bytes = u instanceof ArrayBuffer ? u.byteLength : u.byteLength;
    // base64 is 4/3 the size; refuse to encode what would be truncated anyway.
    const b64len = Math.ceil(bytes / 3) * 4;
    if (b64len > this.lim.maxStringLength || b64len + 60 > this.left) {
      this.spend(60);
      return { __type: type, ...(length !== undefined ? { length } : {}), byteLength: bytes, truncated: true };
    }
    const buf = u instanceof ArrayBuffer ? Buffer.from(u) : Buffer.from(u.buffer, u.byteOffset, u.byteLength);
    const out: Record<string, unknown> = { __type: type };
    if (length !== undefined) out.length = length;
    out.base64 = this.str(buf.toString("base64"));
    this.spend(30);
    return out;
  }

  value(v: unknown, depth: number): unknown {
    switch (typeof v) {
      case "string":
        return this.left > 0 ? this.str(v) : TRUNCATED;
      case "boolean":
        this.spend(5);
        return v;
      case "number":
        this.spend(8);
        return Number.isFinite(v) ? v : null;
      case "bigint":
        return this.str(v.toString());
      case "undefined":
        return undefined;
      case "symbol":
        return this.str(v.toString());
      case "function":
        return this.str(`[Function ${safeName(v)}]`);
    }
    if (v === null) {
      this.spend(4);
      return null;
    }
    const o = v as object;
    const path = this.path;
    for (let i = 0; i < depth; i++) if (path[i] === o) return this.str(CIRCULAR);
    if (depth >= this.lim.maxDepth) return this.str(MAX_DEPTH_MARK);
    if (this.left <= 0) return TRUNCATED;
    const before = this.done?.get(o);
    if (before !== undefined) {
      // A shared object (a DAG, not a cycle): write it again only when its earlier copy fits the budget.
      if (before > this.left || before > this.repeatLeft) return this.str(SHARED);
      this.repeatLeft -= before;
    }
    if (++this.objects > TRACK_AFTER) this.done ??= new Map();
    const start = this.left;
    path[depth] = o;
    let out: unknown;
    try {
      out = this.object(o, depth);
    } catch (err) {
      out = this.str(`[Thrown: ${errorMessage(err)}]`);
    }
    path[depth] = undefined as unknown as object;
    this.done?.set(o, start - this.left);
    return out;
  }

  private object(o: object, depth: number): unknown {
    if (Array.isArray(o)) return this.list(o, o.length, depth, (x) => this.value(x, depth + 1) ?? null);
    const proto: unknown = Object.getPrototypeOf(o);
    // The common case first: a plain object (no class, so no Date/Map/Error/... checks needed).
    if ((proto === Object.prototype || proto === null) && typeof (o as { toJSON?: unknown }).toJSON !== "function")
      return this.fields(o, Object.keys(o), depth, {});
    if (o instanceof Date) {
      const t = o.getTime();
      return Number.isNaN(t) ? null : this.str(o.toISOString());
    }
    if (Buffer.isBuffer(o)) return this.binary("Buffer", o);
    if (ArrayBuffer.isView(o))
      return this.binary(o.constructor?.name ?? "ArrayBufferView", o, (o as { length?: number }).length ?? o.byteLength);
    if (o instanceof ArrayBuffer) return this.binary("ArrayBuffer", o);
    if (o instanceof Error) {
      const out: Record<string, unknown> = { name: this.str(String(o.name)), message: this.str(String(o.message)) };
      if (o.stack) out.stack = this.str(String(o.stack));
      if ("cause" in o && o.cause !== undefined) out.cause = this.value(o.cause, depth + 1);
      this.fields(
        o,
        Object.keys(o).filter((k) => !(k in out)),
        depth,
        out,
      );
      return out;
    }
    if (o instanceof Map)
      return {
        __type: "Map",
        entries: this.list(o.entries(), o.size, depth, (e) => {
          const [k, val] = e as [unknown, unknown];
          return [this.value(k, depth + 2) ?? null, this.value(val, depth + 2) ?? null];
        }),
      };
    if (o instanceof Set) return { __type: "Set", values: this.list(o.values(), o.size, depth, (x) => this.value(x, depth + 1) ?? null) };
    if (o instanceof String || o instanceof Number || o instanceof Boolean) return this.value(o.valueOf(), depth);
    if (typeof (o as { toJSON?: unknown }).toJSON === "function") {
      let j: unknown;
      try {
        j = (o as { toJSON(): unknown }).toJSON();
      } catch (err) {
        return this.str(`[Thrown: ${errorMessage(err)}]`);
      }
      // toJSON returning the object itself is common (and would loop forever elsewhere).
      return j === o ? this.fields(o, Object.keys(o), depth, {}) : this.value(j, depth + 1);
    }
    return this.fields(o, Object.keys(o), depth, {});
  }

  private list(items: Iterable<unknown>, size: number, depth: number, each: (x: unknown) => unknown): unknown[] {
    const out: unknown[] = [];
    this.spend(2);
    let i = 0;
    for (const x of items) {
      if (this.left <= 0) {
        out.push(`[Truncated ${size - i} more items]`);
        break;
      }
      out.push(each(x));
      this.spend(1);
      i++;
    }
    return out;
  }

  private fields(o: object, keys: string[], depth: number, out: Record<string, unknown>): Record<string, unknown> {
    this.spend(2);
    for (let i = 0; i < keys.length; i++) {
      if (this.left <= 0) {
        out[TRUNCATED_KEYS] = keys.length - i;
        break;
      }
      const k = keys[i]!;
      let val: unknown;
      try {
        val = (o as Record<string, unknown>)[k];
      } catch (err) {
        val = `[Thrown: ${errorMessage(err)}]`;
      }
      const s = this.value(val, depth + 1);
      if (s !== undefined) {
        put(out, k, s);
        this.spend(k.length + 4);
      }
    }
    return out;
  }
}

function safeName(f: unknown): string {
  try {
    return String((f as { name?: unknown }).name || "anonymous");
  } catch {
    return "anonymous";
  }
}

/** The safe copy of `value` and its approximate JSON size. Never throws. */
export function makeSafe(value: unknown, limits: SafeLimits = {}): SafeResult {
  const w = new Walker({ ...DEFAULTS, ...limits });
  let out: unknown;
  try {
    out = w.value(value, 0);
  } catch (err) {
    // Only a stack overflow from a host-provided toJSON/getter chain can get here.
    out = `[Thrown: ${errorMessage(err)}]`;
  }
  const max = limits.maxBytes ?? DEFAULTS.maxBytes;
  return { value: out === undefined ? null : out, bytes: max - w.left };
}

/**
 * The byte figure makeSafe would report for `value`, when makeSafe's copy of
 * it would hold exactly what it holds: plain objects and arrays, strings,
 * finite numbers, booleans and null, under every limit, with no cycle, no
 * `__proto__` key and no undefined array item. Undefined otherwise (then the
 * caller makes the copy). Walks without allocating, for values whose owner
 * hands them over whole and never touches them again (span conversion builds
 * each run afresh from parsed JSON): checking is cheaper than copying, and
 * the run delivered is the same JSON either way.
 */
export function checkSafe(value: unknown, limits: SafeLimits = {}): number | undefined {
  const maxBytes = limits.maxBytes ?? DEFAULTS.maxBytes;
  // A getter of the value checked could check another value: that one gets a checker of its own.
  const c = checker.busy ? new Checker() : checker;
  c.busy = true;
  c.maxDepth = limits.maxDepth ?? DEFAULTS.maxDepth;
  c.maxString = limits.maxStringLength ?? DEFAULTS.maxStringLength;
  c.left = maxBytes;
  c.objects = 0;
  try {
    // `left > 0` for a bare primitive too (an object's walk ends with that test): makeSafe stops counting at the budget.
    return c.walk(value, 0) && c.left > 0 ? maxBytes - c.left : undefined;
  } catch {
    // A getter or proxy that throws: makeSafe knows what to do with it.
    return undefined;
  } finally {
    c.busy = false;
  }
}

/**
 * checkSafe's walk, one instance reused (checking is synchronous; the only
 * host code it can run is a getter, and a check started from one gets a new
 * instance). Methods on one object rather than closures made per call: the
 * closures and the context they share cost as much as the walk over a
 * typical run.
 *
 * No cycle check: a cycle nests without end, so it fails the depth limit
 * (or the object count) and the value goes to makeSafe, which marks it. The
 * scan of the path that would look for one, and Object.keys' array per object,
 * would dominate the cost of checking a span's run.
 *
 * The budget: makeSafe cuts only where what is left is used up (at zero it
 * writes no further item), and what is left only falls, so a value whose
 * walk ends with some left was not cut anywhere; the walk gives up as soon as
 * none is left (and so takes time bounded by the budget, not the value).
 */
class Checker {
  busy = false;
  maxDepth = 0;
  maxString = 0;
  left = 0;
  objects = 0;

  walk(v: unknown, depth: number): boolean {
    switch (typeof v) {
      case "string":
        this.left -= v.length + 2;
        return v.length <= this.maxString;
      case "boolean":
        this.left -= 5;
        return true;
      case "number":
        this.left -= 8;
        return Number.isFinite(v);
      case "object":
        return v === null ? ((this.left -= 4), true) : this.object(v, depth);
      default:
        return false;
    }
  }

  /**
   * An object or array, its strings and objects checked here rather than by
   * a call to walk() each: most of a run's values are strings, and a call
   * per string costs more than the check. Spends what walk() would, to the unit.
   */
  private object(v: object, depth: number): boolean {
    // Past TRACK_AFTER objects Walker starts tracking shared ones; leave those values to it.
    if (depth >= this.maxDepth || this.left <= 0 || ++this.objects > TRACK_AFTER) return false;
    this.left -= 2;
    const inner = depth + 1;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const x: unknown = v[i];
        if (typeof x === "string") {
          if (x.length > this.maxString) return false;
          this.left -= x.length + 2;
        } else if (typeof x === "object" && x !== null) {
          if (!this.object(x, inner)) return false;
        } else if (x === undefined || !this.walk(x, inner)) return false;
        // Stop as soon as the budget is spent: the time a check takes is bounded by the budget, not the value.
        if ((this.left -= 1) <= 0) return false;
      }
      return this.left > 0;
    }
    const proto: unknown = Object.getPrototypeOf(v);
    if ((proto !== Object.prototype && proto !== null) || typeof (v as { toJSON?: unknown }).toJSON === "function") return false;
    const o = v as Record<string, unknown>;
    // for-in, with no array made per object: the prototype is Object.prototype or null, so these are the own
    // enumerable keys JSON writes (and any a host added to Object.prototype, which only skew the byte figure).
    for (const k in o) {
      if (k === "__proto__") return false;
      const x = o[k];
      if (typeof x === "string") {
        if (x.length > this.maxString) return false;
        this.left -= x.length + 2;
      } else if (typeof x === "object" && x !== null) {
        if (!this.object(x, inner)) return false;
      } else if (x === undefined) continue;
      else if (!this.walk(x, inner)) return false;
      if ((this.left -= k.length + 4) <= 0) return false;
    }
    return this.left > 0;
  }
}

const checker = new Checker();
