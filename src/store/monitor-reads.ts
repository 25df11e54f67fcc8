/**
 * What both stores read to answer a monitoring query, so SQLite and
 * PostgreSQL split a range alike: its whole hours from the rollup rows kept on
 * ingest, the rest (minute buckets, the current hour) from the runs
 * themselves (store/rollup.ts plan). Each store keeps only its SQL.
 */
import type { MonitorQuery } from "./contract/monitor.js";
import { cellOfRow, cellsOfRuns, plan, type Cell, type ContributionRow } from "./rollup.js";
import { canonicalTime } from "./time.js";

export interface MonitorReads {
  /** Rollup rows with `from <= hour < to`, when the range holds whole hours. */
  hours?: { from: number; to: number };
  /** Runs with `gte <= start_time < lt` (stored times), when part of the range is not whole hours. */
  runs?: { gte: string; lt: string };
}

const iso = (ms: number) => canonicalTime(new Date(ms).toISOString())!;

export function monitorReads(q: MonitorQuery): MonitorReads {
  const { rollupTo, rawFrom } = plan(q);
  return {
    ...(rollupTo > q.from_ms ? { hours: { from: q.from_ms, to: rollupTo } } : {}),
    ...(q.to_ms > rawFrom ? { runs: { gte: iso(rawFrom), lt: iso(q.to_ms) } } : {}),
  };
}

/** The range's cells: the rollup rows read, then the runs' contributions. */
export function rangeCells(rollupRows: readonly Record<string, unknown>[], runs: readonly ContributionRow[]): Cell[] {
  return [...rollupRows.map(cellOfRow), ...cellsOfRuns(runs)];
}
