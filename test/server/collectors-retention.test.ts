/**
 * Retention with collectors side by side: three `serve --retention` processes
 * on one PostgreSQL prune one at a time. A collector killed mid-prune leaves
 * the rest of the work to the next prune, whichever collector makes it; every
 * old trace goes exactly once (the monitoring rollups lose each run once, so
 * the old project's counts end at zero, not below), recent traces stay, and
 * while one collector prunes the others skip (they say so on their log).
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Store } from "../../src/store/contract/store.js";
import { openStore } from "../../src/store/open.js";
import { RETENTION_LOCK } from "../../src/store/postgres/retention.js";
import { sharedPostgres, skipWithoutPostgres, type PostgresDatabases } from "../helpers/postgres.js";
import { startServeChildren, stopServeChildren, type ServeChild } from "../helpers/serve-processes.js";
import { DAY, trace } from "../store/contract/retention.js";

const OLD_TRACES = 4000;
const RECENT_TRACES = 50;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const REMOVED = /retention removed (\d+) runs/g;
const SKIPPED = /retention skipped: another collector is pruning/g;

function removedCounts(output: string): number[] {
  return [...output.matchAll(REMOVED)].map((m) => Number(m[1]));
}

describe.skipIf(skipWithoutPostgres())("retention with three collectors on one PostgreSQL", () => {
  let cluster: PostgresDatabases;
  let url: string;
  let db: pg.Client;
  let children: ServeChild[] = [];
  beforeAll(async () => {
    cluster = await sharedPostgres();
    url = await cluster.database();
    db = new pg.Client({ connectionString: url });
  }, 90_000);
  afterAll(async () => {
    await stopServeChildren(children);
    await db?.end().catch(() => undefined);
  }, 60_000);

  const count = async (project: string) =>
    Number((await db.query("SELECT count(*) AS n FROM runs WHERE session_name = $1", [project])).rows[0].n);
  const rollupRuns = async (project: string) =>
    // Deltas not yet folded into the rollups (the rollup queue) count too.
    Number(
      (
        await db.query(
          `SELECT coalesce(sum(runs), 0) AS n FROM (SELECT runs FROM monitor_rollups WHERE project = $1
           UNION ALL SELECT runs FROM monitor_rollup_queue WHERE project = $1) r`,
          [project],
        )
      ).rows[0].n,
    );
  const lockHeld = async () =>
    Number(
      (
        await db.query("SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND classid = 0 AND objid = $1 AND objsubid = 1", [
          RETENTION_LOCK,
        ])
      ).rows[0].n,
    ) > 0;

  it("prunes in one collector at a time, a collector killed mid-prune leaving the rest to the next, every old trace removed once", async () => {
    const now = Date.now();
    // Seeded through the store (which makes the schema): old traces in no weekly partition, so they go slice by slice.
    const store: Store = await openStore(url);
    try {
      const olds = Array.from({ length: OLD_TRACES }, (_, i) => trace(new Date(now - 60 * DAY + i * 1000), "old"));
      for (let i = 0; i < olds.length; i += 250) await store.ingest({ post: olds.slice(i, i + 250).flatMap((t) => t.runs) });
      const recents = Array.from({ length: RECENT_TRACES }, (_, i) => trace(new Date(now - 2 * DAY + i * 1000), "recent"));
      await store.ingest({ post: recents.flatMap((t) => t.runs) });
    } finally {
      await store.close();
    }
    await db.connect();
    expect(await count("old")).toBe(2 * OLD_TRACES);
    const recentRollup = await rollupRuns("recent");
    expect(await rollupRuns("old")).toBeGreaterThanOrEqual(OLD_TRACES);

    const args = ["--store", url, "--no-rate-limit", "--retention", "30d", "--retention-interval", "1000"];
    // One collector alone first, killed without warning once its prune has removed some of the old traces.
    const [first] = await startServeChildren(1, args);
    children = [first!];
    for (let polls = 0; (await count("old")) === 2 * OLD_TRACES; polls++) {
      expect(polls, "the first collector never started pruning").toBeLessThan(600);
      await sleep(50);
    }
    await first!.kill("SIGKILL");
    expect(removedCounts(first!.output())).toEqual([]);
    // Its session is gone, and the lock with it (PostgreSQL ends the backend of a closed connection).
    for (let polls = 0; await lockHeld(); polls++) {
      expect(polls, "the killed collector's retention lock was never released").toBeLessThan(200);
      await sleep(50);
    }
    const left = await count("old");
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThan(2 * OLD_TRACES);

    // Then three: the killed one back, and two more.
    children = [first!, ...(await startServeChildren(2, args))];
    await first!.restart();
    for (let polls = 0; (await count("old")) > 0; polls++) {
      expect(polls, "the old traces were never all removed").toBeLessThan(1200);
      await sleep(50);
    }
    // Every collector has pruned at least once since (finding nothing, or skipping while another pruned).
    for (let polls = 0; children.some((c) => removedCounts(c.output()).length === 0); polls++) {
      expect(polls, "a collector never pruned").toBeLessThan(400);
      await sleep(50);
    }
    await stopServeChildren(children);
    const outputs = children.map((c) => c.output());
    const removals = outputs.flatMap(removedCounts).filter((n) => n > 0);
    // The rest in one prune by one collector: the others, trying meanwhile, skipped it rather than prune beside it.
    expect(removals).toEqual([left]);
    expect(outputs.reduce((n, o) => n + [...o.matchAll(SKIPPED)].length, 0)).toBeGreaterThan(0);
    // Each run left the rollups once; recent traces untouched.
    expect(await rollupRuns("old")).toBe(0);
    expect(await count("recent")).toBe(2 * RECENT_TRACES);
    expect(await rollupRuns("recent")).toBe(recentRollup);
    expect(await lockHeld()).toBe(false);
  }, 240_000);
});
