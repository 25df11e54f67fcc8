/**
 * The viewer's trace queries over PostgreSQL (the TraceStore half of
 * PostgresStore): the same filters, sorts and page semantics as the SQLite
 * store's (store/traces.ts), written for PostgreSQL's planner.
 *
 * The newest-first list walks the partial indexes on root runs in every
 * partition at once (a merge of index scans) and stops after one page; the
 * page's totals come from one grouped query over the trace index. Model,
 * provider, errors and cost have indexes of their own; text search reads the
 * trace's payloads (a scan by nature), and so do the metadata and tag filters
 * (each a run's JSON). NULL start times sort first ascending
 * and last descending, as in SQLite.
 */
import type { TraceFilter, TracePage, TraceRun } from "../contract/traces.js";
import { MAX_TRACE_PAGE, encodeTraceCursor, pageLimit, splitPage } from "../paging.js";
import { traceConditions, traceOrder } from "../trace-filter.js";
import { traceRunView, traceSummaryView, type TraceRunRow, type TraceTotals } from "../trace-views.js";
import { feedbackOfTraces } from "./feedback.js";
import { metadataConditions } from "./metadata.js";
import { inTrace, inTraces } from "./trace-members.js";
import type { PgPool } from "./pool.js";

/** A number inside the usage document, when it is one. */
const usageNumber = (key: string, alias = "") =>
  `CASE WHEN jsonb_typeof(${alias}usage->'${key}') = 'number' THEN (${alias}usage->>'${key}')::float8 END`;

const ESTIMATED = "coalesce(usage->'estimated' = 'true'::jsonb, false)";

export async function listTraces(pool: PgPool, f: TraceFilter): Promise<TracePage> {
  const args: unknown[] = [];
  const arg = (v: unknown, type = "text") => {
    args.push(v);
    return `$${args.length}::${type}`;
  };
  const traceCost = "(SELECT sum(c.total_cost) FROM runs c WHERE c.trace_id = r.id AND c.total_cost IS NOT NULL)";
  const contains = (haystack: string, needle: string) => `strpos(lower(${haystack}), lower(${needle})) > 0`;
  const where = traceConditions(f, {
    bind: arg,
    contains,
    model: "model",
    provider: "provider",
    errorsOnly: "EXISTS (SELECT 1 FROM runs e WHERE e.trace_id = r.id AND e.error IS NOT NULL)",
    textSearch: (q) =>
      `EXISTS (SELECT 1 FROM runs c WHERE ${inTrace("r.id", "c.")} AND (${contains("c.inputs", q)} OR ${contains("c.outputs", q)} OR ${contains("c.error", q)}))`,
    metadata: metadataConditions,
    traceCost,
    inRootTrace: inTrace("r.id", "c."),
  });
  const { sort, key, orderBy, after } = traceOrder(f, { bind: arg, traceCost, latency: "r.latency_ms", nullsLast: true });
  if (after) where.push(after);
  const limit = pageLimit(f.limit, 50, MAX_TRACE_PAGE);
  const sql = `SELECT r.id, r.name, r.run_type, r.session_name, r.start_time, r.end_time, r.error, r.exact, ${key} AS k
    FROM runs r WHERE ${where.join(" AND ")} ORDER BY ${orderBy} LIMIT ${arg(limit + 1, "int")}`;
  const rows = (await pool.query(sql, args)).rows;
  const { page, more, last } = splitPage(rows, limit);
  const ids = page.map((r) => r.id as string);
  const [aggs, feedback] = await Promise.all([aggregates(pool, ids), feedbackOfTraces(pool, ids)]);
  const traces = page.map((r) => {
    const exact = r.exact ? (JSON.parse(r.exact) as Record<string, string>) : {};
    const root = {
      id: r.id,
      name: exact.name ?? r.name,
      run_type: exact.run_type ?? r.run_type,
      session_name: exact.session_name ?? r.session_name,
      start_time: r.start_time,
      end_time: r.end_time,
      error: exact.error ?? r.error,
    };
    return traceSummaryView(root, aggs.get(r.id) ?? EMPTY, feedback.get(r.id) ?? []);
  });
  return { traces, cursor: more && last ? encodeTraceCursor(sort, last.k, last.id) : null };
}

interface AggRow extends Omit<TraceTotals, "models" | "providers"> {
  trace_id: string;
  models: string[] | null;
  providers: string[] | null;
}

const EMPTY: TraceTotals = {
  run_count: 0,
  error_count: 0,
  first_error: null,
  models: [],
  providers: [],
  input_tokens: null,
  output_tokens: null,
  total_tokens: null,
  total_cost: null,
  estimated: false,
  first_token_time: null,
};

/** Per-trace totals for a page of traces, in one grouped query. */
async function aggregates(pool: PgPool, ids: string[]): Promise<Map<string, TraceTotals>> {
  if (ids.length === 0) return new Map();
  const rows = (
    await pool.query<AggRow>(
      `SELECT trace_id, count(*)::int AS run_count, count(error)::int AS error_count,
        (array_agg(error ORDER BY dotted_order) FILTER (WHERE error IS NOT NULL))[1] AS first_error,
        array_agg(DISTINCT model) FILTER (WHERE model IS NOT NULL) AS models,
        array_agg(DISTINCT provider) FILTER (WHERE provider IS NOT NULL) AS providers,
        sum(${usageNumber("input_tokens")}) AS input_tokens,
        sum(${usageNumber("output_tokens")}) AS output_tokens,
        sum(${usageNumber("total_tokens")}) AS total_tokens,
        sum(total_cost) AS total_cost,
        coalesce(bool_or(${ESTIMATED}), false) AS estimated,
        min(CASE WHEN run_type = 'llm' THEN first_token_time END) AS first_token_time
      FROM runs WHERE ${inTraces("$1::text[]")} GROUP BY trace_id`,
      [ids],
    )
  ).rows;
  return new Map(rows.map((r) => [r.trace_id, { ...r, models: r.models ?? [], providers: r.providers ?? [] }]));
}

/** Every run of one trace in tree order (dotted_order), without payloads. Empty when the trace is unknown. */
export async function traceRuns(pool: PgPool, traceId: string): Promise<TraceRun[]> {
  const rows = (
    await pool.query<TraceRunRow & { exact: string | null }>(
      `SELECT id, parent_run_id, dotted_order, name, run_type, start_time, end_time, first_token_time, error, model, provider, exact,
        ${usageNumber("input_tokens")} AS input_tokens, ${usageNumber("output_tokens")} AS output_tokens,
        ${usageNumber("total_tokens")} AS total_tokens, total_cost, ${ESTIMATED} AS estimated
      FROM runs WHERE ${inTrace("$1")} ORDER BY dotted_order NULLS FIRST, id`,
      [traceId],
    )
  ).rows;
  return rows.map((r) => {
    const exact = r.exact ? (JSON.parse(r.exact) as Record<string, string>) : {};
    return traceRunView({
      ...r,
      dotted_order: exact.dotted_order ?? r.dotted_order,
      name: exact.name ?? r.name,
      run_type: exact.run_type ?? r.run_type,
      error: exact.error ?? r.error,
    });
  });
}
