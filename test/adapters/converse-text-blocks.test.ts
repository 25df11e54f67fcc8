/**
 * A Converse content list reads a `{text}` block inline (no location built, no
 * call per block); what it makes must be what blockToNative makes of the same
 * block, whatever else the block carries, and a cache point after it must still
 * land on it.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { blockToNative, convertContent, type Sink } from "../../adapters/bedrock-converse/blocks.js";
import { NormalizeError } from "../../src/errors.js";

type Obj = Record<string, unknown>;

function listed(blocks: unknown[]): Sink | string {
  const sink: Sink = { blocks: [], unmapped: [] };
  try {
    convertContent(blocks, ["content"], sink);
  } catch (err) {
    if (err instanceof NormalizeError) return JSON.stringify(err.issues);
    throw err;
  }
  return sink;
}

function alone(block: unknown): unknown {
  try {
    return blockToNative(block, ["content", 0]);
  } catch (err) {
    if (err instanceof NormalizeError) return JSON.stringify(err.issues);
    throw err;
  }
}

// Other members and fields a text block may carry (a later Bedrock field, a stray union member).
const extra = fc.dictionary(
  fc.oneof(fc.constantFrom("citations", "type", "image", "cachePoint", "toolUse", "document", "__proto__"), fc.string({ maxLength: 6 })),
  fc.oneof(fc.jsonValue(), fc.constant(undefined)),
  { maxKeys: 3 },
);

describe("a Converse text block read inline", () => {
  it("gives what blockToNative gives, extras and key order included", () => {
    fc.assert(
      fc.property(fc.string(), extra, (text, rest) => {
        const block: Obj = { text, ...rest };
        const got = listed([block]);
        if (typeof got === "string") return; // a block blockToNative rejects goes that way, not inline
        const want = alone(block);
        if (want === undefined) expect(got.unmapped).toEqual([{ index: 0, part: block }]);
        else expect(JSON.stringify(got.blocks)).toBe(JSON.stringify(want));
      }),
      { numRuns: 500 },
    );
  });

  it("takes the cache point that follows it into its extras", () => {
    const got = listed([{ text: "hi", lang: "en" }, { cachePoint: { type: "default" } }]) as Sink;
    expect(got.blocks).toEqual([{ type: "text", text: "hi", extras: { lang: "en", cache_point: { type: "default" } } }]);
    expect(got.unmapped).toEqual([]);
  });

  it("leaves a block whose text is no string to blockToNative, which names it", () => {
    expect(listed([{ text: 3 }])).toBe(alone({ text: 3 }));
    expect(String(alone({ text: 3 }))).toContain('"content",0,"text"');
  });
});
