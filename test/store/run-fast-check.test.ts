/**
 * The quick way through the Run / RunPatch schemas (store/run-fast-check.ts)
 * may only say "the schema would accept this and give it back unchanged":
 * whatever it accepts, the schema accepts with an equal value, and what it
 * declines the schema judges (so every issue is the schema's).
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { Run, RunPatch } from "../../src/run/schema.js";
import { quickPatch, quickRun } from "../../src/store/run-fast-check.js";

const ID = "0192b3c4-0000-7000-8000-000000000001";
const base = () => ({
  id: ID,
  trace_id: ID,
  dotted_order: `20261122T000000000000Z${ID}`,
  name: "bench",
  run_type: "chain",
  start_time: "2026-11-22T00:00:00.000000Z",
  end_time: "2026-11-22T00:00:01.5Z",
  inputs: { text: "hi" },
  outputs: { text: "there" },
  events: [{ name: "new_token", time: "2026-11-22T00:00:00.5Z", kwargs: { token: "a" } }],
  tags: ["a"],
  extra: { metadata: { k: 1 } },
  session_name: "p",
});

const FIELDS = [
  "id",
  "trace_id",
  "parent_run_id",
  "dotted_order",
  "name",
  "run_type",
  "start_time",
  "end_time",
  "inputs",
  "outputs",
  "error",
  "events",
  "tags",
  "extra",
  "session_name",
  "other",
];
/** Values a field may be set to: right and wrong types, edge strings, epoch milliseconds, objects with a `__proto__` key, nested wrong shapes. */
const fieldValue = fc.oneof(
  fc.jsonValue(),
  fc.constantFrom(
    null,
    "",
    "0192b3c4-0000-7000-8000-000000000002",
    "0192b3c4-0000-0000-8000-000000000002",
    "00000000-0000-0000-0000-000000000000",
    "2026-02-30T00:00:00Z",
    "2026-11-22 10:00:00+0100",
    "2026-11-22T24:00:00Z",
    1732233600000,
    -1,
    Number.NaN,
  ),
  fc.constant(JSON.parse('{"__proto__": {"x": 1}, "a": 1}') as unknown),
  fc.constant(new Date(0)),
  fc.constant({ metadata: null }),
  fc.constant({ metadata: JSON.parse('{"__proto__": 1}') as unknown }),
  fc.constant([{ name: "e", time: 5 }]),
  fc.constant([{ name: "e", time: "2026-11-22T00:00:00Z", kwargs: null }]),
  fc.constant([{ name: 1, time: "2026-11-22T00:00:00Z" }]),
  fc.constant(["a", 1]),
);
const mutation = fc.tuple(fc.constantFrom(...FIELDS), fc.option(fieldValue, { nil: undefined }), fc.boolean());
const record = fc.array(mutation, { maxLength: 4 }).map((ms) => {
  const r: Record<string, unknown> = base();
  for (const [field, value, remove] of ms) {
    if (remove) delete r[field];
    else r[field] = value;
  }
  return r;
});

describe("the quick way through the run schemas", () => {
  it("accepts only what the schema accepts, and gives back what the schema gives back", () => {
    fc.assert(
      fc.property(record, (r) => {
        for (const [quick, schema] of [
          [quickRun, Run],
          [quickPatch, RunPatch],
        ] as const) {
          const q = quick(structuredClone(r));
          if (q === undefined) continue;
          const z = schema.safeParse(structuredClone(r));
          expect(z.success).toBe(true);
          expect(q).toStrictEqual(z.data);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it("takes the usual post and patch", () => {
    expect(quickRun(base())).toBeDefined();
    expect(quickPatch({ id: ID, end_time: "2026-11-22T00:00:02Z", outputs: { a: 1 } })).toBeDefined();
  });

  it("leaves to the schema what it transforms or refuses", () => {
    expect(quickRun({ ...base(), start_time: 1732233600000 })).toBeUndefined();
    expect(quickRun({ ...base(), start_time: "2026-02-30T00:00:00Z" })).toBeUndefined();
    expect(quickRun({ ...base(), inputs: JSON.parse('{"__proto__": 1}') as unknown })).toBeUndefined();
    expect(quickPatch({ end_time: "2026-11-22T00:00:02Z" })).toBeUndefined();
    expect(
      quickRun({ ...base(), events: Array.from({ length: 1000 }, () => ({ name: "e", time: "2026-11-22T00:00:00Z" })) }),
    ).toBeUndefined();
  });
});
