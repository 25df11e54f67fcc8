import { describe, expect, it } from "vitest";
import { CIRCULAR, makeSafe, SHARED, TRUNCATED_KEYS } from "../../src/run/safe.js";
import { approxJsonSize } from "../../src/ingest/ops.js";
import { backRefGraph } from "../ingest/values.js";

/** A DAG where every node references the next one twice: 2^depth paths, no cycle. */
function diamondChain(depth: number): Record<string, unknown> {
  let node: Record<string, unknown> = { leaf: "x".repeat(20) };
  for (let i = 0; i < depth; i++) node = { a: node, b: node };
  return node;
}

describe("makeSafe", () => {
  for (const n of [2, 10, 1000]) {
    it(`reads each field of a graph with ${n} children linking back to their parent once, and marks the cycles`, () => {
      const g = backRefGraph(n);
      const { value } = makeSafe({ inputs: { graph: g.root } });
      // Linear: one read per field (the old size estimate read 2^levels of them).
      expect(g.reads()).toBe(g.fields);
      const graph = (value as { inputs: { graph: { children: Record<string, unknown>[] } } }).inputs.graph;
      expect(graph.children).toHaveLength(n);
      for (const c of graph.children) expect(c).toEqual({ i: expect.any(Number), parent: CIRCULAR, owner: { root: CIRCULAR } });
    });
  }

  it("bounds the copy of a DAG with 2^40 paths and marks the repeats it does not write", () => {
    const { value, bytes } = makeSafe(diamondChain(40));
    const text = JSON.stringify(value);
    expect(text.length).toBeLessThan(2 * 1024 * 1024);
    expect(bytes).toBeLessThan(2 * 1024 * 1024);
    expect(text).toContain(JSON.stringify(SHARED));
  });

  it("writes a small shared object each time it appears", () => {
    const shared = { v: 1 };
    expect(makeSafe({ a: shared, b: [shared, shared] }).value).toEqual({ a: { v: 1 }, b: [{ v: 1 }, { v: 1 }] });
  });

  it("turns BigInt, Symbol, functions and undefined into JSON", () => {
    const out = makeSafe({ big: 2n ** 70n, sym: Symbol("s"), fn: () => 1, u: undefined, arr: [undefined, () => 2] }).value;
    expect(out).toEqual({ big: "1180591620717411303424", sym: "Symbol(s)", fn: "[Function fn]", arr: [null, "[Function anonymous]"] });
  });

  it("truncates a 20 MB string and says how much was cut", () => {
    const s = "y".repeat(20_000_000);
    const out = makeSafe({ s }, { maxStringLength: 1000 }).value as { s: string };
    expect(out.s.startsWith("y".repeat(1000) + "…")).toBe(true);
    expect(out.s).toContain(`[truncated ${20_000_000 - 1000} chars]`);
  });

  it("caps the whole value and counts the keys and items it cut", () => {
    const wide: Record<string, string> = {};
    for (let i = 0; i < 1000; i++) wide[`k${i}`] = "z".repeat(100);
    const o = makeSafe({ wide, list: Array.from({ length: 1000 }, () => "w".repeat(100)) }, { maxBytes: 20_000 }).value as {
      wide: Record<string, unknown>;
      list?: unknown[];
    };
    expect(o.wide[TRUNCATED_KEYS]).toBeGreaterThan(800);
    expect(JSON.stringify(o).length).toBeLessThan(25_000);
  });

  it("marks nesting deeper than the cap instead of overflowing the stack", () => {
    let deep: unknown = "bottom";
    for (let i = 0; i < 10_000; i++) deep = [deep];
    const text = JSON.stringify(makeSafe(deep).value);
    expect(text).toContain("[MaxDepth]");
  });

  it("survives hostile objects: throwing getters, toJSON and proxies", () => {
    const proxy = new Proxy(
      {},
      {
        ownKeys: () => {
          throw new Error("no keys");
        },
      },
    );
    const out = makeSafe({
      proxy,
      j: {
        toJSON() {
          throw new Error("nope");
        },
      },
      self: {
        toJSON() {
          return this;
        },
        x: 1,
      },
    }).value as Record<string, unknown>;
    expect(out.proxy).toBe("[Thrown: no keys]");
    expect(out.j).toBe("[Thrown: nope]");
    expect(out.self).toMatchObject({ x: 1 });
  });

  it("gives Map, Set, Date, Error and binary values their documented forms", () => {
    const out = makeSafe({ m: new Map([["k", 1n]]), s: new Set([1]), d: new Date(0), e: new RangeError("r"), u8: new Uint8Array([255]) })
      .value as Record<string, unknown>;
    expect(out.m).toEqual({ __type: "Map", entries: [["k", "1"]] });
    expect(out.s).toEqual({ __type: "Set", values: [1] });
    expect(out.d).toBe("1970-01-01T00:00:00.000Z");
    expect(out.e).toMatchObject({ name: "RangeError", message: "r" });
    expect(out.u8).toEqual({ __type: "Uint8Array", length: 1, base64: "/w==" });
  });
});

describe("approxJsonSize", () => {
  it("reads at most its budget of values on shared back-references (it was exponential)", () => {
    const g = backRefGraph(1000);
    expect(approxJsonSize({ graph: g.root }, 50_000)).toBeGreaterThan(0);
    expect(g.reads()).toBeLessThanOrEqual(50_000);
  });

  it("stops at its node budget on a DAG with 2^40 paths: its estimate grows with the budget, not the paths", () => {
    const small = approxJsonSize(diamondChain(40), 10_000);
    const large = approxJsonSize(diamondChain(40), 100_000);
    // Every node visited adds at most its key, braces and a 20-character leaf: under 16 characters
    // a node on average here, and at least the 2 of its braces.
    expect(large).toBeLessThanOrEqual(16 * 100_000);
    expect(large).toBeGreaterThanOrEqual(2 * 100_000);
    // Ten times the budget, ten times the estimate (within 1%): the walk ends at the budget.
    expect(Math.abs(large / small / 10 - 1)).toBeLessThan(0.01);
    // A budget shorter than the chain: the walk goes down the `a` links and stops after exactly
    // `budget` nodes, each adding its braces (2) and its one key `"a":` (5), and nothing more.
    for (const budget of [1, 10, 30]) expect(approxJsonSize(diamondChain(40), budget)).toBe(7 * budget);
  });
});
