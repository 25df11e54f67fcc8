/**
 * readFlatObject (adapters/common/flat-json.ts) reads flat tool-call arguments
 * without JSON.parse: where it answers, it must answer exactly what JSON.parse
 * does (members, their order, -0, repeated keys); everywhere else it must step
 * aside (undefined) so JSON.parse judges the text.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { readFlatObject } from "../../adapters/common/flat-json.js";
import { parseToolArgs } from "../../adapters/common/args.js";

/** JSON.parse's object for `text` and readFlatObject's, compared member by member in order (Object.is, so -0 counts). */
function expectSameAsJsonParse(text: string): void {
  const fast = readFlatObject(text);
  if (fast === undefined) return;
  const slow = JSON.parse(text) as Record<string, unknown>;
  expect(Object.getPrototypeOf(fast)).toBe(Object.prototype);
  expect(Object.keys(fast)).toEqual(Object.keys(slow));
  for (const k of Object.keys(slow)) expect(Object.is(fast[k], slow[k])).toBe(true);
}

/** A string JSON writes without an escape: no quote, backslash or control character. */
const plainString = fc.string({ unit: "binary" }).filter((s) => [...s].every((ch) => ch !== '"' && ch !== "\\" && ch.charCodeAt(0) >= 32));
const flatValue = fc.oneof(
  plainString,
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(true, false, null, -0, 0, 1e21, 5e-324, 1.7976931348623157e308),
);
// `__proto__` is the one plain key the reader leaves to JSON.parse (tested below).
const flatObject = fc.dictionary(
  plainString.filter((k) => k !== "__proto__"),
  flatValue,
  { maxKeys: 6 },
);

describe("reading flat tool-call arguments without JSON.parse", () => {
  it("reads every flat object of plain members as JSON.parse does, compact or indented", () => {
    fc.assert(
      fc.property(flatObject, fc.constantFrom(undefined, 1, 2, "\t"), (o, indent) => {
        const text = JSON.stringify(o, null, indent);
        expect(readFlatObject(text)).toBeDefined();
        expectSameAsJsonParse(text);
      }),
      { numRuns: 2000 },
    );
  });

  it("reads numbers in every spelling JSON allows as JSON.parse does", () => {
    for (const n of [
      "0",
      "-0",
      "12",
      "-12",
      "1.5",
      "-0.0",
      "1e3",
      "1E+3",
      "1e-3",
      "2.5E-10",
      "123456789012345678901234567890",
      "1e400",
      "-1e400",
    ]) {
      const text = `{"n":${n}}`;
      expect(readFlatObject(text)).toBeDefined();
      expectSameAsJsonParse(text);
    }
  });

  it("keeps a repeated key in its first place with its last value, and index-like keys where JSON.parse puts them", () => {
    for (const text of ['{"a":1,"b":2,"a":3}', '{"b":1,"2":2,"1":3,"a":4}', '{"constructor":"c","toString":"t","hasOwnProperty":1}']) {
      expect(readFlatObject(text)).toBeDefined();
      expectSameAsJsonParse(text);
    }
  });

  it("steps aside for nesting, escapes, control characters, __proto__, whitespace JSON does not allow and any syntax error", () => {
    const aside = [
      '{"a":{"b":1}}',
      '{"a":[1]}',
      '{"a":"x\\"y"}',
      '{"a\\u0041":1}',
      '{"a":"line\nbreak"}',
      '{"__proto__":{"x":1}}',
      '{"__proto__":1}',
      '{"a":1,}',
      '{"a":1',
      '{"a" 1}',
      '{"a":01}',
      '{"a":1.}',
      '{"a":.5}',
      '{"a":+1}',
      '{"a":1e}',
      '{"a":-}',
      '{"a":tru}',
      '{"a":True}',
      '{"a":NaN}',
      "{a:1}",
      "{'a':1}",
      '{"a":1}x',
      '{"a":1}}',
      '\u00a0{"a":1}',
      '{"a":1}\u000b',
      "[1]",
      '"x"',
      "1",
      "",
      "{",
      "}",
    ];
    for (const text of aside) expect(readFlatObject(text), text).toBeUndefined();
  });

  it("never answers differently from JSON.parse on arbitrary text, or on flat objects with a character changed", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (text) => expectSameAsJsonParse(text)),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(flatObject, fc.nat(), fc.string({ unit: "binary", minLength: 1, maxLength: 2 }), (o, at, insert) => {
        const text = JSON.stringify(o);
        const i = at % (text.length + 1);
        const changed = text.slice(0, i) + insert + text.slice(i + 1);
        const fast = readFlatObject(changed);
        if (fast === undefined) return;
        // Where it answers, the text is JSON (JSON.parse does not throw) and the answers agree.
        expectSameAsJsonParse(changed);
      }),
      { numRuns: 3000 },
    );
  });

  it("gives tool-call args the object JSON.parse gives, and leaves other text to JSON.parse's rules", () => {
    expect(parseToolArgs('{"city":"Paris","days":3}')).toEqual({ args: { city: "Paris", days: 3 } });
    expect(parseToolArgs(" { } ")).toEqual({ args: {} });
    expect(parseToolArgs('{"a":{"b":[1]}}')).toEqual({ args: { a: { b: [1] } } });
    expect(parseToolArgs('{"a":1,}').extras?.args_error).toMatch(/^invalid JSON: /);
    const proto = parseToolArgs('{"__proto__":{"polluted":1}}').args;
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype);
    expect(Object.keys(proto)).toEqual(["__proto__"]);
  });
});
