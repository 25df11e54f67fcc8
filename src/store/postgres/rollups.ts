/**
 * The PostgreSQL store's monitoring rollups (store/rollup.ts): what a run adds
 * to them, read from its stored row (latency_ms, usage, total_cost, model and
 * provider, as the monitoring queries read the runs), and the writes that
 * apply a transaction's deltas.
 *
 * Exact under concurrency: a run's contribution is read before and after its
 * write while the merge holds its key lock (merge.ts), so two writers of one
 * run see each other's result. Ingest queues its deltas as rows of their own
 * (rollup-queue.ts), which take no lock a concurrent writer waits for; they
 * are folded into the rollups, and retention's are applied there, as
 * increments (INSERT ... ON CONFLICT DO UPDATE, the histograms added by
 * tracepipe_hist_add), which commute, in key order, so two transactions never
 * wait on each other's rollup rows in a circle.
 */
import type pg from "pg";
import { histBucketSql, RollupDeltas, type Cell, type ContributionRow } from "../rollup.js";

const TTFT = "(extract(epoch FROM first_token_time::timestamptz - start_time::timestamptz) * 1000)::float8";
const usageNumber = (key: string) => `CASE WHEN jsonb_typeof(usage->'${key}') = 'number' THEN (usage->>'${key}')::float8 END`;

/** The contribution columns of a run row, with `hour` as given (the hour start, or the run's own time for raw reads). */
function contributionColumns(hour: string): string {
  return `session_name AS project, ${hour} AS hour, parent_run_id IS NULL AS root, run_type = 'llm' AS llm, name, model, provider,
    (error IS NOT NULL)::int AS errors, ${histBucketSql("latency_ms")} AS lat_b, ${histBucketSql(TTFT)} AS ttft_b,
    ${usageNumber("input_tokens")} AS input_tokens, ${usageNumber("output_tokens")} AS output_tokens,
    total_cost AS cost, (total_cost IS NOT NULL)::int AS cost_runs`;
}

/** The start of the run's hour, epoch ms (stored start times are canonical: `YYYY-MM-DDTHH` first). */
const HOUR = "(extract(epoch FROM (substr(start_time, 1, 13) || ':00:00Z')::timestamptz) * 1000)::bigint";
/** A run row's contribution columns (for RETURNING); only runs that pass COUNTS contribute. */
export const CONTRIBUTION = contributionColumns(`CASE WHEN (parent_run_id IS NULL OR run_type = 'llm') THEN ${HOUR} END`);

/** Runs that count in some chart. */
const COUNTS = "(parent_run_id IS NULL OR run_type = 'llm') AND start_time IS NOT NULL";

/** The contributions of these runs, one row each (with its id). */
export async function contributionsOf(client: pg.ClientBase, ids: readonly string[]): Promise<Map<string, ContributionRow>> {
  const rows = (await client.query(`SELECT id, ${contributionColumns(HOUR)} FROM runs WHERE id = ANY($1::text[]) AND ${COUNTS}`, [ids]))
    .rows as (ContributionRow & { id: string })[];
  return new Map(rows.map((r) => [r.id, r]));
}

/** Contributions of the runs of `table` that `where` picks (with `args`), grouped (n = how many runs each row stands for). */
export async function groupedContributions(
  client: pg.ClientBase,
  table: string,
  where: string,
  args: unknown[],
): Promise<ContributionRow[]> {
  return (
    await client.query(
      `SELECT project, hour, root, llm, name, model, provider, lat_b, ttft_b, sum(errors) AS errors, sum(input_tokens) AS input_tokens,
        sum(output_tokens) AS output_tokens, sum(cost) AS cost, sum(cost_runs) AS cost_runs, count(*) AS n
       FROM (SELECT ${contributionColumns(HOUR)} FROM ${table} WHERE ${COUNTS} AND (${where})) c
       GROUP BY project, hour, root, llm, name, model, provider, lat_b, ttft_b`,
      args,
    )
  ).rows as ContributionRow[];
}

/** The contributions of one project's runs that started in [gte, lt) (canonical times), each at its own start time. */
export async function rawContributions(
  client: { query(sql: string, params?: unknown[]): Promise<{ rows: unknown[] }> },
  project: string,
  gte: string,
  lt: string,
): Promise<ContributionRow[]> {
  const cols = contributionColumns("extract(epoch FROM start_time::timestamptz) * 1000");
  return (
    await client.query(
      `SELECT ${cols} FROM runs WHERE parent_run_id IS NULL AND session_name = $1::text AND start_time >= $2::text AND start_time < $3::text
       UNION ALL SELECT ${cols} FROM runs WHERE run_type = 'llm' AND parent_run_id IS NOT NULL AND session_name = $1::text AND start_time >= $2::text AND start_time < $3::text`,
      [project, gte, lt],
    )
  ).rows as ContributionRow[];
}

const ADDITIVE = ["runs", "errors", "streamed", "input_tokens", "output_tokens", "cost", "cost_runs"] as const;

/** A rollup row's columns, in the order of cellArrays' arrays. */
export const ROLLUP_COLUMNS = `project, hour, scope, model, provider, name, ${ADDITIVE.join(", ")}, latency_hist, ttft_hist`;
/** The rows of cellArrays' arrays ($1..$15), with `ord`, their order. */
export const CELL_ROWS = `unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::bigint[], $9::bigint[],
       $10::float8[], $11::float8[], $12::float8[], $13::bigint[], $14::jsonb[], $15::jsonb[]) WITH ORDINALITY
       AS v(${ROLLUP_COLUMNS}, ord)`;

/** Cells as one array per rollup column (parameters of CELL_ROWS). */
export function cellArrays(cells: readonly Cell[]): unknown[] {
  const col = <T>(f: (c: Cell) => T) => cells.map(f);
  return [
    col((c) => c.project),
    col((c) => c.time_ms),
    col((c) => c.scope),
    col((c) => c.model),
    col((c) => c.provider),
    col((c) => c.name),
    ...ADDITIVE.map((a) => col((c) => c[a])),
    col((c) => JSON.stringify(c.latency)),
    col((c) => JSON.stringify(c.ttft)),
  ];
}

/** An upsert's SET list that adds the excluded row to the rollup row `r`. */
export const ROLLUP_INCREMENTS = `${ADDITIVE.map((c) => `${c} = r.${c} + excluded.${c}`).join(", ")},
       latency_hist = tracepipe_hist_add(r.latency_hist, excluded.latency_hist),
       ttft_hist = tracepipe_hist_add(r.ttft_hist, excluded.ttft_hist)`;

/** Apply a transaction's rollup deltas as increments, in key order (inside the transaction). */
export async function applyRollups(client: pg.ClientBase, deltas: RollupDeltas): Promise<void> {
  const cells = deltas.changes();
  if (cells.length === 0) return;
  await client.query(
    `INSERT INTO monitor_rollups AS r (${ROLLUP_COLUMNS})
     SELECT ${ROLLUP_COLUMNS} FROM ${CELL_ROWS}
     ORDER BY ord
     ON CONFLICT (project, hour, scope, model, provider, name) DO UPDATE SET
       ${ROLLUP_INCREMENTS}`,
    cellArrays(cells),
  );
}

/** Rebuild every rollup from the runs (migration 4's backfill; also a repair). */
export async function rebuildRollups(client: pg.ClientBase): Promise<void> {
  await client.query("DELETE FROM monitor_rollups");
  // Deltas still queued are in what the runs give now (the queue exists from migration 6 on).
  if ((await client.query("SELECT to_regclass('monitor_rollup_queue') IS NOT NULL AS queued")).rows[0]?.queued)
    await client.query("DELETE FROM monitor_rollup_queue");
  const d = new RollupDeltas();
  for (const r of await groupedContributions(client, "runs", "true", [])) d.add(r, 1);
  await applyRollups(client, d);
}
