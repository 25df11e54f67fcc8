import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkSafe } from "../../src/run/safe.js";
import { plainCopy } from "../../src/tracing/snapshot.js";

/** plainCopy copies exactly the values checkSafe accepts, and the copy is equal to the value and shares none of its objects. */
function copiesWhereCheckAccepts(v: unknown): unknown {
  const copy = plainCopy(v);
  const accepted = typeof v === "object" && v !== null && checkSafe(v) !== undefined;
  expect(copy !== undefined).toBe(accepted);
  if (copy !== undefined) {
    // Equal as data (a null-prototype object is copied as a plain one, as JSON would read it back).
    expect(copy).toEqual(v);
    expect(JSON.stringify(copy)).toBe(JSON.stringify(v));
    const originals = new Set<unknown>();
    const collect = (x: unknown) => {
      if (typeof x !== "object" || x === null) return;
      originals.add(x);
      for (const k in x) collect((x as Record<string, unknown>)[k]);
    };
    collect(v);
    const shares = (x: unknown): boolean => typeof x === "object" && x !== null && (originals.has(x) || Object.values(x).some(shares));
    expect(shares(copy)).toBe(false);
  }
  return copy;
}

describe("plainCopy", () => {
  it("copies a request body whole, so a later change by the caller does not reach the copy", () => {
    const body = { model: "m", messages: [{ role: "user", content: "hi" }], temperature: 0, stop: null, n: undefined };
    const copy = copiesWhereCheckAccepts(body) as typeof body;
    body.messages.push({ role: "assistant", content: "later" });
    expect(copy.messages).toHaveLength(1);
  });

  it("gives no copy of what is not plain JSON: class instances, cycles, undefined in arrays, NaN, functions, too deep, too many objects", () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    let deep: unknown = { leaf: true };
    for (let i = 0; i < 70; i++) deep = { deep };
    for (const v of [
      { at: new Date(0) },
      cyclic,
      [1, undefined],
      { n: NaN },
      { f: () => 1 },
      { b: 1n },
      { toJSON: () => "x" },
      JSON.parse('{"__proto__": {"x": 1}}'),
      deep,
      { many: Array.from({ length: 1200 }, () => ({})) },
    ])
      expect(copiesWhereCheckAccepts(v)).toBeUndefined();
  });

  it("gives no copy of a string over the length limit or a value over the byte budget", () => {
    expect(copiesWhereCheckAccepts({ s: "x".repeat(8 * 1024 * 1024 + 1) })).toBeUndefined();
    const six = "y".repeat(6 * 1024 * 1024);
    expect(copiesWhereCheckAccepts({ a: six, b: six })).toBeDefined();
    expect(copiesWhereCheckAccepts({ a: six, b: six, c: six })).toBeUndefined();
  });

  it("gives no copy when a getter throws, and never throws itself", () => {
    const v = {
      get boom(): never {
        throw new Error("no");
      },
    };
    expect(plainCopy(v)).toBeUndefined();
  });

  it("agrees with checkSafe on any value", () => {
    let copied = 0;
    fc.assert(
      fc.property(
        fc.oneof(
          fc.jsonValue({ maxDepth: 6 }),
          fc.anything({ maxDepth: 4, withDate: true, withMap: true, withNullPrototype: true, withBigInt: true }),
        ),
        (v) => {
          if (copiesWhereCheckAccepts(v) !== undefined) copied++;
        },
      ),
      { numRuns: 2000, seed: 37 },
    );
    expect(copied).toBeGreaterThan(300);
  });
});
