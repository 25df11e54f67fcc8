/**
 * MonitorStore over SQLite: the monitoring page's numbers as aggregate queries.
 * Every value is written exactly as in migration 7's indexes (runs_roots_monitor
 * for root runs, runs_llm_monitor for llm runs), so a range of one project is
 * read from the index alone: no row, no JSON. Percentiles are nearest-rank
 * (the value at rank ceil(p * n) in the bucket's sorted values), by window
 * functions, since SQLite has no percentile aggregate.
 */
import type { SqliteHandle } from "./handle.js";
import { canonicalTime } from "../time.js";
import type { Breakdown, BreakdownRow, MonitorQuery, MonitorSeries } from "../contract/monitor.js";

const LAT = "(julianday(end_time) - julianday(start_time)) * 86400000.0";
const TTFT = "(julianday(first_token_time) - julianday(start_time)) * 86400000.0";
const ERR = "error IS NOT NULL";
const MODEL = "json_extract(extra, '$.metadata.trace_model_name')";
const PROVIDER = "json_extract(extra, '$.metadata.trace_provider')";
const IN_TOK = "json_extract(v_usage, '$.input_tokens')";
const OUT_TOK = "json_extract(v_usage, '$.output_tokens')";
const COST = "json_extract(v_usage, '$.total_cost')";
const BUCKET = "CAST((unixepoch(start_time, 'subsec') * 1000.0 - @from) / @step AS INTEGER)";

/** Root runs (traces) or llm runs of one project in the range: the WHERE each index answers. */
const SCOPE = {
  roots: "parent_run_id IS NULL AND session_name = @project AND start_time >= @gte AND start_time < @lt",
  llm: "run_type = 'llm' AND session_name = @project AND start_time >= @gte AND start_time < @lt",
} as const;
type Scope = keyof typeof SCOPE;

function args(q: MonitorQuery): Record<string, unknown> {
  return {
    project: q.project,
    from: q.from_ms,
    step: q.step_ms,
    gte: canonicalTime(new Date(q.from_ms).toISOString()),
    lt: canonicalTime(new Date(q.to_ms).toISOString()),
  };
}

export function bucketCount(q: MonitorQuery): number {
  return Math.max(1, Math.ceil((q.to_ms - q.from_ms) / q.step_ms));
}

type Row = Record<string, number | string | null>;

/**
 * Nearest-rank percentiles of `value` per group (`group` columns, as SQL
 * expressions named g0, g1, ...), over the scope's runs where the value is known.
 */
function percentiles(db: SqliteHandle, scope: Scope, value: string, ps: readonly number[], group: readonly string[], a: Record<string, unknown>): Row[] {
  const g = group.map((e, i) => `${e} AS g${i}`).join(", ");
  const gs = group.map((_, i) => `g${i}`).join(", ");
  const picks = ps.map((p) => `max(CASE WHEN rn = max(1, CAST(ceil(${p} * n) AS INTEGER)) THEN v END) AS p${Math.round(p * 100)}`).join(", ");
  const sql = `SELECT ${gs}, ${picks} FROM (
      SELECT ${gs}, v, row_number() OVER (PARTITION BY ${gs} ORDER BY v) AS rn, count(*) OVER (PARTITION BY ${gs}) AS n
      FROM (SELECT ${g}, ${value} AS v FROM runs WHERE ${SCOPE[scope]} AND ${value} IS NOT NULL))
    GROUP BY ${gs}`;
  return db.prepare(sql).all(a) as Row[];
}

function fill(n: number, rows: Row[], col: string, none: number | null = null): (number | null)[] {
  const out = new Array<number | null>(n).fill(none);
  for (const r of rows) {
    const k = Number(r.g0);
    if (k >= 0 && k < n) out[k] = r[col] as number | null;
  }
  return out;
}

/** Every chart's series for one project, range and bucket size. */
export function monitorSeries(db: SqliteHandle, q: MonitorQuery): MonitorSeries {
  const a = args(q);
  const n = bucketCount(q);
  const roots = db.prepare(`SELECT ${BUCKET} AS g0, count(*) AS runs, sum(${ERR}) AS errors FROM runs WHERE ${SCOPE.roots} GROUP BY g0`).all(a) as Row[];
  const rootLat = percentiles(db, "roots", LAT, [0.5, 0.95, 0.99], [BUCKET], a);
  const llm = db
    .prepare(
      `SELECT ${BUCKET} AS g0, count(*) AS runs, sum(${ERR}) AS errors, count(${TTFT}) AS streamed,
        sum(${IN_TOK}) AS input_tokens, sum(${OUT_TOK}) AS output_tokens, sum(${COST}) AS cost
      FROM runs WHERE ${SCOPE.llm} GROUP BY g0`,
    )
    .all(a) as Row[];
  const llmLat = percentiles(db, "llm", LAT, [0.5, 0.95, 0.99], [BUCKET], a);
  const ttft = percentiles(db, "llm", TTFT, [0.5, 0.95], [BUCKET], a);
  return {
    project: q.project,
    from_ms: q.from_ms,
    to_ms: q.to_ms,
    step_ms: q.step_ms,
    buckets: Array.from({ length: n }, (_, i) => q.from_ms + i * q.step_ms),
    traces: {
      runs: fill(n, roots, "runs", 0) as number[],
      errors: fill(n, roots, "errors", 0) as number[],
      latency_p50: fill(n, rootLat, "p50"),
      latency_p95: fill(n, rootLat, "p95"),
      latency_p99: fill(n, rootLat, "p99"),
    },
    llm: {
      runs: fill(n, llm, "runs", 0) as number[],
      errors: fill(n, llm, "errors", 0) as number[],
      streamed: fill(n, llm, "streamed", 0) as number[],
      latency_p50: fill(n, llmLat, "p50"),
      latency_p95: fill(n, llmLat, "p95"),
      latency_p99: fill(n, llmLat, "p99"),
      ttft_p50: fill(n, ttft, "p50"),
      ttft_p95: fill(n, ttft, "p95"),
      input_tokens: fill(n, llm, "input_tokens", 0) as number[],
      output_tokens: fill(n, llm, "output_tokens", 0) as number[],
      cost: fill(n, llm, "cost"),
    },
  };
}

/** Most groups a breakdown lists (by runs); the rest are summed into no row. */
const MAX_GROUPS = 50;

/**
 * One table of the page: per model or provider (llm runs) or per root run
 * name (traces), totals over the range and runs per bucket for a sparkline.
 * Tokens and cost are the llm runs' own; a root name's row has none.
 */
export function monitorBreakdown(db: SqliteHandle, q: MonitorQuery, by: Breakdown): BreakdownRow[] {
  const a = args(q);
  const n = bucketCount(q);
  const scope: Scope = by === "name" ? "roots" : "llm";
  const g = by === "model" ? MODEL : by === "provider" ? PROVIDER : "name";
  const usage = scope === "llm" ? `, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens, sum(cost) AS cost` : "";
  const usageCols = scope === "llm" ? `, ${IN_TOK} AS input_tokens, ${OUT_TOK} AS output_tokens, ${COST} AS cost` : "";
  // Materialized: SQLite reads the row for a grouped indexed expression, but not for a plain one.
  const rows = `WITH x AS MATERIALIZED (SELECT ${g} AS g0, ${BUCKET} AS k, ${ERR} AS err${usageCols} FROM runs WHERE ${SCOPE[scope]} AND ${g} IS NOT NULL)`;
  const totals = db.prepare(`${rows} SELECT g0, count(*) AS runs, sum(err) AS errors${usage} FROM x GROUP BY g0 ORDER BY runs DESC, g0 LIMIT ${MAX_GROUPS}`).all(a) as Row[];
  const lat = new Map(percentiles(db, scope, LAT, [0.5, 0.95], [g], a).map((r) => [r.g0, r]));
  const spark = new Map<unknown, number[]>();
  for (const r of db.prepare(`${rows} SELECT g0, k, count(*) AS runs FROM x GROUP BY g0, k`).all(a) as Row[]) {
    let s = spark.get(r.g0);
    if (!s) spark.set(r.g0, (s = new Array<number>(n).fill(0)));
    const k = Number(r.k);
    if (k >= 0 && k < n) s[k] = Number(r.runs);
  }
  return totals.map((t) => ({
    value: String(t.g0),
    runs: Number(t.runs),
    errors: Number(t.errors),
    latency_p50: (lat.get(t.g0)?.p50 as number | null) ?? null,
    latency_p95: (lat.get(t.g0)?.p95 as number | null) ?? null,
    input_tokens: scope === "llm" ? ((t.input_tokens as number | null) ?? 0) : null,
    output_tokens: scope === "llm" ? ((t.output_tokens as number | null) ?? 0) : null,
    cost: scope === "llm" ? (t.cost as number | null) : null,
    spark: spark.get(t.g0) ?? new Array<number>(n).fill(0),
  }));
}
