/**
 * MonitorStore over SQLite: the monitoring page's numbers from the rollups
 * kept on ingest (store/rollup.ts, sqlite/rollups.ts): whole hours are read
 * from `monitor_rollups` by its primary key (project, hour, ...), a range's
 * part that is not whole hours (minute buckets, the current hour) from the
 * runs themselves, through the project/start-time indexes. Percentiles are
 * read from the histograms, within HIST_ALPHA of the exact nearest-rank ones.
 */
import type { SqliteHandle } from "./handle.js";
import type { Breakdown, BreakdownRow, MonitorQuery, MonitorSeries } from "../contract/monitor.js";
import { monitorReads, rangeCells } from "../monitor-reads.js";
import { breakdownOf, seriesOf, type Cell } from "../rollup.js";
import { rawContributions } from "./rollups.js";

/** The range's cells: rollup rows for its whole hours, runs for the rest. */
function cells(db: SqliteHandle, q: MonitorQuery): Cell[] {
  const { hours, runs } = monitorReads(q);
  const rows = hours
    ? (db
        .prepare("SELECT * FROM monitor_rollups WHERE project = ? AND hour >= ? AND hour < ?")
        .all(q.project, hours.from, hours.to) as Record<string, unknown>[])
    : [];
  return rangeCells(rows, runs ? rawContributions(db, q.project, runs.gte, runs.lt) : []);
}

/** Every chart's series for one project, range and bucket size. */
export function monitorSeries(db: SqliteHandle, q: MonitorQuery): MonitorSeries {
  return seriesOf(q, cells(db, q));
}

/** One table of the page: per model or provider (llm runs) or per root run name (traces). */
export function monitorBreakdown(db: SqliteHandle, q: MonitorQuery, by: Breakdown): BreakdownRow[] {
  return breakdownOf(q, cells(db, q), by);
}
