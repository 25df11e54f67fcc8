import { describe, expect, it } from "vitest";
import { tooDeepAt, tooDeepAtSliced } from "../../src/internal/json-depth.js";
import { Slicer } from "../../src/internal/slicer.js";

function nested(depth: number): unknown {
  let v: unknown = {};
  for (let i = 1; i < depth; i++) v = i % 2 ? [v] : { k: v };
  return v;
}

describe("JSON depth", () => {
  it("finds the first container past the bound, the document itself being level 1", () => {
    expect(tooDeepAt({ a: [1, { b: {} }] }, 4)).toBeUndefined();
    expect(tooDeepAt({ a: [1, { b: {} }] }, 3)).toEqual(["a", 1, "b"]);
    expect(tooDeepAt({ a: [1, { b: {} }] }, 2)).toEqual(["a", 1]);
    expect(tooDeepAt({ a: [1, { b: {} }] }, 1)).toEqual(["a"]);
    expect(tooDeepAt("text", 0)).toBeUndefined();
    expect(tooDeepAt(nested(5), Infinity)).toBeUndefined();
  });

  it("walks a hundred thousand levels without overflowing the stack, sliced or not, to the same place", async () => {
    const deep = nested(100_000);
    const sync = tooDeepAt(deep, 99_999);
    expect(sync).toHaveLength(99_999);
    expect(await tooDeepAtSliced(deep, 99_999)).toEqual(sync);
  });

  it("gives the event loop turns while it walks a large document", async () => {
    const wide = Array.from({ length: 50_000 }, () => ({ a: [1] }));
    let turns = 0;
    let walking = true;
    const tick = () => {
      turns++;
      if (walking) setImmediate(tick);
    };
    setImmediate(tick);
    expect(await tooDeepAtSliced(wide, 10, new Slicer())).toBeUndefined();
    walking = false;
    expect(turns).toBeGreaterThan(10);
  });
});
