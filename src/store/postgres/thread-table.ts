/**
 * The PostgreSQL store's threads table (store/thread-rollup.ts): a root
 * run's part in its thread, read with tracepipe_thread_key (the function
 * migration 3's thread indexes hold), and the writes that apply a
 * transaction's deltas: increments in key order (INSERT ... ON CONFLICT DO
 * UPDATE), then each touched thread's first and last turn found again by
 * runs_thread_turns. The increment holds the thread row's lock until commit, so
 * a concurrent writer of the same thread finds its bounds after this one's
 * turns are committed, and the last to commit sets them from every turn.
 */
import type pg from "pg";
import type { ThreadContribution, ThreadDeltas } from "../thread-rollup.js";

const KEY = "tracepipe_thread_key(extra)";
const ROOTS = `parent_run_id IS NULL AND ${KEY} IS NOT NULL`;

/** The thread columns of a run row (for RETURNING): thread_id is null unless it is a root with a thread id. */
export const THREAD_PART = `CASE WHEN parent_run_id IS NULL THEN ${KEY} END AS thread_id, latency_ms`;

/** These runs' parts in their threads. */
export async function threadContributions(client: pg.ClientBase, ids: readonly string[]): Promise<ThreadContribution[]> {
  return (
    await client.query(
      `SELECT session_name AS project, ${KEY} AS thread_id, latency_ms FROM runs WHERE id = ANY($1::text[]) AND ${ROOTS}`,
      [ids],
    )
  ).rows as ThreadContribution[];
}

/** The thread parts of every root of `table`, grouped by thread. */
export async function groupedThreadContributions(client: pg.ClientBase, table: string): Promise<ThreadContribution[]> {
  return (
    await client.query(
      `SELECT session_name AS project, ${KEY} AS thread_id, count(*) AS n, sum(latency_ms) AS latency_ms, count(latency_ms) AS latency_turns
       FROM ${table} WHERE ${ROOTS} GROUP BY 1, 2`,
    )
  ).rows as ThreadContribution[];
}

/** Bounds of the touched threads ($1 projects, $2 thread ids), from the roots' index. */
const BOUNDS = (projectMatch: string) => `UPDATE threads t SET
    first_time = (SELECT min(r.start_time) FROM runs r WHERE r.parent_run_id IS NULL AND ${projectMatch} AND tracepipe_thread_key(r.extra) = t.thread_id),
    last_time = (SELECT max(r.start_time) FROM runs r WHERE r.parent_run_id IS NULL AND ${projectMatch} AND tracepipe_thread_key(r.extra) = t.thread_id)
  FROM unnest($1::text[], $2::text[]) AS v(project, thread_id)
  WHERE t.project = v.project AND t.thread_id = v.thread_id`;

/** Apply a transaction's thread deltas (inside it, after its runs are written or removed). */
export async function applyThreads(client: pg.ClientBase, deltas: ThreadDeltas): Promise<void> {
  const ts = deltas.touched();
  if (ts.length === 0) return;
  await client.query(
    `INSERT INTO threads AS t (project, thread_id, turns, latency_ms, latency_turns)
     SELECT project, thread_id, turns, latency_ms, latency_turns
     FROM unnest($1::text[], $2::text[], $3::bigint[], $4::float8[], $5::bigint[]) WITH ORDINALITY AS v(project, thread_id, turns, latency_ms, latency_turns, ord)
     ORDER BY ord
     ON CONFLICT (project, thread_id) DO UPDATE SET turns = t.turns + excluded.turns, latency_ms = t.latency_ms + excluded.latency_ms, latency_turns = t.latency_turns + excluded.latency_turns`,
    [
      ts.map((d) => d.project),
      ts.map((d) => d.thread_id),
      ts.map((d) => d.turns),
      ts.map((d) => d.latency_ms),
      ts.map((d) => d.latency_turns),
    ],
  );
  const named = ts.filter((d) => d.project !== "");
  const unnamed = ts.filter((d) => d.project === "");
  if (named.length) await client.query(BOUNDS("r.session_name = t.project"), [named.map((d) => d.project), named.map((d) => d.thread_id)]);
  if (unnamed.length)
    await client.query(BOUNDS("r.session_name IS NULL"), [unnamed.map((d) => d.project), unnamed.map((d) => d.thread_id)]);
  // A thread row reaches no turns only by a delta that takes turns away (a run leaving it, retention).
  if (ts.every((d) => d.turns > 0)) return;
  await client.query(
    "DELETE FROM threads t USING unnest($1::text[], $2::text[]) AS v(project, thread_id) WHERE t.project = v.project AND t.thread_id = v.thread_id AND t.turns <= 0",
    [ts.map((d) => d.project), ts.map((d) => d.thread_id)],
  );
}

/** Rebuild the threads table from the runs (migration 4's backfill; also a repair). */
export async function rebuildThreads(client: pg.ClientBase): Promise<void> {
  await client.query("DELETE FROM threads");
  await client.query(
    `INSERT INTO threads (project, thread_id, turns, latency_ms, latency_turns, first_time, last_time)
     SELECT coalesce(session_name, ''), ${KEY}, count(*), coalesce(sum(latency_ms), 0), count(latency_ms), min(start_time), max(start_time)
     FROM runs WHERE ${ROOTS} GROUP BY session_name, ${KEY}`,
  );
}
