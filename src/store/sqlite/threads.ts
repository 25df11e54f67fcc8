/**
 * ThreadStore over SQLite. A thread's id is read with the expression of
 * migration 7's runs_threads index (root runs by project, then thread); the
 * list is a page of the threads table kept on ingest (thread-table.ts), a
 * thread's turns are one range of that index, and usage totals are summed for
 * the page's threads only. Threads are
 * per project: the same id in two projects is two threads. An id is its text,
 * as on PostgreSQL: a numeric session id 42 and the text "42" are one thread,
 * looked up as "42".
 */
import type { SqliteHandle } from "./handle.js";
import { inTraces } from "./trace-members.js";
import { canonicalTime } from "../time.js";
import type { ThreadPage, ThreadQuery, ThreadSummary, ThreadTurn } from "../contract/threads.js";
import type { StoredRun } from "../contract/runs.js";
import { afterThreadCursor, decodeThreadCursor, encodeThreadCursor, pageLimit, splitPage } from "../paging.js";
import { summaryView, turnView, type ThreadGroupRow, type ThreadTurnRow, type ThreadUsage } from "../thread-views.js";

export const THREAD_ID =
  "coalesce(json_extract(extra, '$.metadata.session_id'), json_extract(extra, '$.metadata.thread_id'), json_extract(extra, '$.metadata.conversation_id'))";

/** One page of threads, most recently active first: a range of the threads table (migration 11, kept on ingest by thread-table.ts). */
export function threadGroups(db: SqliteHandle, q: ThreadQuery): { rows: ThreadGroupRow[]; more: boolean } {
  const where = ["turns > 0"];
  const a: Record<string, unknown> = {};
  if (q.project) {
    where.push("project = @project");
    a.project = q.project;
  }
  if (q.before) {
    where.push("last_time < @before");
    a.before = canonicalTime(q.before) ?? q.before;
  }
  if (q.cursor) {
    [a.ct, a.cp, a.cid] = decodeThreadCursor(q.cursor);
    where.push(afterThreadCursor("@ct", "@cp", "@cid"));
  }
  const limit = pageLimit(q.limit, 50, 500);
  const rows = db
    .prepare(
      `SELECT nullif(project, '') AS project, thread_id, turns, first_time, last_time, latency_ms, latency_turns FROM threads
       WHERE ${where.join(" AND ")} ORDER BY last_time DESC NULLS LAST, ${q.project ? "" : "project, "}thread_id LIMIT ${limit + 1}`,
    )
    .all(a) as ThreadGroupRow[];
  const { page, more } = splitPage(rows, limit);
  return { rows: page, more };
}

/** A root run of a thread, with its project. */
export interface TurnRow extends ThreadTurnRow {
  session_name: string | null;
}

/**
 * The value a stored id may have when its text is `threadId`: the number for a
 * numeric text (JSON numbers come out of json_extract as numbers), else null.
 */
export function numericForm(threadId: string): number | null {
  const n = Number(threadId);
  return threadId.trim() !== "" && Number.isFinite(n) ? n : null;
}

/**
 * The root runs of a thread, oldest first (at most `limit`). The indexed
 * expression is probed for the text and its numeric form, so the lookup stays
 * a range of runs_threads; the text comparison then keeps only the ids whose
 * text is exactly `threadId` (42.0 is not "42").
 */
export function threadRoots(db: SqliteHandle, threadId: string, project?: string, limit = 1000): TurnRow[] {
  return db
    .prepare(
      `SELECT id, name, session_name, start_time, end_time, (julianday(end_time) - julianday(start_time)) * 86400000.0 AS latency_ms, error
       FROM runs INDEXED BY runs_threads
       WHERE parent_run_id IS NULL AND ${THREAD_ID} IN (@t, @n) AND CAST(${THREAD_ID} AS TEXT) = @t ${project ? "AND session_name = @project" : ""}
       ORDER BY start_time, id LIMIT ${limit}`,
    )
    .all({ t: threadId, n: numericForm(threadId), project }) as TurnRow[];
}

/** Usage summed over every run of these traces. */
export function tracesUsage(db: SqliteHandle, traceIds: readonly string[]): ThreadUsage {
  return db
    .prepare(
      `SELECT sum(json_extract(v_usage, '$.input_tokens')) AS input_tokens, sum(json_extract(v_usage, '$.output_tokens')) AS output_tokens,
        sum(json_extract(v_usage, '$.total_tokens')) AS total_tokens, sum(json_extract(v_usage, '$.total_cost')) AS cost, count(error) AS errors
       FROM runs WHERE ${inTraces("(SELECT value FROM json_each(@list))")}`,
    )
    .get({ list: JSON.stringify(traceIds) }) as ThreadUsage;
}

/** Reads one stored run whole (payloads in pieces, native copies derived on read). */
export type RunReader = (id: string) => StoredRun | undefined;

function turnOf(db: SqliteHandle, r: TurnRow, read: RunReader): ThreadTurn {
  return turnView(r, read(r.id), tracesUsage(db, [r.id]));
}

export function listThreads(db: SqliteHandle, q: ThreadQuery, read: RunReader): ThreadPage {
  const { rows, more } = threadGroups(db, q);
  const threads = rows.map((g): ThreadSummary => {
    const roots = threadRoots(db, g.thread_id, g.project ?? undefined);
    const u = tracesUsage(
      db,
      roots.map((r) => r.id),
    );
    const first = roots[0] ? read(roots[0].id) : undefined;
    const last = roots.length ? read(roots[roots.length - 1]!.id) : undefined;
    return summaryView(g, first, last, u);
  });
  const last = rows[rows.length - 1];
  return {
    threads,
    next_before: more && last ? last.last_time : null,
    next_cursor: more && last ? encodeThreadCursor(last.last_time, last.project ?? "", last.thread_id) : null,
  };
}

export function threadTurns(db: SqliteHandle, threadId: string, project: string | undefined, read: RunReader): ThreadTurn[] {
  return threadRoots(db, threadId, project).map((r) => turnOf(db, r, read));
}
