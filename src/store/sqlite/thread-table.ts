/**
 * The SQLite store's threads table (store/thread-rollup.ts): a root run's
 * part in its thread, read from its row with the thread id expression of
 * migration 7's runs_threads index, and the writes that apply a transaction's
 * deltas, then find each touched thread's first and last turn by that index.
 */
import type { SqliteHandle, SqliteStatement } from "./handle.js";
import { ThreadDeltas, type ThreadContribution, type ThreadDelta } from "../thread-rollup.js";
import { numericForm, THREAD_ID } from "./threads.js";

const LAT = "(julianday(end_time) - julianday(start_time)) * 86400000.0";
const ASCII = /^[ -~]*$/;
const ROOTS = `parent_run_id IS NULL AND ${THREAD_ID} IS NOT NULL`;

/**
 * A run's part in its thread as columns of a statement on its row (ingest's load, and the RETURNING clause of its
 * write), with its start time: none unless it is a root with a thread id.
 */
export const THREAD_PART_IN_ROW = `session_name AS t_project, CAST(${THREAD_ID} AS TEXT) AS t_thread_id, ${LAT} AS t_latency_ms, start_time AS t_start_time, ${ROOTS} AS t_counts`;

/** The names of THREAD_PART_IN_ROW's columns, in its order. */
export const THREAD_PART_IN_ROW_NAMES: readonly string[] = ["t_project", "t_thread_id", "t_latency_ms", "t_start_time", "t_counts"];

/** A root run's part in its thread, with the start time of its turn. */
export interface ThreadPart extends ThreadContribution {
  start_time: unknown;
}

/** The run's part in its thread from a row read with THREAD_PART_IN_ROW. */
export function threadPartInRow(row: Record<string, unknown>): ThreadPart | undefined {
  if (row.t_counts !== 1) return undefined;
  return {
    project: row.t_project as string | null,
    thread_id: row.t_thread_id as string,
    latency_ms: row.t_latency_ms as number | null,
    start_time: row.t_start_time,
  };
}

/** threadPartInRow for a row read as an array: THREAD_PART_IN_ROW's columns from index `at`. */
export function threadPartInRawRow(row: readonly unknown[], at: number): ThreadPart | undefined {
  if (row[at + 4] !== 1) return undefined;
  return {
    project: row[at] as string | null,
    thread_id: row[at + 1] as string,
    latency_ms: row[at + 2] as number | null,
    start_time: row[at + 3],
  };
}

/**
 * How a transaction's writes move each touched thread's first and last turn. While turns are only added (or
 * rewritten where they stand), the new bounds are the old ones widened by the added turns' start times; a turn
 * that leaves a thread or moves in time may have been its first or last, so that thread's bounds are found
 * again by the thread index.
 */
export class ThreadBounds {
  private readonly threads = new Map<string, { again: boolean; first: string | null; last: string | null }>();

  private at(p: ThreadPart) {
    const key = JSON.stringify([p.project ?? "", String(p.thread_id)]);
    let b = this.threads.get(key);
    if (!b) this.threads.set(key, (b = { again: false, first: null, last: null }));
    return b;
  }

  /** One run's part before and after its write. */
  note(before: ThreadPart | undefined, after: ThreadPart | undefined): void {
    if (
      before &&
      after &&
      before.project === after.project &&
      before.thread_id === after.thread_id &&
      before.start_time === after.start_time
    )
      return;
    if (before) this.at(before).again = true;
    if (!after || after.start_time === null) return;
    const b = this.at(after);
    // Stored start times are canonical ISO text: printable ASCII, which JS and SQLite order alike; anything else is left to the index.
    if (typeof after.start_time !== "string" || !ASCII.test(after.start_time)) b.again = true;
    else {
      if (b.first === null || after.start_time < b.first) b.first = after.start_time;
      if (b.last === null || after.start_time > b.last) b.last = after.start_time;
    }
  }

  /** What the writes did to a thread's bounds: widened by `first`..`last` (null: not at all), or `again` (find them again). */
  of(d: ThreadDelta): { again: boolean; first: string | null; last: string | null } | undefined {
    return this.threads.get(JSON.stringify([d.project, d.thread_id]));
  }
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

  private readonly widen: SqliteStatement;

  constructor(db: SqliteHandle) {
    // min and max of SQLite order values as ORDER BY does (the bounds query's); NULL (no timed turn) on either side leaves the other.
    this.widen = db.prepare(
      `INSERT INTO threads (project, thread_id, turns, latency_ms, latency_turns, first_time, last_time)
       VALUES (@project, @thread_id, @turns, @latency_ms, @latency_turns, @first, @last)
       ON CONFLICT (project, thread_id) DO UPDATE SET turns = turns + excluded.turns, latency_ms = latency_ms + excluded.latency_ms,
         latency_turns = latency_turns + excluded.latency_turns,
         first_time = coalesce(min(first_time, excluded.first_time), first_time, excluded.first_time),
         last_time = coalesce(max(last_time, excluded.last_time), last_time, excluded.last_time)`,
    );
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

  /** Applies the deltas; with `bounds`, a thread whose turns were only added or rewritten in place has its bounds widened, not found again. */
  apply(deltas: ThreadDeltas, bounds?: ThreadBounds): void {
    for (const d of deltas.touched()) {
      const moved = bounds?.of(d);
      if (bounds && !moved?.again) {
        // A thread whose counts and bounds stay as they are needs no write.
        if (moved || d.turns !== 0 || d.latency_ms !== 0 || d.latency_turns !== 0)
          this.widen.run({ ...d, first: moved?.first ?? null, last: moved?.last ?? null });
        continue;
      }
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
