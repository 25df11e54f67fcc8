import { describe, expect, it } from "vitest";
import { cleanupAfterEach } from "../helpers/cleanup.js";
import { join } from "node:path";
import { Client } from "../../src/ingest/index.js";
import { traceable } from "../../src/tracing/traceable.js";
import { CIRCULAR } from "../../src/run/safe.js";
import { openStore } from "../../src/store/index.js";
import { startCollector } from "../helpers/collector.js";
import { makeRun, tempDir } from "../helpers/runs.js";
import { backRefGraph } from "./values.js";

const { cleanup, collector } = cleanupAfterEach();

function client(endpoint: string | undefined): Client {
  const dir = tempDir("tp-hostile-");
  const c = new Client({
    endpoint,
    apiKey: "k",
    spoolDir: join(dir, "spool"),
    deadLetterPath: join(dir, "dead.jsonl"),
    dbPath: join(dir, "traces.db"),
    exitHooks: false,
    backoff: { baseMs: 10, maxMs: 200 },
    warn: () => {},
  });
  cleanup.push(async () => void (await c.shutdown()));
  return c;
}

/** Nesting `depth` arrays deep. */
function nested(depth: number): unknown {
  let v: unknown = "bottom";
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

function badValue(): Record<string, unknown> {
  const circ: Record<string, unknown> = { name: "loop" };
  circ.self = circ;
  return { big: 10n ** 30n, circ, deep: nested(6000), sym: Symbol("x"), fn: function handler() {} };
}

describe("hostile values handed to the Client", () => {
  for (const n of [2, 10, 1000]) {
    it(`createRun reads a graph with ${n} shared back-references once (as a plain run of the same size) and the run arrives with the cycles marked`, async () => {
      const col = await collector();
      const c = client(col.url);
      const g = backRefGraph(n);
      const run = makeRun("backrefs");
      c.createRun({ ...run, inputs: { graph: g.root } });
      // The work createRun did is the reads of the caller's fields: exactly one per field.
      expect(g.reads()).toBe(g.fields);
      // Later changes are not seen (the copy was made at hand-over), so nothing else reads the graph.
      const r = await c.flush();
      expect(r.ok).toBe(true);
      expect(g.reads()).toBe(g.fields);
      const stored = (await col.collector.store.getRun(run.id))!;
      const children = (stored.inputs as { graph: { children: Record<string, unknown>[] } }).graph.children;
      expect(children).toHaveLength(n);
      expect(children.every((ch) => ch.parent === CIRCULAR && (ch.owner as { root: unknown }).root === CIRCULAR)).toBe(true);
    });
  }

  it("delivers BigInt, Symbol, functions and a 20 MB string, the string cut with a marker", async () => {
    const col = await collector();
    const c = client(col.url);
    const run = makeRun("awkward");
    const huge = "q".repeat(20_000_000);
    c.createRun({ ...run, inputs: { big: 2n ** 64n, sym: Symbol.for("tag"), fn: Math.max, huge } });
    c.updateRun(run.id, { outputs: { big: -5n, more: () => 0 }, end_time: "2026-11-22T10:16:00.000000Z" });
    expect((await c.flush()).ok).toBe(true);
    const stored = (await col.collector.store.getRun(run.id))!;
    const inputs = stored.inputs as Record<string, string>;
    expect(inputs.big).toBe("18446744073709551616");
    expect(inputs.sym).toBe("Symbol(tag)");
    expect(inputs.fn).toBe("[Function max]");
    const kept = 8 * 1024 * 1024;
    expect(inputs.huge!.length).toBeLessThan(kept + 100);
    expect(inputs.huge!.endsWith(`…[truncated ${20_000_000 - kept} chars]`)).toBe(true);
    expect(stored.outputs).toEqual({ big: "-5", more: "[Function more]" });
  });

  for (const target of ["collector", "embedded store"] as const) {
    it(`delivers 99 of 100 runs and the bad one marked, on the ${target}`, async () => {
      const col = target === "collector" ? await collector() : undefined;
      const c = client(col?.url);
      const runs = Array.from({ length: 100 }, () => makeRun("one-bad"));
      runs.forEach((r, i) => c.createRun(i === 37 ? { ...r, inputs: badValue() } : r));
      const res = await c.flush();
      expect(res).toMatchObject({ ok: true, spooled: 0, dropped: 0, deadLettered: 0 });
      const store = col ? col.collector.store : await openStore(c.options.dbPath);
      try {
        expect(await store.countRuns("one-bad")).toBe(100);
        const bad = (await store.getRun(runs[37]!.id))!.inputs as Record<string, unknown>;
        expect(bad.big).toBe("1000000000000000000000000000000");
        expect(bad.circ).toEqual({ name: "loop", self: CIRCULAR });
        expect(JSON.stringify(bad.deep)).toContain("[MaxDepth]");
        expect(bad.fn).toBe("[Function handler]");
      } finally {
        if (!col) store.close();
      }
    });
  }

  it("delivers complete runs, held as bytes until sent, with the same markers: one bad of 100, and a 20 MB string cut", async () => {
    const col = await collector();
    const c = client(col.url);
    const done = { end_time: "2026-11-22T10:16:00.000000Z" };
    const runs = Array.from({ length: 100 }, () => Object.assign(makeRun("one-bad-complete"), done));
    runs.forEach((r, i) => c.createRun(i === 37 ? { ...r, inputs: badValue(), outputs: { huge: "q".repeat(20_000_000) } } : r));
    expect(await c.flush()).toMatchObject({ ok: true, spooled: 0, dropped: 0, deadLettered: 0 });
    const store = col.collector.store;
    expect(await store.countRuns("one-bad-complete")).toBe(100);
    const bad = (await store.getRun(runs[37]!.id))!;
    const inputs = bad.inputs as Record<string, unknown>;
    expect(inputs.big).toBe("1000000000000000000000000000000");
    expect(inputs.circ).toEqual({ name: "loop", self: CIRCULAR });
    expect(JSON.stringify(inputs.deep)).toContain("[MaxDepth]");
    expect((bad.outputs as { huge: string }).huge.endsWith(`…[truncated ${20_000_000 - 8 * 1024 * 1024} chars]`)).toBe(true);
    expect(bad.end_time).toMatch(/^2026-11-22T10:16:00/);
  });

  it("never throws into the host after shutdown; what it could not take is counted as dropped", async () => {
    const c = client(undefined);
    await c.shutdown();
    expect(() => c.createRun(makeRun("late"))).not.toThrow();
    expect(() => c.updateRun(makeRun().id, { outputs: { x: 1 } })).not.toThrow();
    expect(c.stats.dropped).toBe(2);
  });
});

describe("hostile attachments", () => {
  it("keeps real bytes, leaves out what is not bytes, and delivers the run", async () => {
    const col = await startCollector();
    cleanup.push(() => col.close());
    const c = client(col.url);
    const run = makeRun("attach");
    const bad = {
      ok: ["text/plain", new TextEncoder().encode("hi")],
      str: ["text/plain", "not bytes"],
      obj: { x: 1 },
    } as unknown as Record<string, [string, Uint8Array]>;
    expect(() => c.createRun(run, { attachments: bad })).not.toThrow();
    expect((await c.flush()).ok).toBe(true);
    const names = (await col.collector.store.listAttachments(run.id)).map((a) => a.name);
    expect(names).toEqual(["ok"]);
  });
});

describe("traceable with hostile values", () => {
  it("returns, reads the caller's graph once, and the run arrives with the cycles marked", async () => {
    const col = await startCollector();
    cleanup.push(() => col.close());
    const c = client(col.url);
    const g = backRefGraph(1000);
    const handle = traceable((entity: Record<string, unknown>) => ({ entity, big: 1n }), { name: "orm", client: c });
    const out = handle(g.root);
    expect(out.entity).toBe(g.root);
    // Inputs and outputs each copied once, at hand-over: two reads per field, whatever the graph holds.
    expect(g.reads()).toBe(2 * g.fields);
    expect((await c.flush()).ok).toBe(true);
    const [stored] = (await col.collector.store.queryRuns({ project: "default", limit: 10 })).runs.filter((r) => r.name === "orm");
    // One plain-object argument is the inputs themselves.
    const children = (stored!.inputs as { children: Record<string, unknown>[] }).children;
    expect(children).toHaveLength(1000);
    expect(children.every((ch) => ch.parent === CIRCULAR)).toBe(true);
    expect((stored!.outputs as { big: string }).big).toBe("1");
  });
});
