import { describe, expect, it } from "vitest";
import { traceable, getCurrentRun } from "../../src/tracing/index.js";
import { MemoryWriter } from "../../src/run/memory.js";

describe("traceable", () => {
  it("wraps a sync function, keeping its result and recording inputs and outputs", () => {
    const w = new MemoryWriter();
    const add = traceable((a: number, b: number) => a + b, { name: "add", client: w, tags: ["math"], metadata: { v: 1 } });
    expect(add(2, 3)).toBe(5);
    const [run] = w.list();
    expect(run).toMatchObject({
      name: "add",
      run_type: "chain",
      inputs: { args: [2, 3] },
      outputs: { output: 5 },
      tags: ["math"],
      extra: { metadata: { v: 1 } },
    });
    expect(run!.end_time).toBeDefined();
  });

  it("takes one plain object argument as the inputs", async () => {
    const w = new MemoryWriter();
    await traceable(async (q: { question: string }) => ({ answer: q.question.length }), { client: w })({ question: "why" });
    expect(w.list()[0]).toMatchObject({ inputs: { question: "why" }, outputs: { answer: 3 } });
  });

  it("gives parallel children the right parent", async () => {
    const w = new MemoryWriter();
    const child = traceable(
      async (i: number) => {
        await new Promise((r) => setTimeout(r, 5 - i));
        return getCurrentRun()!.parent_run_id;
      },
      { name: "child", client: w },
    );
    const parent = traceable(async (tag: string) => Promise.all([child(1), child(2), child(3)]).then((ps) => ({ tag, ps })), {
      name: "parent",
      client: w,
    });
    const [a, b] = await Promise.all([parent("a"), parent("b")]);
    const parents = w.list().filter((r) => r.name === "parent");
    const byTag = Object.fromEntries(parents.map((p) => [(p.inputs as { input: string }).input, p.id]));
    expect(a.ps).toEqual([byTag.a, byTag.a, byTag.a]);
    expect(b.ps).toEqual([byTag.b, byTag.b, byTag.b]);
    for (const c of w.list().filter((r) => r.name === "child")) {
      const p = parents.find((x) => x.id === c.parent_run_id)!;
      expect(c.trace_id).toBe(p.id);
      expect(c.dotted_order.startsWith(p.dotted_order + ".")).toBe(true);
    }
  });

  it("records an error and rethrows the same error object", async () => {
    const w = new MemoryWriter();
    const boom = new RangeError("nope");
    const f = traceable(
      async () => {
        throw boom;
      },
      { client: w },
    );
    await expect(f()).rejects.toBe(boom);
    const g = traceable(
      () => {
        throw boom;
      },
      { client: w },
    );
    expect(() => g()).toThrow(boom);
    expect(w.list().map((r) => r.error)).toEqual(["RangeError: nope", "RangeError: nope"]);
  });

  it("traces generators and async generators, collecting what they yield", async () => {
    const w = new MemoryWriter();
    const gen = traceable(
      function* (n: number) {
        for (let i = 0; i < n; i++) yield i;
        return "done";
      },
      { name: "gen", client: w },
    );
    expect([...gen(3)]).toEqual([0, 1, 2]);
    const agen = traceable(
      async function* () {
        yield "a";
        yield getCurrentRun()?.name;
      },
      { name: "agen", client: w },
    );
    const out: unknown[] = [];
    for await (const x of agen()) out.push(x);
    expect(out).toEqual(["a", "agen"]);
    expect(w.list().map((r) => r.outputs)).toEqual([{ output: [0, 1, 2], return: "done" }, { output: ["a", "agen"] }]);
  });

  it("marks a generator abandoned by break as cancelled", () => {
    const w = new MemoryWriter();
    const gen = traceable(
      function* () {
        yield 1;
        yield 2;
        yield 3;
      },
      { client: w },
    );
    for (const x of gen()) if (x === 2) break;
    expect(w.list()[0]).toMatchObject({ error: "cancelled", outputs: { output: [1, 2] } });
  });

  it("orders siblings started in the same millisecond by dotted_order", () => {
    const w = new MemoryWriter();
    const leaf = traceable(() => 1, { name: "leaf", client: w });
    traceable(
      () => {
        for (let i = 0; i < 50; i++) leaf();
      },
      { name: "root", client: w },
    )();
    const leaves = w.calls
      .filter((c) => c.kind === "create" && c.run.name === "leaf")
      .map((c) => (c as { run: { dotted_order: string } }).run.dotted_order);
    expect([...leaves].sort()).toEqual(leaves);
    expect(new Set(leaves).size).toBe(50);
  });

  it("applies processInputs and processOutputs", () => {
    const w = new MemoryWriter();
    traceable((x: { password: string }) => ({ token: x.password }), {
      client: w,
      processInputs: (i) => ({ ...i, password: "***" }),
      processOutputs: () => ({ token: "***" }),
    })({ password: "hunter2" });
    expect(JSON.stringify(w.calls)).not.toContain("hunter2");
  });
});

describe("langsmith compatibility", () => {
  it("records arguments the way langsmith's traceable does, and takes project_name for project", async () => {
    const w = new MemoryWriter();
    const f = traceable((..._a: unknown[]) => "ok", { name: "f", client: w, project_name: "ls-project" });
    f({ q: "hi" });
    f("plain");
    f("a", 2);
    f(null);
    f();
    const posts = [...w.runs.values()];
    expect(posts.map((r) => r.inputs)).toEqual([{ q: "hi" }, { input: "plain" }, { args: ["a", 2] }, { inputs: null }, {}]);
    expect(posts.every((r) => r.session_name === "ls-project")).toBe(true);
  });
});
