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
import { cellOfRow, RollupDeltas } from "../rollup.js";
import { applyRollups, CELL_ROWS, cellArrays, ROLLUP_COLUMNS } from "./rollups.js";
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

/**
 * Move the queued deltas that are committed now into the rollups; false when
 * another collector is folding. Deltas committed meanwhile stay for the next fold.
 */
export async function foldRollups(pool: PgPool): Promise<boolean> {
  return pool.transaction(async (c) => {
    const got = await c.query<{ ok: boolean }>("SELECT pg_try_advisory_xact_lock($1) AS ok", [FOLD_LOCK]);
    if (!got.rows[0]?.ok) return false;
    const rows = (await c.query(`DELETE FROM monitor_rollup_queue RETURNING ${ROLLUP_COLUMNS}`)).rows as Record<string, unknown>[];
    const d = new RollupDeltas();
    for (const r of rows) d.addCell(cellOfRow(r));
    await applyRollups(c, d);
    return true;
  });
}
