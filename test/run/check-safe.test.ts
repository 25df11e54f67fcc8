import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkSafe, makeSafe, type SafeLimits } from "../../src/run/safe.js";

const run = () => ({
  id: "0190a000-0000-7000-8000-000000000001",
  name: "chat",
  inputs: { messages: [{ role: "user", content: [{ type: "text", text: "hi ✓" }] }] },
  outputs: { messages: [{ role: "assistant", content: [], usage_metadata: { input_tokens: 1, output_tokens: 2, total_tokens: 3 } }] },
  extra: { metadata: { otel: { trace_id: "ab", kind: 0, scope: undefined }, flags: [true, false, null, -0, 1.5] } },
  events: [],
  tags: [],
  end_time: undefined,
});

/** checkSafe says "as it is" only where makeSafe's copy is equal to the value, and reports makeSafe's byte figure. */
function agrees(v: unknown, limits?: SafeLimits): number | undefined {
  const bytes = checkSafe(v, limits);
  if (bytes !== undefined) {
    const made = makeSafe(v, limits);
    expect(JSON.stringify(made.value)).toBe(JSON.stringify(v));
    expect(bytes).toBe(made.bytes);
  }
  return bytes;
}

describe("checkSafe", () => {
  it("keeps plain JSON data as it is, with makeSafe's byte figure", () => {
    expect(agrees(run())).toBeGreaterThan(100);
    const shared = { a: 1 };
    expect(agrees({ x: shared, y: [shared, shared] })).toBeDefined(); // a DAG, not a cycle: written again, as makeSafe does
    expect(agrees(Object.assign(Object.create(null) as object, { a: "b" }))).toBeDefined();
  });

  it.each([
    [
      "a cycle",
      () => {
        const o: Record<string, unknown> = { a: 1 };
        o.self = o;
        return o;
      },
    ],
    ["a Date", () => ({ at: new Date(0) })],
    ["a Map", () => ({ m: new Map([[1, 2]]) })],
    [
      "a class instance",
      () => ({
        c: new (class Point {
          x = 1;
        })(),
      }),
    ],
    ["a toJSON", () => ({ t: { toJSON: () => "x" } })],
    ["a bigint", () => ({ n: 1n })],
    ["a function", () => ({ f: () => 1 })],
    ["a symbol", () => ({ s: Symbol("s") })],
    ["NaN", () => ({ n: NaN })],
    ["Infinity", () => [Infinity]],
    ["undefined in an array", () => ({ a: [1, undefined] })],
    ["a __proto__ key", () => JSON.parse('{"__proto__": {"x": 1}}') as unknown],
    ["a Buffer", () => ({ b: Buffer.from("x") })],
    [
      "a getter that throws",
      () =>
        Object.defineProperty({}, "boom", {
          enumerable: true,
          get: () => {
            throw new Error("no");
          },
        }),
    ],
  ])("leaves %s to makeSafe", (_what, make) => {
    expect(checkSafe(make())).toBeUndefined();
  });

  it("keeps its own limits when a getter checks another value in the middle of the walk", () => {
    const inner = run();
    let innerBytes: number | undefined;
    const o: Record<string, unknown> = {};
    Object.defineProperty(o, "first", { enumerable: true, get: () => ((innerBytes = checkSafe(inner)), "x") });
    o.big = "y".repeat(500);
    expect(checkSafe(o, { maxBytes: 200 })).toBeUndefined(); // over its budget, whatever the getter did
    expect(innerBytes).toBe(makeSafe(inner).bytes);
    // And the shared checker is left clean for the next value.
    expect(agrees(run())).toBe(makeSafe(run()).bytes);
  });

  it("leaves values past a limit to makeSafe (which cuts them)", () => {
    expect(agrees(run(), { maxStringLength: 3 })).toBeUndefined();
    expect(agrees(run(), { maxBytes: 200 })).toBeUndefined();
    expect(agrees(run(), { maxDepth: 4 })).toBeUndefined();
    expect(agrees(run(), { maxDepth: 9 })).toBeDefined();
    const many = { list: Array.from({ length: 1500 }, (_, i) => ({ i })) };
    expect(agrees(many)).toBeUndefined(); // past the point where makeSafe starts tracking shared objects
    // At every budget around the run's own size, the two agree on whether it fits.
    const need = makeSafe(run()).bytes;
    for (let b = need - 20; b <= need + 20; b++) {
      const fits = agrees(run(), { maxBytes: b }) !== undefined;
      const made = makeSafe(run(), { maxBytes: b });
      if (fits) expect(JSON.stringify(made.value)).toBe(JSON.stringify(run()));
      else expect(b).toBeLessThan(need + 20);
    }
  });

  it("agrees with makeSafe on any JSON value, at any limits: strings, nulls and objects in arrays and objects alike", () => {
    let kept = 0;
    let left = 0;
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 6 }),
        fc.record(
          {
            maxDepth: fc.integer({ min: 1, max: 8 }),
            maxStringLength: fc.integer({ min: 0, max: 40 }),
            maxBytes: fc.integer({ min: 1, max: 2000 }),
          },
          { requiredKeys: [] },
        ),
        (v, limits) => {
          // -0 is written as 0 by JSON and makeSafe alike; the comparison is of the JSON.
          const bytes = agrees(v, limits);
          if (bytes === undefined) left++;
          else kept++;
          // Within every limit, a value made only of JSON is kept as it is.
          if (
            typeof v === "object" &&
            v !== null &&
            limits.maxDepth === undefined &&
            limits.maxBytes === undefined &&
            limits.maxStringLength === undefined
          ) {
            expect(bytes).toBeDefined();
          }
        },
      ),
      { numRuns: 2000, seed: 15 },
    );
    // Both answers were given many times: the property is not passed by always saying one thing.
    expect(kept).toBeGreaterThan(200);
    expect(left).toBeGreaterThan(200);
  });
});

describe("makeSafe's copy of a `__proto__` key", () => {
  it("keeps it as a field (what JSON.parse made, and what JSON.stringify writes), not as the copy's prototype", () => {
    const host = JSON.parse('{"a":1,"__proto__":{"x":1},"b":{"__proto__":[2]}}') as unknown;
    const { value } = makeSafe(host);
    expect(JSON.stringify(value)).toBe('{"a":1,"__proto__":{"x":1},"b":{"__proto__":[2]}}');
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect((value as { x?: unknown }).x).toBeUndefined();
  });
});
