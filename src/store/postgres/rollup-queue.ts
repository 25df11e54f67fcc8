/**
 * The PostgreSQL store's queue of rollup deltas (store/rollup.ts): what each
 * ingest transaction changes in the monitoring rollups, written as rows of
 * their own instead of increments of the rollup rows. An increment holds its
 * row's lock until the transaction commits, and every ingest of one project's
 * hour increments the same few rows, so concurrent ingests (on one collector's
 * connections or on several collectors) would wait for each other's commits;
 * a queued row takes no lock another writer waits for.
 *
 * The monitoring queries read the rollups and the queue together (monitor.ts),
 * so a delta counts from the moment its transaction commits. A fold moves the
 * queue into the rollups in one transaction (what it deletes, it adds), one
 * collector at a time; every collector tries every few seconds, so the queue
 * stays as short as a few seconds of ingest.
 */
import type pg from "pg";
import type { RollupDeltas } from "../rollup.js";
import { CELL_ROWS, cellArrays, ROLLUP_COLUMNS, ROLLUP_INCREMENTS } from "./rollups.js";
import type { PgPool } from "./pool.js";
import { prepared } from "./prepared.js";

/** How often each store tries to fold the queue. */
export const FOLD_INTERVAL_MS = 2000;
/** Advisory lock key of the fold ("rlup"), so one collector folds at a time. */
const FOLD_LOCK = 0x726c7570;

/** Queue a transaction's rollup deltas (inside it): one row per changed cell, no row locks. */
export async function queueRollups(client: pg.ClientBase, deltas: RollupDeltas): Promise<void> {
  const cells = deltas.changes();
  if (cells.length === 0) return;
  await client.query(
    prepared(`INSERT INTO monitor_rollup_queue (${ROLLUP_COLUMNS}) SELECT ${ROLLUP_COLUMNS} FROM ${CELL_ROWS}`, cellArrays(cells)),
  );
}

/** A histogram column of a cell's queued rows added up bucket by bucket, buckets at zero dropped (as tracepipe_hist_add). */
const histSum = (col: string) =>
  `(SELECT coalesce(jsonb_object_agg(s.k, s.n), '{}'::jsonb) FROM (SELECT e.key AS k, sum(e.value::numeric) AS n
     FROM unnest(array_agg(${col})) AS h(j), jsonb_each_text(h.j) AS e GROUP BY e.key) s WHERE s.n <> 0) AS ${col}`;

/**
 * The fold as one statement (its own transaction): take the fold lock, or do
 * nothing when another collector holds it; delete the committed queue rows;
 * add them up by cell (a cell queued many times is one increment, as
 * RollupDeltas sums them) and apply the cells that change something as
 * increments, in key order. Answers whether it had the lock. No parameters:
 * the prepared statement is planned once per connection, not at each fold.
 */
const FOLD_SQL = `WITH lock AS (SELECT pg_try_advisory_xact_lock(${FOLD_LOCK}) AS ok),
  moved AS (DELETE FROM monitor_rollup_queue WHERE (SELECT ok FROM lock) RETURNING ${ROLLUP_COLUMNS}),
  cells AS (SELECT project, hour, scope, model, provider, name,
      sum(runs)::bigint AS runs, sum(errors)::bigint AS errors, sum(streamed)::bigint AS streamed,
      sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens, sum(cost) AS cost, sum(cost_runs)::bigint AS cost_runs,
      ${histSum("latency_hist")}, ${histSum("ttft_hist")}
    FROM moved GROUP BY project, hour, scope, model, provider, name),
  applied AS (INSERT INTO monitor_rollups AS r (${ROLLUP_COLUMNS})
    SELECT ${ROLLUP_COLUMNS} FROM cells
    WHERE runs <> 0 OR errors <> 0 OR streamed <> 0 OR input_tokens <> 0 OR output_tokens <> 0 OR cost <> 0 OR cost_runs <> 0
      OR latency_hist <> '{}'::jsonb OR ttft_hist <> '{}'::jsonb
    ORDER BY project, hour, scope, model, provider, name
    ON CONFLICT (project, hour, scope, model, provider, name) DO UPDATE SET
      ${ROLLUP_INCREMENTS})
SELECT ok FROM lock`;

/**
 * Move the queued deltas that are committed now into the rollups; false when
 * another collector is folding. Deltas committed meanwhile stay for the next
 * fold. One round trip: every collector folds every few seconds, loaded or idle.
 */
export async function foldRollups(pool: PgPool): Promise<boolean> {
  const r = await pool.statement<{ ok: boolean }>(prepared(FOLD_SQL, []));
  return r.rows[0]?.ok === true;
}
