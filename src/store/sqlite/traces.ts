/**
 * The trace viewer's and `tracepipe runs`' queries in SQLite (TraceStore):
 * pages of trace summaries by cursor, the runs of one trace.
 *
 * Speed: the newest-first list walks the partial indexes on root runs
 * (migration 3) and stops after one page, so its cost does not grow with the
 * store. Per-trace totals are computed for the page's traces only, through
 * the (trace_id, dotted_order) index. Filters that look inside a trace
 * (model, provider, errors, text) are checked per candidate root while walking;
 * a filter that matches rarely walks further (text search is a scan by nature).
 */
import type { SqliteHandle } from "./handle.js";
import { canonicalTime } from "../time.js";
import { decodeTraceCursor, encodeTraceCursor, splitPage, tracePageLimit } from "../paging.js";
import type { TraceFilter, TracePage, TraceRun } from "../contract/traces.js";
import { traceRunView, traceSort, traceSummaryView, type TraceRootRow, type TraceRunRow } from "../trace-views.js";
import { metadataConditions } from "./metadata.js";
import { TRACE_FEEDBACK_SQL } from "./feedback.js";
import type { FeedbackSummary } from "../contract/feedback.js";

interface AggRow {
  run_count: number;
  error_count: number;
  first_error: string | null;
  models: string | null;
  providers: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  total_tokens: number | null;
  total_cost: number | null;
  estimated: number;
  first_token_time: string | null;
}

const AGG_SQL = `
  SELECT count(*) AS run_count,
    count(error) AS error_count,
    (SELECT error FROM runs e WHERE e.trace_id = @id AND e.error IS NOT NULL ORDER BY e.dotted_order LIMIT 1) AS first_error,
    group_concat(DISTINCT v_model) AS models,
    group_concat(DISTINCT v_provider) AS providers,
    sum(json_extract(v_usage, '$.input_tokens')) AS input_tokens,
    sum(json_extract(v_usage, '$.output_tokens')) AS output_tokens,
    sum(json_extract(v_usage, '$.total_tokens')) AS total_tokens,
    sum(json_extract(v_usage, '$.total_cost')) AS total_cost,
    coalesce(max(json_extract(v_usage, '$.estimated')), 0) AS estimated,
    min(CASE WHEN run_type = 'llm' THEN first_token_time END) AS first_token_time
  FROM runs WHERE trace_id = @id`;

/** A run's cost, written as migration 4's index is, so SQLite reads it from the index. */
const RUN_COST = "json_extract(c.v_usage, '$.total_cost')";

export function listTraces(db: SqliteHandle, f: TraceFilter): TracePage {
  const where = ["r.parent_run_id IS NULL"];
  const args: Record<string, unknown> = {};
  let bound = 0;
  /** A named parameter holding `v`. */
  const bind = (v: unknown) => {
    const name = `p${bound++}`;
    args[name] = v;
    return `@${name}`;
  };
  if (f.project) where.push(`r.session_name = ${bind(f.project)}`);
  if (f.name) where.push(`instr(lower(r.name), lower(${bind(f.name)})) > 0`);
  if (f.run_type) where.push(`r.run_type = ${bind(f.run_type)}`);
  if (f.start_time_gte) where.push(`r.start_time >= ${bind(canonicalTime(f.start_time_gte) ?? f.start_time_gte)}`);
  if (f.start_time_lt) where.push(`r.start_time < ${bind(canonicalTime(f.start_time_lt) ?? f.start_time_lt)}`);
  // Trace-wide filters: the root's own row first (cheap), then its runs through the trace index.
  if (f.model) {
    const m = bind(f.model);
    where.push(`(r.v_model = ${m} OR EXISTS (SELECT 1 FROM runs c WHERE c.trace_id = r.id AND c.v_model = ${m}))`);
  }
  if (f.provider) {
    const p = bind(f.provider);
    where.push(`(r.v_provider = ${p} OR EXISTS (SELECT 1 FROM runs c WHERE c.trace_id = r.id AND c.v_provider = ${p}))`);
  }
  // Runs in error are few: their traces come from a small partial index, looked up once.
  if (f.errors_only) where.push("r.id IN (SELECT trace_id FROM runs WHERE error IS NOT NULL)");
  if (f.q) {
    const q = bind(f.q);
    where.push(
      `EXISTS (SELECT 1 FROM runs c WHERE c.trace_id = r.id AND (instr(lower(c.inputs), lower(${q})) > 0 OR instr(lower(c.outputs), lower(${q})) > 0 OR instr(lower(c.error), lower(${q})) > 0` +
        // Inputs or outputs stored in pieces (pieces.ts): each piece with the start of the next, so a match across two is found.
        ` OR (c.pieces IS NOT NULL AND EXISTS (SELECT 1 FROM run_pieces p WHERE p.run_id = c.id AND p.col IN ('inputs', 'outputs') AND instr(lower(p.text || coalesce((SELECT substr(n.text, 1, length(${q}) - 1) FROM run_pieces n WHERE n.run_id = p.run_id AND n.col = p.col AND n.seq = p.seq + 1), '')), lower(${q})) > 0))))`,
    );
  }
  for (const cond of metadataConditions("c", bind, f.metadata, f.tags))
    where.push(`EXISTS (SELECT 1 FROM runs c WHERE c.trace_id = r.id AND ${cond})`);
  if (f.feedback_key)
    where.push(`r.id IN (SELECT c.trace_id FROM feedback fb JOIN runs c ON c.id = fb.run_id WHERE fb.key = ${bind(f.feedback_key)})`);
  // A trace's cost from the (trace_id, cost) index of migration 4, never from the runs' JSON.
  const traceCost = `(SELECT sum(${RUN_COST}) FROM runs c WHERE c.trace_id = r.id AND ${RUN_COST} IS NOT NULL)`;
  if (f.min_cost !== undefined) where.push(`${traceCost} >= ${bind(f.min_cost)}`);
  if (f.max_cost !== undefined) where.push(`${traceCost} <= ${bind(f.max_cost)}`);
  const { sort, desc, key } = traceSort(f, "r.v_latency_ms", traceCost);
  const cmp = desc ? "<" : ">";
  const dir = desc ? "DESC" : "ASC";
  if (f.cursor) {
    const [v, id] = decodeTraceCursor(f.cursor, sort);
    const cv = bind(v);
    where.push(`(${key} ${cmp} ${cv} OR (${key} = ${cv} AND r.id ${cmp} ${bind(id)}))`);
  }
  const limit = tracePageLimit(f.limit);
  const sql = `SELECT r.id, r.name, r.run_type, r.session_name, r.start_time, r.end_time, r.error, ${key} AS k
    FROM runs r WHERE ${where.join(" AND ")} ORDER BY ${key} ${dir}, r.id ${dir} LIMIT @limit`;
  const rows = db.prepare(sql).all({ ...args, limit: limit + 1 }) as (TraceRootRow & { k: number | string })[];
  const { page, more, last } = splitPage(rows, limit);
  const agg = db.prepare(AGG_SQL);
  const fb = db.prepare(TRACE_FEEDBACK_SQL);
  const traces = page.map((r) => {
    const a = agg.get({ id: r.id }) as AggRow;
    return traceSummaryView(
      r,
      {
        ...a,
        models: a.models ? a.models.split(",") : [],
        providers: a.providers ? a.providers.split(",") : [],
        estimated: a.estimated === 1,
      },
      fb.all(r.id) as FeedbackSummary[],
    );
  });
  return { traces, cursor: more && last ? encodeTraceCursor(sort, last.k, last.id) : null };
}

/** Every run of one trace in tree order (dotted_order), without payloads. Empty when the trace is unknown. */
export function traceRuns(db: SqliteHandle, traceId: string): TraceRun[] {
  const rows = db
    .prepare(
      `SELECT id, parent_run_id, dotted_order, name, run_type, start_time, end_time, first_token_time, error, v_model AS model, v_provider AS provider,
        json_extract(v_usage, '$.input_tokens') AS input_tokens, json_extract(v_usage, '$.output_tokens') AS output_tokens,
        json_extract(v_usage, '$.total_tokens') AS total_tokens, json_extract(v_usage, '$.total_cost') AS total_cost,
        json_extract(v_usage, '$.estimated') AS estimated
      FROM runs WHERE trace_id = ? ORDER BY dotted_order, id`,
    )
    .all(traceId) as (Omit<TraceRunRow, "estimated"> & { estimated: number | null })[];
  return rows.map((r) => traceRunView({ ...r, estimated: r.estimated === 1 }));
}
