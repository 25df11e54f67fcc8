import { describe, expect, it } from "vitest";
import { Messages } from "../../src/format/schema.js";
import { surelyMessages } from "../../src/format/shape.js";
import { validate } from "../../src/format/validate.js";

/** Every block type and optional field the schema has, in messages zod accepts. */
const valid = (): unknown[] => [
  { role: "system", content: [{ type: "text", text: "s", annotations: [{ url: "u" }], extras: { a: 1 } }], extras: { b: [1] } },
  {
    role: "user",
    content: [
      { type: "text", text: "look" },
      { type: "image", base64: "AA", mime_type: "image/png" },
      { type: "file", url: "https://x.test/f.pdf" },
      { type: "audio", id: "a1", extras: {} },
      { type: "video", url: "u", mime_type: "video/mp4" },
    ],
  },
  { role: "reasoning", content: [{ type: "reasoning", text: "r", extras: { sig: "x" } }] },
  {
    role: "assistant",
    content: [
      { type: "tool_call", id: "c1", name: "f", args: { x: 1 } },
      { type: "tool_call", args: {} },
      { type: "server_tool_call", id: "s1", name: "web", args: { q: "x" } },
      { type: "server_tool_result", tool_call_id: "s1", status: "success", output: { hits: [] } },
      { type: "server_tool_result", tool_call_id: "s1", id: "r", status: "error" },
    ],
    usage_metadata: {
      input_tokens: 10,
      output_tokens: 5,
      total_tokens: 15,
      input_token_details: { cache_read: 2, cache_creation: 1, audio: 0, vendor_count: 3 },
      output_token_details: { reasoning: 1, audio: 0 },
      estimated: true,
      input_cost: 0.1,
      output_cost: 0,
      total_cost: 0.1,
      extras: { raw: {} },
    },
  },
  { role: "tool", tool_call_id: "c1", content: [{ type: "text", text: "r" }], extras: { orphan: false } },
];

class Thing {
  x = 1;
}
const sym = Symbol("s");
/** Odd values for any field: what zod accepts of them, the fast check must not guess at. */
const ODD: unknown[] = [
  undefined,
  null,
  0,
  -0,
  -1,
  1.5,
  2 ** 60,
  NaN,
  Infinity,
  "",
  "x",
  "success",
  "text",
  true,
  [],
  [{}],
  {},
  { [sym]: 1 },
  { constructor: () => 1 },
  Object.create(null) as object,
  new Thing(),
  new Date(0),
  new Map(),
];

/** Every path to a value (object key or array index) in `v`. */
function paths(v: unknown, at: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (typeof v !== "object" || v === null) return out;
  for (const k of Array.isArray(v) ? v.keys() : Object.keys(v)) {
    const p = [...at, k];
    out.push(p);
    paths((v as Record<string | number, unknown>)[k], p, out);
  }
  return out;
}

function setAt(root: unknown, path: (string | number)[], value: unknown, del = false): void {
  let o = root as Record<string | number, unknown>;
  for (const k of path.slice(0, -1)) o = o[k] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (del) delete o[last];
  else o[last] = value;
}

describe("surelyMessages (validate's fast path)", () => {
  it("says yes to well-formed messages of every block type, as zod does", () => {
    const msgs = valid();
    expect(Messages.safeParse(msgs).success).toBe(true);
    expect(surelyMessages(msgs)).toBe(true);
    expect(surelyMessages([])).toBe(true);
  });

  it("never says yes where zod refuses: every field replaced by odd values, deleted, or joined by an unknown key", () => {
    let mutations = 0;
    let refusedByZod = 0;
    const check = (mutated: unknown, what: string) => {
      mutations++;
      const zodOk = Messages.safeParse(mutated).success;
      if (!zodOk) refusedByZod++;
      if (surelyMessages(mutated) && !zodOk) throw new Error(`fast path accepted what zod refuses: ${what}`);
    };
    for (const path of paths(valid())) {
      for (const [i, odd] of ODD.entries()) {
        const m = valid();
        setAt(m, path, odd);
        check(m, `${JSON.stringify(path)} = ODD[${i}]`);
      }
      const m = valid();
      setAt(m, path, undefined, true);
      check(m, `delete ${JSON.stringify(path)}`);
    }
    // An unknown key on every object, and a symbol key on every object.
    for (const path of [[], ...paths(valid())]) {
      const m = valid();
      let target: unknown = m;
      for (const k of path) target = (target as Record<string | number, unknown>)[k];
      if (typeof target !== "object" || target === null || Array.isArray(target)) continue;
      (target as Record<string, unknown>).surprise = 1;
      check(m, `unknown key at ${JSON.stringify(path)}`);
      const n = valid();
      let t2: unknown = n;
      for (const k of path) t2 = (t2 as Record<string | number, unknown>)[k];
      (t2 as Record<symbol, unknown>)[sym] = 1;
      check(n, `symbol key at ${JSON.stringify(path)}`);
    }
    for (const odd of ODD) check(odd, "top level");
    // The mutations are not all harmless: zod refuses many of them, and the fast path said no to each.
    expect(mutations).toBeGreaterThan(1000);
    expect(refusedByZod).toBeGreaterThan(500);
  });

  it("leaves validate's results as zod makes them", () => {
    const m = valid();
    (m[1] as { content: unknown[] }).content.push({ type: "text" }, { type: "bogus" });
    (m[0] as Record<string, unknown>).foo = 1;
    const issues = validate(m);
    expect(issues.map((i) => JSON.stringify(i.loc))).toEqual(expect.arrayContaining(['[1,"content",5,"text"]', '[1,"content",6,"type"]', '[0,"foo"]']));
    expect(validate(valid())).toEqual([]);
  });
});
