/**
 * The run API's reads over PostgreSQL (queryRuns, countRuns, a project's runs)
 * written for migration 7's start-time indexes: a root run is in the roots'
 * partial indexes only, any other run in the children's, so "every run" is
 * asked as its two halves. A page is then two ordered walks, each stopping
 * after a page, merged; a count, two index-only counts; and a filter that
 * says EVERY_RUN lets the planner read both indexes (a bitmap OR) where the
 * condition alone would match neither index's predicate.
 */
import type { RunQuery } from "../contract/runs.js";
import { afterRunCursor, decodeRunCursor, pageLimit } from "../paging.js";
import { canonicalTime } from "../time.js";
import { metadataConditions } from "./metadata.js";
import { inTrace } from "./trace-members.js";

/** True of every run: the roots' and the children's partial indexes each match one side. */
export const EVERY_RUN = "(parent_run_id IS NULL OR parent_run_id IS NOT NULL)";

/** One page of `columns` of the runs `q` picks, in (start_time NULLS FIRST, id) order, one more than the page when there is more. */
export function runPageSql(q: RunQuery, columns: string): { sql: string; args: unknown[]; limit: number } {
  const where: string[] = [];
  const args: unknown[] = [];
  const cond = (sql: (n: number) => string, value: unknown) => {
    args.push(value);
    where.push(sql(args.length));
  };
  if (q.trace_id) cond((n) => inTrace(`$${n}`), q.trace_id);
  if (q.project) cond((n) => `session_name = $${n}`, q.project);
  if (q.run_type) cond((n) => `run_type = $${n}`, q.run_type);
  if (q.start_time_gte) cond((n) => `start_time >= $${n}`, canonicalTime(q.start_time_gte) ?? q.start_time_gte);
  if (q.start_time_lt) cond((n) => `start_time < $${n}`, canonicalTime(q.start_time_lt) ?? q.start_time_lt);
  where.push(...metadataConditions("runs", (v) => (args.push(v), `$${args.length}::text`), q.metadata, q.tags));
  if (q.cursor) {
    const [t, id] = decodeRunCursor(q.cursor);
    where.push(afterRunCursor(t, id, (v) => (args.push(v), `$${args.length}`)));
  }
  const limit = pageLimit(q.limit, 100, 1000);
  args.push(limit + 1);
  // NULLS FIRST: the order SQLite gives, so both stores page alike.
  const order = `ORDER BY start_time NULLS FIRST, id LIMIT $${args.length}`;
  const half = (parent: string) => `(SELECT ${columns} FROM runs WHERE ${[parent, ...where].join(" AND ")} ${order})`;
  const sql = `SELECT * FROM (${half("parent_run_id IS NULL")} UNION ALL ${half("parent_run_id IS NOT NULL")}) page ${order}`;
  return { sql, args, limit };
}

/** Runs in one project, counted from the two halves' indexes. */
export const PROJECT_COUNT_SQL = `SELECT ((SELECT count(*) FROM runs WHERE session_name = $1 AND parent_run_id IS NULL)
  + (SELECT count(*) FROM runs WHERE session_name = $1 AND parent_run_id IS NOT NULL))::int AS n`;
