import { describe, expect, it } from "vitest";
import { nativeSchemas } from "../../src/format/schema.js";

const { Messages } = nativeSchemas();
import { surelyMessages, surelyValid } from "../../src/format/shape.js";
import { everyIssue, validate } from "../../src/format/validate.js";

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
    expect(issues.map((i) => JSON.stringify(i.loc))).toEqual(
      expect.arrayContaining(['[1,"content",5,"text"]', '[1,"content",6,"type"]', '[0,"foo"]']),
    );
    expect(validate(valid())).toEqual([]);
  });
});

describe("surelyValid (validate's one-walk answer for messages with nothing to report)", () => {
  /** Each mutation of the valid messages that breaks one of validate's rules on top of zod's shape. */
  const ruleBreakers: [string, (m: Record<string, unknown>[]) => void][] = [
    ["a tool result naming no earlier call", (m) => void (m[4]!.tool_call_id = "nope")],
    ["a tool_call_id on an assistant message", (m) => void (m[3]!.tool_call_id = "c1")],
    ["a tool result before its call", (m) => void m.splice(3, 0, m.splice(4, 1)[0]!)],
    ["a call made by a user message, not an assistant's", (m) => void (m[3]!.role = "user")],
    ["a media block with two sources", (m) => void ((m[1]!.content as Record<string, unknown>[])[2]!.id = "f1")],
    ["a media block with no source", (m) => void delete (m[1]!.content as Record<string, unknown>[])[3]!.id],
    ["base64 without mime_type", (m) => void delete (m[1]!.content as Record<string, unknown>[])[1]!.mime_type],
    ["a call id that is not a string", (m) => void ((m[3]!.content as Record<string, unknown>[])[0]!.id = 1)],
    [
      "a tool_call_id on a later assistant message, naming an earlier call",
      (m) => void m.push({ role: "assistant", tool_call_id: "c1", content: [] }),
    ],
    ["an orphan's tool_call_id that is not a string", (m) => void Object.assign(m[4]!, { tool_call_id: 5, extras: { orphan: true } })],
  ];

  it("says yes to the well-formed messages, and agrees with validate's full checks", () => {
    expect(everyIssue(valid(), false)).toEqual([]);
    expect(surelyValid(valid())).toBe(true);
    expect(surelyValid([])).toBe(true);
    // A result whose call was trimmed away is accepted when it says so (DESIGN), as validate accepts it.
    const orphan = valid() as Record<string, unknown>[];
    orphan[4]!.tool_call_id = "gone";
    orphan[4]!.extras = { orphan: true };
    expect(everyIssue(orphan, false)).toEqual([]);
    expect(surelyValid(orphan)).toBe(true);
  });

  it("says no to every message list validate finds an issue in: each rule broken, and every shape mutation", () => {
    for (const [what, breakIt] of ruleBreakers) {
      const m = valid() as Record<string, unknown>[];
      breakIt(m);
      expect(everyIssue(m, false).length, what).toBeGreaterThan(0);
      expect(surelyValid(m), what).toBe(false);
      expect(validate(m), what).toEqual(everyIssue(m, false));
    }
    let mutations = 0;
    let withIssues = 0;
    for (const path of paths(valid())) {
      for (const [i, odd] of ODD.entries()) {
        const m = valid();
        setAt(m, path, odd);
        mutations++;
        const issues = everyIssue(m, false);
        if (issues.length) withIssues++;
        if (surelyValid(m) && issues.length)
          throw new Error(`surelyValid said yes with issues at ${JSON.stringify(path)} = ODD[${i}]: ${JSON.stringify(issues)}`);
        expect(validate(m)).toEqual(issues);
      }
    }
    expect(mutations).toBeGreaterThan(1000);
    expect(withIssues).toBeGreaterThan(500);
  });

  it("is skipped in strict mode, whose rules it does not know", () => {
    const m = valid();
    expect(surelyValid(m)).toBe(true);
    expect(validate(m, { strict: true }).map((i) => i.type)).toContain("extra_forbidden");
  });
});
