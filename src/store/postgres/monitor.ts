/**
 * MonitorStore over PostgreSQL: the monitoring page's numbers as aggregate
 * queries, answering as the SQLite store does (store/sqlite/monitor.ts). Root
 * runs of a project's range are read by runs_roots_project_start, llm runs by
 * migration 3's runs_llm_project_start. Latency is the stored `latency_ms`,
 * tokens come from `usage`, cost from `total_cost`, model and provider from
 * their columns (all kept at merge, store/postgres/merge.ts).
 *
 * Percentiles are nearest-rank (the value at rank ceil(p * n) of the bucket's
 * known values): what `percentile_disc` computes, nulls left out, so both
 * stores give the same value from the same runs.
 */
import type { Breakdown, BreakdownRow, MonitorQuery, MonitorSeries } from "../contract/monitor.js";
import { canonicalTime } from "../time.js";
import type { PgPool } from "./pool.js";

const LAT = "latency_ms";
const TTFT = "(extract(epoch FROM first_token_time::timestamptz - start_time::timestamptz) * 1000)::float8";
const ERR = "error IS NOT NULL";
const usageNumber = (key: string) => `CASE WHEN jsonb_typeof(usage->'${key}') = 'number' THEN (usage->>'${key}')::float8 END`;
const IN_TOK = usageNumber("input_tokens");
const OUT_TOK = usageNumber("output_tokens");
const COST = "total_cost";
/** The run's bucket: whole steps from the range start ($4, ms) at $5 ms each. */
const BUCKET = "floor((extract(epoch FROM start_time::timestamptz) * 1000 - $4::numeric) / $5::numeric)::int";

/** Root runs (traces) or llm runs of one project in the range ($1 project, $2 / $3 the range as stored times). */
const SCOPE = {
  roots: "parent_run_id IS NULL AND session_name = $1::text AND start_time >= $2::text AND start_time < $3::text",
  llm: "run_type = 'llm' AND session_name = $1::text AND start_time >= $2::text AND start_time < $3::text",
} as const;
type Scope = keyof typeof SCOPE;

function args(q: MonitorQuery): unknown[] {
  return [
    q.project,
    canonicalTime(new Date(q.from_ms).toISOString()),
    canonicalTime(new Date(q.to_ms).toISOString()),
    q.from_ms,
    q.step_ms,
  ];
}

function bucketCount(q: MonitorQuery): number {
  return Math.max(1, Math.ceil((q.to_ms - q.from_ms) / q.step_ms));
}

type Row = Record<string, number | string | null>;

/** Runs `sql` with the arguments it names (the bucket's two only when it reads the bucket). */
async function rows(pool: PgPool, sql: string, a: unknown[]): Promise<Row[]> {
  return (await pool.query<Row>(sql, sql.includes("$4") ? a : a.slice(0, 3))).rows;
}

/** Nearest-rank percentiles of `value` per group `g0` (an SQL expression), over the scope's runs where the value is known. */
async function percentiles(pool: PgPool, scope: Scope, value: string, ps: readonly number[], group: string, a: unknown[]): Promise<Row[]> {
  const picks = ps.map((p) => `percentile_disc(${p}::float8) WITHIN GROUP (ORDER BY v) AS p${Math.round(p * 100)}`).join(", ");
  const sql = `SELECT g0, ${picks} FROM (SELECT ${group} AS g0, ${value} AS v FROM runs WHERE ${SCOPE[scope]} AND ${value} IS NOT NULL) x GROUP BY g0`;
  return rows(pool, sql, a);
}

function fill(n: number, rows: Row[], col: string, none: number | null = null): (number | null)[] {
  const out = new Array<number | null>(n).fill(none);
  for (const r of rows) {
    const k = Number(r.g0);
    if (k >= 0 && k < n) out[k] = r[col] === null || r[col] === undefined ? null : Number(r[col]);
  }
  return out;
}

/** Every chart's series for one project, range and bucket size. */
export async function monitorSeries(pool: PgPool, q: MonitorQuery): Promise<MonitorSeries> {
  const a = args(q);
  const n = bucketCount(q);
  const roots = await rows(
    pool,
    `SELECT ${BUCKET} AS g0, count(*)::int AS runs, count(*) FILTER (WHERE ${ERR})::int AS errors FROM runs WHERE ${SCOPE.roots} GROUP BY g0`,
    a,
  );
  const rootLat = await percentiles(pool, "roots", LAT, [0.5, 0.95, 0.99], BUCKET, a);
  const llm = await rows(
    pool,
    `SELECT ${BUCKET} AS g0, count(*)::int AS runs, count(*) FILTER (WHERE ${ERR})::int AS errors, count(${TTFT})::int AS streamed,
        sum(${IN_TOK}) AS input_tokens, sum(${OUT_TOK}) AS output_tokens, sum(${COST}) AS cost
      FROM runs WHERE ${SCOPE.llm} GROUP BY g0`,
    a,
  );
  const llmLat = await percentiles(pool, "llm", LAT, [0.5, 0.95, 0.99], BUCKET, a);
  const ttft = await percentiles(pool, "llm", TTFT, [0.5, 0.95], BUCKET, a);
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
export async function monitorBreakdown(pool: PgPool, q: MonitorQuery, by: Breakdown): Promise<BreakdownRow[]> {
  const a = args(q);
  const n = bucketCount(q);
  const scope: Scope = by === "name" ? "roots" : "llm";
  const g = by === "model" ? "model" : by === "provider" ? "provider" : "name";
  const usage = scope === "llm" ? `, sum(${IN_TOK}) AS input_tokens, sum(${OUT_TOK}) AS output_tokens, sum(${COST}) AS cost` : "";
  const from = `FROM runs WHERE ${SCOPE[scope]} AND ${g} IS NOT NULL`;
  const totals = await rows(
    pool,
    `SELECT ${g} AS g0, count(*)::int AS runs, count(*) FILTER (WHERE ${ERR})::int AS errors${usage} ${from} GROUP BY g0 ORDER BY runs DESC, g0 LIMIT ${MAX_GROUPS}`,
    a,
  );
  const lat = new Map((await percentiles(pool, scope, LAT, [0.5, 0.95], g, a)).map((r) => [r.g0, r]));
  const spark = new Map<unknown, number[]>();
  for (const r of await rows(pool, `SELECT ${g} AS g0, ${BUCKET} AS k, count(*)::int AS runs ${from} GROUP BY g0, k`, a)) {
    let s = spark.get(r.g0);
    if (!s) spark.set(r.g0, (s = new Array<number>(n).fill(0)));
    const k = Number(r.k);
    if (k >= 0 && k < n) s[k] = Number(r.runs);
  }
  const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return totals.map((t) => ({
    value: String(t.g0),
    runs: Number(t.runs),
    errors: Number(t.errors),
    latency_p50: num(lat.get(t.g0)?.p50),
    latency_p95: num(lat.get(t.g0)?.p95),
    input_tokens: scope === "llm" ? (num(t.input_tokens) ?? 0) : null,
    output_tokens: scope === "llm" ? (num(t.output_tokens) ?? 0) : null,
    cost: scope === "llm" ? num(t.cost) : null,
    spark: spark.get(t.g0) ?? new Array<number>(n).fill(0),
  }));
}
