/**
 * MonitorStore over PostgreSQL, answering as the SQLite store does
 * (store/sqlite/monitor.ts): whole hours from `monitor_rollups` (kept on
 * ingest, store/postgres/rollups.ts) by its primary key and the deltas
 * queued for it (rollup-queue.ts), in one statement, so a fold in between
 * is seen whole or not at all; a range's part that
 * is not whole hours (minute buckets, the current hour) from the runs
 * themselves through runs_roots_project_start and runs_llm_project_start.
 * Percentiles are read from the histograms, within HIST_ALPHA of the exact
 * nearest-rank ones (store/rollup.ts).
 */
import type { Breakdown, BreakdownRow, MonitorQuery, MonitorSeries } from "../contract/monitor.js";
import { monitorReads, rangeCells } from "../monitor-reads.js";
import { breakdownOf, seriesOf, type Cell } from "../rollup.js";
import type { PgPool } from "./pool.js";
import { rawContributions, ROLLUP_COLUMNS } from "./rollups.js";

/** The range's cells: rollup rows for its whole hours, runs for the rest. */
async function cells(pool: PgPool, q: MonitorQuery): Promise<Cell[]> {
  const { hours, runs } = monitorReads(q);
  const rows = hours
    ? ((
        await pool.query(
          // Deltas not yet folded into the rollups count too (rollup-queue.ts).
          `SELECT ${ROLLUP_COLUMNS} FROM monitor_rollups WHERE project = $1::text AND hour >= $2::bigint AND hour < $3::bigint
           UNION ALL SELECT ${ROLLUP_COLUMNS} FROM monitor_rollup_queue WHERE project = $1::text AND hour >= $2::bigint AND hour < $3::bigint`,
          [q.project, hours.from, hours.to],
        )
      ).rows as Record<string, unknown>[])
    : [];
  return rangeCells(rows, runs ? await rawContributions(pool, q.project, runs.gte, runs.lt) : []);
}

/** Every chart's series for one project, range and bucket size. */
export async function monitorSeries(pool: PgPool, q: MonitorQuery): Promise<MonitorSeries> {
  return seriesOf(q, await cells(pool, q));
}

/** One table of the page: per model or provider (llm runs) or per root run name (traces). */
export async function monitorBreakdown(pool: PgPool, q: MonitorQuery, by: Breakdown): Promise<BreakdownRow[]> {
  return breakdownOf(q, await cells(pool, q), by);
}
