/**
 * The embedded sink and the collector call the store's one ingest operation,
 * so the same runs are accepted and refused, with the same issues, whichever
 * way they travel.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "../../src/ingest/client.js";
import { openStore } from "../../src/store/index.js";
import { startCollector, type Running } from "../helpers/collector.js";
import { makeRun, tempDir } from "../helpers/runs.js";

type Refusal = { id: string; issues: { loc: unknown[]; msg: string; type: string }[] };

function badRuns(project: string) {
  const runs = [
    { ...makeRun(project), start_time: "not a time" },
    { ...makeRun(project), trace_id: "not-a-uuid" },
    (() => {
      const r: Record<string, unknown> & { id: string } = makeRun(project);
      delete r.name;
      return r;
    })(),
    { ...makeRun(project), events: [{ name: "new_token" }] },
    { ...makeRun(project), tags: "one-tag" },
  ];
  const good = [makeRun(project), makeRun(project), makeRun(project)];
  return { runs: [...good.slice(0, 2), ...runs, good[2]!], bad: runs.map((r) => r.id), good: good.map((r) => r.id) };
}

/** Every dead-lettered run with the issues the sink gave, its own location prefix removed. */
function refusals(path: string): Refusal[] {
  if (!existsSync(path)) return [];
  const out: Refusal[] = [];
  for (const line of readFileSync(path, "utf8").split("\n").filter(Boolean)) {
    const entry = JSON.parse(line) as { detail: Refusal["issues"]; runs: { id: string }[] };
    expect(entry.runs).toHaveLength(1); // bisected down to the one bad run
    const id = entry.runs[0]!.id;
    out.push({ id, issues: entry.detail.map((i) => ({ ...i, loc: i.loc.slice(1) })) });
    expect(entry.detail.every((i) => i.loc[0] === `post.${id}`)).toBe(true);
  }
  return out.sort((a, b) => a.id.localeCompare(b.id));
}

let col: Running;
beforeAll(async () => {
  col = await startCollector();
});
afterAll(() => col.close());

describe("one ingest operation for the collector and the embedded sink", () => {
  it("refuses the same invalid runs with the same issues, and stores the rest, either way", async () => {
    const dir = tempDir("tp-refusals-");
    const { runs, bad, good } = badRuns("refusals");

    const http = new Client({
      endpoint: col.url,
      deadLetterPath: join(dir, "http-dead.jsonl"),
      spoolDir: join(dir, "http-spool"),
      batchSize: 100,
    });
    const dbPath = join(dir, "embedded.db");
    const embedded = new Client({
      dbPath,
      deadLetterPath: join(dir, "embedded-dead.jsonl"),
      spoolDir: join(dir, "embedded-spool"),
      batchSize: 100,
    });
    for (const c of [http, embedded]) {
      for (const r of runs) c.createRun(structuredClone(r));
      await c.shutdown();
    }

    const viaHttp = refusals(join(dir, "http-dead.jsonl"));
    const viaEmbedded = refusals(join(dir, "embedded-dead.jsonl"));
    expect(viaHttp.map((r) => r.id)).toEqual([...bad].sort());
    expect(viaEmbedded).toEqual(viaHttp);
    // Each refusal names the field that is wrong.
    const byId = new Map(viaHttp.map((r) => [r.id, r.issues.map((i) => i.loc.join("."))]));
    expect(byId.get(bad[0]!)).toContain("start_time");
    expect(byId.get(bad[1]!)).toContain("trace_id");
    expect(byId.get(bad[2]!)).toContain("name");
    expect(byId.get(bad[3]!)).toContain("events.0.time");
    expect(byId.get(bad[4]!)).toContain("tags");

    const store = await openStore(dbPath);
    try {
      for (const id of good) {
        expect((await col.collector.store.getRun(id))?.id).toBe(id);
        expect((await store.getRun(id))?.id).toBe(id);
      }
      for (const id of bad) {
        expect(await col.collector.store.getRun(id)).toBeUndefined();
        expect(await store.getRun(id)).toBeUndefined();
      }
    } finally {
      store.close();
    }
  });

  it("stores native messages once: a native llm run has no derived copy", async () => {
    const store = await openStore(":memory:");
    try {
      const run = {
        ...makeRun("once"),
        run_type: "llm",
        inputs: { messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] },
      };
      await store.ingest({ post: [run] });
      const got = (await store.getRun(run.id))!;
      expect(got.detected_format).toBe("native");
      expect(got.inputs).toEqual(run.inputs);
      expect(got.normalized_inputs).toBeNull();
      // A vendor payload gets its native messages beside the raw body.
      const vendor = { ...makeRun("once"), run_type: "llm", inputs: { model: "gpt-4o", messages: [{ role: "user", content: "hi" }] } };
      await store.ingest({ post: [vendor] });
      expect((await store.getRun(vendor.id))!.normalized_inputs).toEqual({
        messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
      });
    } finally {
      store.close();
    }
  });
});
