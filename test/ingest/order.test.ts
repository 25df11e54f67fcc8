import { describe, expect, it } from "vitest";
import { cleanupAfterEach } from "../helpers/cleanup.js";
import { join } from "node:path";
import { Client } from "../../src/ingest/index.js";
import { type Running, sql } from "../helpers/collector.js";
import { startProxy, type Verdict } from "../helpers/proxy.js";
import { makeRun, tempDir } from "../helpers/runs.js";
import { runChild } from "./child.js";

const { cleanup, collector } = cleanupAfterEach();

function client(
  endpoint: string,
  spoolDir = join(tempDir("tp-order-"), "spool"),
  extra: ConstructorParameters<typeof Client>[0] = {},
): Client {
  const c = new Client({
    endpoint,
    apiKey: "k",
    spoolDir,
    deadLetterPath: join(spoolDir, "..", "dead.jsonl"),
    exitHooks: false,
    backoff: { baseMs: 20, maxMs: 200 },
    warn: () => {},
    ...extra,
  });
  cleanup.push(async () => void (await c.shutdown({ timeoutMs: 5000 })));
  return c;
}

async function outputsV(col: Running, id: string): Promise<unknown> {
  return ((await col.collector.store.getRun(id))?.outputs as { v?: unknown } | undefined)?.v;
}

describe("updates of one run apply in the order they were made", () => {
  it("the newer update wins when the older one's batch is answered 503 and retried", async () => {
    const col = await collector();
    let failNext = false;
    const proxy = await startProxy(col.url, (): Verdict => {
      if (!failNext) return "pass";
      failNext = false;
      return { status: 503, headers: { "retry-after": "0" } };
    });
    cleanup.push(() => proxy.close());
    const c = client(proxy.url);
    const runs = Array.from({ length: 50 }, () => makeRun("order-503"));
    for (const r of runs) c.createRun(r);
    await c.flush();
    failNext = true;
    for (const r of runs) c.updateRun(r.id, { outputs: { v: "old" } });
    void c.flush(); // the older updates are in flight now, and their batch gets the 503
    for (const r of runs) c.updateRun(r.id, { outputs: { v: "new" }, end_time: "2026-11-22T10:16:00.000000Z" });
    expect((await c.flush()).ok).toBe(true);
    expect(proxy.statuses).toContain(503);
    expect((await Promise.all(runs.map((r) => outputsV(col, r.id)))).filter((v) => v === "new")).toHaveLength(50);
  });

  it("the newer update wins when the older one was spooled after maxAttempts", async () => {
    const col = await collector();
    let down = false;
    const proxy = await startProxy(col.url, (): Verdict => (down ? { status: 503 } : "pass"));
    cleanup.push(() => proxy.close());
    const c = client(proxy.url, undefined, { maxAttempts: 2 });
    const runs = Array.from({ length: 30 }, () => makeRun("order-spool"));
    for (const r of runs) c.createRun(r);
    await c.flush();
    down = true;
    for (const r of runs) c.updateRun(r.id, { outputs: { v: "old" } });
    const first = await c.flush(); // gives up: the older updates are in the spool
    expect(first.spooled).toBe(30);
    expect(first.ok).toBe(false);
    expect(c.stats.inSpool).toBe(30);
    for (const r of runs) c.updateRun(r.id, { outputs: { v: "new" } }); // must not overtake them
    down = false;
    let res = await c.flush();
    for (let i = 0; i < 100 && !res.ok; i++) {
      await new Promise((r) => setTimeout(r, 50)); // the spool's retry timer replays them
      res = await c.flush();
    }
    expect(res).toMatchObject({ ok: true, spooled: 0 });
    expect((await Promise.all(runs.map((r) => outputsV(col, r.id)))).filter((v) => v === "new")).toHaveLength(30);
  });

  it("replay applies the newer update last when the process exits with the older one in flight", async () => {
    const col = await collector();
    const spool = join(tempDir("tp-order-exit-"), "spool");
    await runChild(col.url, spool, 200, "order-exit", -1);
    const c = client(col.url, spool);
    expect((await c.flush()).ok).toBe(true);
    const rows = sql(col.collector.store).prepare("SELECT id, outputs FROM runs WHERE session_name = 'order-exit'").all() as {
      id: string;
      outputs: string;
    }[];
    expect(rows).toHaveLength(200);
    expect(rows.filter((r) => JSON.parse(r.outputs).v === 2)).toHaveLength(200);
  });
});

describe("updates of spilled runs", () => {
  it("keep their order past the number of spilled runs tracked one by one", async () => {
    const col = await collector();
    // A 1-byte memory bound: every op is spilled, and past 1000 spilled runs they are no longer tracked one by one.
    // One batch in flight at a time, paced, so most creates read back are still waiting in memory when the newest updates come.
    const c = client(col.url, undefined, { maxQueueBytes: 1, concurrency: 1, batchSize: 500, rateLimit: { limit: 2, windowMs: 400 } });
    const runs = Array.from({ length: 2500 }, () => makeRun("spilled-order", 4000));
    for (const r of runs) c.createRun(r);
    for (const r of runs) c.updateRun(r.id, { outputs: { v: "old" } });
    // Replay starts: the first 8 MiB segment (creates only) is read back while the "old" updates wait in the next one.
    const flushed = c.flush();
    for (let i = 0; i < 400 && c.stats.queued < 1000; i++) await new Promise((r) => setTimeout(r, 5));
    expect(c.stats.queued).toBeGreaterThanOrEqual(1000);
    for (const r of runs.slice(0, 1200)) c.updateRun(r.id, { outputs: { v: "new" } });
    await flushed;
    expect((await c.flush()).ok).toBe(true);
    expect(c.stats.spooled).toBe(2500 + 2500 + 1200);
    const rows = sql(col.collector.store)
      .prepare("SELECT id, json_extract(outputs, '$.v') AS v FROM runs WHERE session_name = 'spilled-order'")
      .all() as { id: string; v: string }[];
    expect(rows).toHaveLength(2500);
    const want = new Map(runs.map((r, i) => [r.id, i < 1200 ? "new" : "old"]));
    expect(rows.filter((r) => r.v !== want.get(r.id))).toEqual([]);
  });
});
