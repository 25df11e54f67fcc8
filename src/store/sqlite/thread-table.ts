/**
 * The SQLite store's threads table (store/thread-rollup.ts): a root run's
 * part in its thread, read from its row with the thread id expression of
 * migration 7's runs_threads index, and the writes that apply a transaction's
 * deltas, then find each touched thread's first and last turn by that index.
 */
import type { SqliteHandle, SqliteStatement } from "./handle.js";
import { ThreadDeltas, type ThreadContribution } from "../thread-rollup.js";
import { numericForm, THREAD_ID } from "./threads.js";

const LAT = "(julianday(end_time) - julianday(start_time)) * 86400000.0";
const ROOTS = `parent_run_id IS NULL AND ${THREAD_ID} IS NOT NULL`;

/** One run's part in its thread, by id (none unless it is a root with a thread id). */
export function threadContributionStatement(db: SqliteHandle): SqliteStatement {
  return db.prepare(
    `SELECT session_name AS project, CAST(${THREAD_ID} AS TEXT) AS thread_id, ${LAT} AS latency_ms FROM runs WHERE id = ? AND ${ROOTS}`,
  );
}

/** The thread parts of the runs `where` picks, grouped by thread. */
export function groupedThreadContributions(db: SqliteHandle, where: string, ...args: unknown[]): ThreadContribution[] {
  return db
    .prepare(
      `SELECT session_name AS project, CAST(${THREAD_ID} AS TEXT) AS thread_id, count(*) AS n, sum(${LAT}) AS latency_ms, count(${LAT}) AS latency_turns
       FROM runs WHERE ${ROOTS} AND (${where}) GROUP BY session_name, CAST(${THREAD_ID} AS TEXT)`,
    )
    .all(...args) as ThreadContribution[];
}

/** Applies a transaction's thread deltas (inside it, after its runs are written). */
export class SqliteThreadWriter {
  private readonly add: SqliteStatement;
  private readonly bounds: SqliteStatement;
  private readonly boundsNoProject: SqliteStatement;
  private readonly setBounds: SqliteStatement;
  private readonly drop: SqliteStatement;

  constructor(db: SqliteHandle) {
    this.add = db.prepare(
      `INSERT INTO threads (project, thread_id, turns, latency_ms, latency_turns) VALUES (@project, @thread_id, @turns, @latency_ms, @latency_turns)
       ON CONFLICT (project, thread_id) DO UPDATE SET turns = turns + excluded.turns, latency_ms = latency_ms + excluded.latency_ms, latency_turns = latency_turns + excluded.latency_turns`,
    );
    const match = `parent_run_id IS NULL AND ${THREAD_ID} IN (@t, @n) AND CAST(${THREAD_ID} AS TEXT) = @t AND start_time IS NOT NULL`;
    const bounds = (project: string) =>
      db.prepare(
        `SELECT (SELECT start_time FROM runs INDEXED BY runs_threads WHERE ${project} AND ${match} ORDER BY start_time LIMIT 1) AS first_time,
          (SELECT start_time FROM runs INDEXED BY runs_threads WHERE ${project} AND ${match} ORDER BY start_time DESC LIMIT 1) AS last_time`,
      );
    this.bounds = bounds("session_name = @p");
    this.boundsNoProject = bounds("session_name IS NULL");
    this.setBounds = db.prepare(
      "UPDATE threads SET first_time = @first_time, last_time = @last_time WHERE project = @project AND thread_id = @thread_id",
    );
    this.drop = db.prepare("DELETE FROM threads WHERE project = ? AND thread_id = ? AND turns <= 0");
  }

  apply(deltas: ThreadDeltas): void {
    for (const d of deltas.touched()) {
      this.add.run(d);
      const args = { p: d.project, t: d.thread_id, n: numericForm(d.thread_id) };
      const b = (d.project === "" ? this.boundsNoProject : this.bounds).get(args) as {
        first_time: string | null;
        last_time: string | null;
      };
      this.setBounds.run({ ...b, project: d.project, thread_id: d.thread_id });
      this.drop.run(d.project, d.thread_id);
    }
  }
}

/** Rebuild the threads table from the runs (migration 11's backfill; also a repair). */
export function rebuildThreads(db: SqliteHandle): void {
  db.exec("DELETE FROM threads");
  db.exec(
    `INSERT INTO threads (project, thread_id, turns, latency_ms, latency_turns, first_time, last_time)
     SELECT coalesce(session_name, ''), CAST(${THREAD_ID} AS TEXT), count(*), coalesce(sum(${LAT}), 0), count(${LAT}), min(start_time), max(start_time)
     FROM runs WHERE ${ROOTS} GROUP BY session_name, CAST(${THREAD_ID} AS TEXT)`,
  );
}
