/**
 * serialize(value): a JSON-safe copy of anything a traced function takes or
 * returns. It never throws. Representations:
 *
 * | value                         | becomes                                                   |
 * |-------------------------------|-----------------------------------------------------------|
 * | a repeated reference (cycle)  | "[Circular]"                                              |
 * | BigInt                        | its decimal string, e.g. "12345678901234567890"          |
 * | Error                         | {name, message, stack, cause?, ...own enumerable fields}  |
 * | Date                          | ISO string (invalid dates: null)                          |
 * | Map                           | {"__type": "Map", "entries": [[key, value], ...]}         |
 * | Set                           | {"__type": "Set", "values": [...]}                        |
 * | Buffer                        | {"__type": "Buffer", "base64": "..."}                     |
 * | typed array / DataView        | {"__type": "Float32Array", "length": n, "base64": "..."}  |
 * | ArrayBuffer                   | {"__type": "ArrayBuffer", "base64": "..."}                |
 * | function                      | "[Function name]"                                         |
 * | symbol                        | "Symbol(description)"                                     |
 * | undefined                     | omitted in objects, null in arrays (as JSON does)         |
 * | NaN / Infinity                | null (as JSON does)                                       |
 * | object with toJSON()          | what toJSON returns, serialized again                     |
 * | a getter that throws          | "[Thrown: message]"                                       |
 * | deeper than 64 levels         | "[MaxDepth]"                                              |
 */

const MAX_DEPTH = 64;

function b64(u: ArrayBufferView | ArrayBuffer): string {
  return u instanceof ArrayBuffer ? Buffer.from(u).toString("base64") : Buffer.from(u.buffer, u.byteOffset, u.byteLength).toString("base64");
}

function inner(v: unknown, seen: Set<object>, depth: number): unknown {
  switch (typeof v) {
    case "string":
    case "boolean":
      return v;
    case "number":
      return Number.isFinite(v) ? v : null;
    case "bigint":
      return v.toString();
    case "undefined":
      return undefined;
    case "symbol":
      return v.toString();
    case "function":
      return `[Function ${v.name || "anonymous"}]`;
  }
  if (v === null) return null;
  const o = v as object;
  if (seen.has(o)) return "[Circular]";
  if (depth >= MAX_DEPTH) return "[MaxDepth]";
  seen.add(o);
  try {
    if (o instanceof Date) return Number.isNaN(o.getTime()) ? null : o.toISOString();
    if (Buffer.isBuffer(o)) return { __type: "Buffer", base64: o.toString("base64") };
    if (ArrayBuffer.isView(o)) return { __type: o.constructor.name, length: (o as { length?: number }).length ?? o.byteLength, base64: b64(o) };
    if (o instanceof ArrayBuffer) return { __type: "ArrayBuffer", base64: b64(o) };
    if (o instanceof Error) {
      const out: Record<string, unknown> = { name: o.name, message: o.message };
      if (o.stack) out.stack = o.stack;
      if ("cause" in o && o.cause !== undefined) out.cause = inner(o.cause, seen, depth + 1);
      for (const k of Object.keys(o)) if (!(k in out)) out[k] = safeGet(o, k, seen, depth);
      return out;
    }
    if (o instanceof Map) return { __type: "Map", entries: [...o.entries()].map(([k, val]) => [inner(k, seen, depth + 1), inner(val, seen, depth + 1) ?? null]) };
    if (o instanceof Set) return { __type: "Set", values: [...o.values()].map((val) => inner(val, seen, depth + 1) ?? null) };
    if (Array.isArray(o)) return o.map((x) => inner(x, seen, depth + 1) ?? null);
    if (typeof (o as { toJSON?: unknown }).toJSON === "function") {
      try {
        return inner((o as { toJSON(): unknown }).toJSON(), seen, depth + 1);
      } catch (err) {
        return `[Thrown: ${(err as Error)?.message ?? String(err)}]`;
      }
    }
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(o)) {
      const val = safeGet(o, k, seen, depth);
      if (val !== undefined) out[k] = val;
    }
    return out;
  } catch (err) {
    return `[Thrown: ${(err as Error)?.message ?? String(err)}]`;
  } finally {
    // Only cycles are "[Circular]": the same object twice side by side is written twice.
    seen.delete(o);
  }
}

function safeGet(o: object, k: string, seen: Set<object>, depth: number): unknown {
  let val: unknown;
  try {
    val = (o as Record<string, unknown>)[k];
  } catch (err) {
    return `[Thrown: ${(err as Error)?.message ?? String(err)}]`;
  }
  return inner(val, seen, depth + 1);
}

export function serialize(value: unknown): unknown {
  const out = inner(value, new Set(), 0);
  return out === undefined ? null : out;
}

/** serialize() for a record field that must be an object (inputs, outputs). */
export function serializeRecord(value: unknown): Record<string, unknown> {
  const s = serialize(value);
  return typeof s === "object" && s !== null && !Array.isArray(s) ? (s as Record<string, unknown>) : { output: s };
}
