/**
 * Token counts are checked by comparisons (guards.ts `isCount`), not by a call
 * to Number.isSafeInteger: the two must accept exactly the same values, and
 * `optCount` must still name a bad count as before.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { isCount, optCount } from "../../adapters/common/guards.js";
import { NormalizeError } from "../../src/errors.js";

const reference = (v: unknown) => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

describe("isCount", () => {
  it("accepts what Number.isSafeInteger and v >= 0 accept, on the edges", () => {
    const edges: unknown[] = [
      0,
      -0,
      1,
      -1,
      0.5,
      1e-300,
      Number.MAX_SAFE_INTEGER,
      Number.MAX_SAFE_INTEGER + 1,
      Number.MAX_SAFE_INTEGER + 2,
      2 ** 53,
      2 ** 60,
      Number.MAX_VALUE,
      Infinity,
      -Infinity,
      NaN,
      "1",
      null,
      undefined,
      true,
      1n,
      {},
      [1],
    ];
    for (const v of edges) expect(isCount(v), String(v)).toBe(reference(v));
  });

  it("accepts what Number.isSafeInteger and v >= 0 accept, on any double or integer", () => {
    fc.assert(
      fc.property(fc.oneof(fc.double(), fc.integer(), fc.maxSafeInteger(), fc.nat()), (v) => isCount(v) === reference(v)),
      { numRuns: 5000 },
    );
  });

  it("optCount returns a count, passes over null and undefined, and names anything else", () => {
    expect(optCount(7, ["usage"], "prompt_tokens")).toBe(7);
    expect(Object.is(optCount(-0, ["usage"], "prompt_tokens"), -0)).toBe(true);
    expect(optCount(null, ["usage"], "prompt_tokens")).toBeUndefined();
    expect(optCount(undefined, ["usage"], "prompt_tokens")).toBeUndefined();
    for (const [v, got] of [
      [1.5, "1.5"],
      [-1, "-1"],
      [2 ** 53, String(2 ** 53)],
      [NaN, "NaN"],
      ["3", "string"],
    ] as const) {
      try {
        optCount(v, ["usage"], "prompt_tokens");
        expect.unreachable();
      } catch (err) {
        expect(err).toBeInstanceOf(NormalizeError);
        expect((err as NormalizeError).issues).toEqual([
          { loc: ["usage", "prompt_tokens"], msg: `expected a non-negative integer (at most 2^53 - 1), got ${got}`, type: "int_type" },
        ]);
      }
    }
  });
});
