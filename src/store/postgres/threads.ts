/**
 * ThreadStore over PostgreSQL, answering as the SQLite store does
 * (store/sqlite/threads.ts). A thread's id is read with
 * `tracepipe_thread_key(extra)`, the function migration 3 defines and indexes
 * on root runs (runs_thread_turns: by thread id, the project a filter); the list is a page of the
 * threads table kept on ingest (thread-table.ts), a thread's turns are one
 * range of that index, and usage totals are summed for the page's threads only (one query for the page's
 * turns, one for their usage). Threads are per project: the same id in
 * two projects is two threads.
 */
import type { ThreadPage, ThreadQuery, ThreadSummary, ThreadTurn } from "../contract/threads.js";
import type { StoredRun } from "../contract/runs.js";
import { afterThreadCursor, decodeThreadCursor, encodeThreadCursor, pageLimit, splitPage } from "../paging.js";
import { summaryView, turnView, type ThreadGroupRow, type ThreadTurnRow, type ThreadUsage } from "../thread-views.js";
import { canonicalTime } from "../time.js";
import type { PgPool } from "./pool.js";
import { inTraces } from "./trace-members.js";

/** The thread id of a root run, exactly as migration 3's index holds it. */
export const THREAD_KEY = "tracepipe_thread_key(extra)";

/** Reads one stored run whole (as getRun does). */
export type RunReader = (id: string) => Promise<StoredRun | undefined>;

/** One page of threads, most recently active first: a range of the threads table (migration 4, kept on ingest by thread-table.ts). */
async function threadGroups(pool: PgPool, q: ThreadQuery): Promise<{ rows: ThreadGroupRow[]; more: boolean }> {
  const where = ["turns > 0"];
  const args: unknown[] = [];
  if (q.project) {
    args.push(q.project);
    where.push(`project = $${args.length}::text`);
  }
  if (q.before) {
    args.push(canonicalTime(q.before) ?? q.before);
    where.push(`last_time < $${args.length}::text`);
  }
  if (q.cursor) {
    const [t, project, id] = decodeThreadCursor(q.cursor);
    args.push(t, project, id);
    const n = args.length;
    where.push(afterThreadCursor(`$${n - 2}::text`, `$${n - 1}::text`, `$${n}::text`));
  }
  const limit = pageLimit(q.limit, 50, 500);
  args.push(limit + 1);
  const rows = (
    await pool.query<ThreadGroupRow>(
      `SELECT nullif(project, '') AS project, thread_id, turns::int AS turns, first_time, last_time, latency_ms, latency_turns::int AS latency_turns FROM threads
       WHERE ${where.join(" AND ")} ORDER BY last_time DESC NULLS LAST, ${q.project ? "" : "project, "}thread_id LIMIT $${args.length}::int`,
      args,
    )
  ).rows;
  const { page, more } = splitPage(rows, limit);
  return { rows: page, more };
}

/** The root runs of a thread, oldest first (at most `limit`). */
async function threadRoots(pool: PgPool, threadId: string, project?: string, limit = 1000): Promise<ThreadTurnRow[]> {
  const args: unknown[] = [threadId, limit];
  if (project !== undefined) args.push(project);
  const rows = (
    await pool.query(
      `SELECT id, name, start_time, end_time, latency_ms, error, exact FROM runs
       WHERE parent_run_id IS NULL AND ${THREAD_KEY} = $1::text ${project !== undefined ? "AND session_name = $3::text" : ""}
       ORDER BY start_time NULLS FIRST, id LIMIT $2::int`,
      args,
    )
  ).rows;
  return rows.map(turnRow);
}

/** A turn's row as read: a name or error PostgreSQL text could not hold is kept exactly in `exact` (columns.ts). */
function turnRow(r: Record<string, unknown>): ThreadTurnRow {
  const exact = r.exact ? (JSON.parse(r.exact as string) as Record<string, string>) : {};
  return {
    id: r.id as string,
    name: exact.name ?? (r.name as string | null),
    start_time: r.start_time as string | null,
    end_time: r.end_time as string | null,
    latency_ms: r.latency_ms as number | null,
    error: exact.error ?? (r.error as string | null),
  };
}

/** A number inside the usage document, when it is one. */
const usageNumber = (key: string) => `CASE WHEN jsonb_typeof(usage->'${key}') = 'number' THEN (usage->>'${key}')::float8 END`;

/** Usage summed over every run of these traces. */
async function tracesUsage(pool: PgPool, traceIds: readonly string[]): Promise<ThreadUsage> {
  return (
    await pool.query<ThreadUsage>(
      `SELECT sum(${usageNumber("input_tokens")}) AS input_tokens, sum(${usageNumber("output_tokens")}) AS output_tokens,
        sum(${usageNumber("total_tokens")}) AS total_tokens, sum(total_cost) AS cost, count(error)::int AS errors
       FROM runs WHERE ${inTraces("$1::text[]")}`,
      [traceIds],
    )
  ).rows[0]!;
}

async function turnOf(pool: PgPool, r: ThreadTurnRow, read: RunReader): Promise<ThreadTurn> {
  return turnView(r, await read(r.id), await tracesUsage(pool, [r.id]));
}

/** The root runs of each of the page's threads, oldest first: one query for the whole page. */
async function pageRoots(pool: PgPool, rows: readonly ThreadGroupRow[], limit = 1000): Promise<ThreadTurnRow[][]> {
  const byThread: ThreadTurnRow[][] = rows.map(() => []);
  if (rows.length === 0) return byThread;
  const result = await pool.query(
    `SELECT k.i::int AS i, r.id, r.name, r.start_time, r.end_time, r.latency_ms, r.error, r.exact
     FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS k(project, thread_id, i)
     CROSS JOIN LATERAL (
       SELECT id, name, start_time, end_time, latency_ms, error, exact FROM runs
       WHERE parent_run_id IS NULL AND ${THREAD_KEY} = k.thread_id AND (k.project = '' OR session_name = k.project)
       ORDER BY start_time NULLS FIRST, id LIMIT $3::int) r
     ORDER BY k.i, r.start_time NULLS FIRST, r.id`,
    [rows.map((g) => g.project ?? ""), rows.map((g) => g.thread_id), limit],
  );
  for (const r of result.rows) byThread[(r.i as number) - 1]!.push(turnRow(r));
  return byThread;
}

/** Usage per trace, for every trace of the page at once (summed per thread by the caller). */
async function usageByTrace(pool: PgPool, traceIds: readonly string[]): Promise<Map<string, ThreadUsage>> {
  const out = new Map<string, ThreadUsage>();
  if (traceIds.length === 0) return out;
  const rows = (
    await pool.query<ThreadUsage & { trace_id: string }>(
      `SELECT trace_id, sum(${usageNumber("input_tokens")}) AS input_tokens, sum(${usageNumber("output_tokens")}) AS output_tokens,
        sum(${usageNumber("total_tokens")}) AS total_tokens, sum(total_cost) AS cost, count(error)::int AS errors
       FROM runs WHERE ${inTraces("$1::text[]")} GROUP BY trace_id`,
      [traceIds],
    )
  ).rows;
  for (const r of rows) out.set(r.trace_id, r);
  return out;
}

/** SQL's sum over several traces' sums: null when none of them had a number. */
function sumOf(rows: readonly (ThreadUsage | undefined)[], key: "input_tokens" | "output_tokens" | "total_tokens" | "cost"): number | null {
  let total: number | null = null;
  for (const r of rows) {
    const v = r?.[key];
    if (v !== null && v !== undefined) total = (total ?? 0) + Number(v);
  }
  return total;
}

/** `fn` over `items`, at most `width` at a time (the pool is shared with ingest: the page must not queue on every connection). */
async function mapBounded<T, R>(items: readonly T[], width: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  return out;
}

export async function listThreads(pool: PgPool, q: ThreadQuery, read: RunReader): Promise<ThreadPage> {
  const { rows, more } = await threadGroups(pool, q);
  const roots = await pageRoots(pool, rows);
  const usage = await usageByTrace(
    pool,
    roots.flatMap((rs) => rs.map((r) => r.id)),
  );
  // The first turn's question and the last turn's answer: whole runs (their text may live in pieces).
  const ends = await mapBounded(roots, 4, async (rs) => ({
    first: rs[0] ? await read(rs[0].id) : undefined,
    last: rs.length ? await read(rs[rs.length - 1]!.id) : undefined,
  }));
  const threads: ThreadSummary[] = rows.map((g, i) => {
    const u = roots[i]!.map((r) => usage.get(r.id));
    const { first, last } = ends[i]!;
    return summaryView(g, first, last, {
      input_tokens: sumOf(u, "input_tokens"),
      output_tokens: sumOf(u, "output_tokens"),
      total_tokens: sumOf(u, "total_tokens"),
      cost: sumOf(u, "cost"),
      errors: u.reduce((n, r) => n + (r?.errors ?? 0), 0),
    });
  });
  const last = rows[rows.length - 1];
  return {
    threads,
    next_before: more && last ? last.last_time : null,
    next_cursor: more && last ? encodeThreadCursor(last.last_time, last.project ?? "", last.thread_id) : null,
  };
}

export async function threadTurns(pool: PgPool, threadId: string, project: string | undefined, read: RunReader): Promise<ThreadTurn[]> {
  const out: ThreadTurn[] = [];
  for (const r of await threadRoots(pool, threadId, project)) out.push(await turnOf(pool, r, read));
  return out;
}
