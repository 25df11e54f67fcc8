/**
 * The trace viewer's and `tracepipe runs`' queries in SQLite (TraceStore):
 * pages of trace summaries by cursor, the runs of one trace.
 *
 * Speed: the newest-first list walks the partial indexes on root runs
 * (migration 3) and stops after one page, so its cost does not grow with the
 * store. Per-trace totals are computed for the page's traces only, through
 * the trace index (trace-members.ts). Filters that look inside a trace
 * (model, provider, errors, text) are checked per candidate root while walking;
 * a filter that matches rarely walks further (text search is a scan by nature).
 */
import type { SqliteHandle } from "./handle.js";
import { traceConditions, traceOrder } from "../trace-filter.js";
import { MAX_TRACE_PAGE, encodeTraceCursor, pageLimit, splitPage } from "../paging.js";
import type { TraceFilter, TracePage, TraceRun } from "../contract/traces.js";
import { traceRunView, traceSummaryView, type TraceRootRow, type TraceRunRow } from "../trace-views.js";
import { metadataConditions } from "./metadata.js";
import { TRACE_FEEDBACK_SQL } from "./feedback.js";
import { inTrace, inTraceOfRow } from "./trace-members.js";
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
  FROM runs WHERE ${inTrace("@id")}`;

/** A run's cost, written as migration 4's index is, so SQLite reads it from the index. */
const RUN_COST = "json_extract(c.v_usage, '$.total_cost')";

export function listTraces(db: SqliteHandle, f: TraceFilter): TracePage {
  const args: Record<string, unknown> = {};
  let bound = 0;
  /** A named parameter holding `v`. */
  const bind = (v: unknown) => {
    const name = `p${bound++}`;
    args[name] = v;
    return `@${name}`;
  };
  // A trace's cost from the (trace_id, cost) index of migration 4, never from the runs' JSON.
  const traceCost = `(SELECT sum(${RUN_COST}) FROM runs c WHERE c.trace_id = r.id AND ${RUN_COST} IS NOT NULL)`;
  const contains = (haystack: string, needle: string) => `instr(lower(${haystack}), lower(${needle})) > 0`;
  const where = traceConditions(f, {
    bind,
    contains,
    model: "v_model",
    provider: "v_provider",
    // Runs in error are few: their traces come from a small partial index, looked up once.
    errorsOnly: "r.id IN (SELECT trace_id FROM runs WHERE error IS NOT NULL)",
    textSearch: (q) =>
      `EXISTS (SELECT 1 FROM runs c WHERE ${inTraceOfRow("r", "c")} AND (${contains("c.inputs", q)} OR ${contains("c.outputs", q)} OR ${contains("c.error", q)}` +
      // Inputs or outputs stored in pieces (pieces.ts): each piece with the start of the next, so a match across two is found.
      ` OR (c.pieces IS NOT NULL AND EXISTS (SELECT 1 FROM run_pieces p WHERE p.run_id = c.id AND p.col IN ('inputs', 'outputs') AND ${contains(`p.text || coalesce((SELECT substr(n.text, 1, length(${q}) - 1) FROM run_pieces n WHERE n.run_id = p.run_id AND n.col = p.col AND n.seq = p.seq + 1), '')`, q)}))))`,
    metadata: metadataConditions,
    traceCost,
    inRootTrace: inTraceOfRow("r", "c"),
  });
  const { sort, key, orderBy, after } = traceOrder(f, { bind, traceCost, latency: "r.v_latency_ms", nullsLast: false });
  if (after) where.push(after);
  const limit = pageLimit(f.limit, 50, MAX_TRACE_PAGE);
  const sql = `SELECT r.id, r.name, r.run_type, r.session_name, r.start_time, r.end_time, r.error, ${key} AS k
    FROM runs r WHERE ${where.join(" AND ")} ORDER BY ${orderBy} LIMIT @limit`;
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
      fb.all({ trace: r.id }) as FeedbackSummary[],
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
      FROM runs WHERE ${inTrace("@trace")} ORDER BY dotted_order, id`,
    )
    .all({ trace: traceId }) as (Omit<TraceRunRow, "estimated"> & { estimated: number | null })[];
  return rows.map((r) => traceRunView({ ...r, estimated: r.estimated === 1 }));
}
