/**
 * The PostgreSQL store's one-statement write of new runs (store/postgres/new-runs.ts):
 * what it queues for the monitoring rollups is what the runs give, cell by
 * cell; a batch that meets a stored run, or a key row committed without its
 * run, ends as the merge would have it.
 */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { PostgresStore } from "../../src/store/postgres/store.js";
import { groupedContributions, ROLLUP_COLUMNS } from "../../src/store/postgres/rollups.js";
import { cellKey, cellOfRow, RollupDeltas, type Cell } from "../../src/store/rollup.js";
import { skipWithoutPostgres, sharedPostgres, type PostgresDatabases } from "../helpers/postgres.js";

const skip = skipWithoutPostgres();

/** A root chain run and its llm child, varied by `i`: projects, names, errors, latencies, models, usage, cost, streaming. */
function trace(i: number): Record<string, unknown>[] {
  const id = randomUUID();
  const child = randomUUID();
  const hour = 10 + (i % 2);
  const start = `2026-11-27T${hour}:15:00.${String(i).padStart(6, "0")}Z`;
  const end = (ms: number) => new Date(Date.parse(start) + ms).toISOString().replace("Z", "000Z");
  const dotted = `20261127T${hour}1500${String(i).padStart(6, "0")}Z${id}`;
  const project = i % 3 === 0 ? "new-runs-a" : "new-runs-b";
  return [
    {
      id,
      trace_id: id,
      dotted_order: dotted,
      name: `root-${i % 4}`,
      run_type: "chain",
      start_time: start,
      end_time: end(37 * i + 5),
      session_name: project,
      ...(i % 5 === 0 ? { error: "boom" } : {}),
      inputs: { question: `q${i}` },
    },
    {
      id: child,
      trace_id: id,
      parent_run_id: id,
      dotted_order: `${dotted}.${dotted.slice(0, 23)}${child}`,
      name: "llm",
      run_type: "llm",
      start_time: start,
      ...(i % 7 === 3 ? {} : { end_time: end(13 * i + 2) }),
      session_name: project,
      extra: {
        metadata: {
          trace_model_name: i % 2 ? "gpt-4o" : "claude-sonnet",
          usage_metadata: {
            input_tokens: i,
            output_tokens: 2 * i + 1,
            total_tokens: 3 * i + 1,
            ...(i % 4 ? { total_cost: 0.001 * i } : {}),
          },
        },
      },
      ...(i % 3 === 1 ? { events: [{ name: "new_token", time: end(5 * i + 1) }] } : {}),
    },
  ];
}

/** Cells keyed by row key, with the cost rounded (sums of floats in another order differ in the last bits). */
function byKey(cells: Iterable<Cell>): Record<string, Cell> {
  const out: Record<string, Cell> = {};
  for (const c of cells) out[cellKey(c)] = { ...c, cost: Math.round(c.cost * 1e9) / 1e9 };
  return out;
}

describe.skipIf(skip)("PostgreSQL store: a batch of new runs in one statement", () => {
  let pg: PostgresDatabases;
  beforeAll(async () => {
    pg = await sharedPostgres();
  }, 120_000);

  it("queues the monitoring numbers the runs give, cell by cell: counts, errors, tokens, cost, latency and time-to-first-token histograms", async () => {
    const store = await PostgresStore.open(await pg.database());
    try {
      const runs = Array.from({ length: 40 }, (_, i) => trace(i)).flat();
      for (let i = 0; i < runs.length; i += 10) {
        const r = await store.ingest({ post: runs.slice(i, i + 10) });
        expect(r).toMatchObject({ created: 10, updated: 0 });
      }
      // The rollups and the queue together (a fold moves rows between them, the sum stays) against the runs themselves.
      const queued = new RollupDeltas();
      for (const row of (
        await store.pool.query(`SELECT ${ROLLUP_COLUMNS} FROM monitor_rollups UNION ALL SELECT ${ROLLUP_COLUMNS} FROM monitor_rollup_queue`)
      ).rows)
        queued.addCell(cellOfRow(row as Record<string, unknown>));
      const expected = new RollupDeltas();
      const rows = await store.pool.withClient((c) => groupedContributions(c, "runs", "true", []));
      for (const r of rows) expected.add(r, 1);
      expect(Object.keys(byKey(expected.changes())).length).toBeGreaterThan(10);
      expect(byKey(queued.changes())).toEqual(byKey(expected.changes()));
    } finally {
      await store.close();
    }
  });

  it("merges a batch that meets a stored run: the new runs created, the stored one updated, each counted once", async () => {
    const store = await PostgresStore.open(await pg.database());
    try {
      const [root, llm] = trace(1) as [Record<string, unknown>, Record<string, unknown>];
      expect(await store.ingest({ post: [root] })).toMatchObject({ created: 1, updated: 0 });
      const others = Array.from({ length: 4 }, (_, i) => trace(10 + i)).flat();
      // The root again (a client's retry) among new runs.
      const r = await store.ingest({ post: [...others, { ...root }, llm] });
      expect(r).toMatchObject({ created: 9, updated: 1 });
      expect((await store.getRun(root.id as string))?.name).toBe(root.name);
      expect((await store.getRun(llm.id as string))?.parent_run_id).toBe(root.id);
      expect(await store.countRuns()).toBe(10);
      const counts = await store.pool.query(
        `SELECT (SELECT count(*)::int FROM run_keys) AS keys,
           (SELECT coalesce(sum(runs), 0)::int FROM (SELECT runs FROM monitor_rollups WHERE scope = 'root' UNION ALL SELECT runs FROM monitor_rollup_queue WHERE scope = 'root') q) AS roots`,
      );
      expect(counts.rows[0]).toEqual({ keys: 10, roots: 5 });
    } finally {
      await store.close();
    }
  });

  it("stores a run whose key row was committed without it, as a new run", async () => {
    const store = await PostgresStore.open(await pg.database());
    try {
      const runs = trace(2);
      await store.pool.query("INSERT INTO run_keys (id) VALUES ($1)", [runs[0]!.id]);
      expect(await store.ingest({ post: runs })).toMatchObject({ created: 2, updated: 0 });
      expect((await store.getRun(runs[0]!.id as string))?.name).toBe(runs[0]!.name);
      const roots = await store.pool.query(
        `SELECT coalesce(sum(runs), 0)::int AS n FROM (SELECT runs FROM monitor_rollups WHERE scope = 'root' UNION ALL SELECT runs FROM monitor_rollup_queue WHERE scope = 'root') q`,
      );
      expect(roots.rows[0]).toEqual({ n: 1 });
    } finally {
      await store.close();
    }
  });
});
