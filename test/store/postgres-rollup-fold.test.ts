/**
 * The fold of the PostgreSQL store's rollup queue (store/postgres/rollup-queue.ts):
 * the queued deltas of posts and of patches that move a run to another cell
 * or histogram bucket, folded into the rollups, give exactly the rollups a
 * rebuild from the runs gives, and the queue is left empty.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { foldRollups } from "../../src/store/postgres/rollup-queue.js";
import { rebuildRollups } from "../../src/store/postgres/rollups.js";
import { PostgresStore } from "../../src/store/postgres/store.js";
import { skipWithoutPostgres, sharedPostgres, type PostgresDatabases } from "../helpers/postgres.js";

const skip = skipWithoutPostgres();
/** The fold's advisory lock key (rollup-queue.ts). */
const FOLD_LOCK = 0x726c7570;

const rollupRows = async (store: PostgresStore) =>
  (
    await store.pool.query(
      `SELECT project, hour, scope, model, provider, name, runs, errors, streamed, input_tokens, output_tokens, cost, cost_runs,
         latency_hist, ttft_hist FROM monitor_rollups ORDER BY project, hour, scope, model, provider, name`,
    )
  ).rows.map((r) => ({ ...r, cost: Math.round((r.cost as number) * 1e9) / 1e9 }));

describe.skipIf(skip)("PostgreSQL store: folding the rollup queue", () => {
  let pgs: PostgresDatabases;
  beforeAll(async () => {
    pgs = await sharedPostgres();
  }, 120_000);

  it("folds posts and cell-moving patches into the rollups a rebuild from the runs makes, and empties the queue", async () => {
    const url = await pgs.database();
    const store = await PostgresStore.open(url);
    // The fold's lock held meanwhile, so the store's own folds wait and one fold meets every queued delta.
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      await holder.query("SELECT pg_advisory_lock($1)", [FOLD_LOCK]);
      const ids = Array.from({ length: 60 }, () => randomUUID());
      const model = (i: number) => ["gpt-4o", "claude-3", "gemini-1"][i % 3]!;
      const posts = ids.map((id, i) => ({
        id,
        trace_id: id,
        dotted_order: `20261127T1015${String(i).padStart(2, "0")}000000Z${id}`,
        name: `fold-${i % 4}`,
        run_type: i % 2 ? "llm" : "chain",
        start_time: `2026-11-27T10:15:${String(i).padStart(2, "0")}.000000Z`,
        session_name: "fold",
        extra: { metadata: { trace_model_name: model(i), trace_provider: "p" } },
      }));
      for (let i = 0; i < posts.length; i += 6) await store.ingest({ post: posts.slice(i, i + 6), patch: [] });
      // Patches: an end time, tokens and an error; then a later end time (another latency bucket), and for some a start in
      // another hour (the run leaves its cell).
      const first = ids.map((id, i) => ({
        id,
        end_time: `2026-11-27T10:16:${String(i).padStart(2, "0")}.000000Z`,
        ...(i % 5 === 0 ? { error: "boom" } : {}),
        outputs: { usage_metadata: { input_tokens: i, output_tokens: 2 * i, total_tokens: 3 * i } },
      }));
      const second = ids.map((id, i) => ({
        id,
        end_time: `2026-11-27T11:${String(20 + (i % 30)).padStart(2, "0")}:00.000000Z`,
        ...(i % 4 === 0 ? { start_time: `2026-11-27T11:15:${String(i).padStart(2, "0")}.000000Z` } : {}),
      }));
      for (const patches of [first, second])
        for (let i = 0; i < patches.length; i += 7) await store.ingest({ post: [], patch: patches.slice(i, i + 7) as never });
      expect(await foldRollups(store.pool)).toBe(false);
      await holder.query("SELECT pg_advisory_unlock($1)", [FOLD_LOCK]);
      expect(await foldRollups(store.pool)).toBe(true);
      expect((await store.pool.query("SELECT count(*)::int AS n FROM monitor_rollup_queue")).rows[0]!.n).toBe(0);
      const folded = await rollupRows(store);
      expect(folded.length).toBeGreaterThan(6);
      await store.pool.transaction((c) => rebuildRollups(c));
      expect(folded).toEqual(await rollupRows(store));
    } finally {
      await holder.end();
      await store.close();
    }
  });
});
