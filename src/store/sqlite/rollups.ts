/**
 * The SQLite store's monitoring rollups (store/rollup.ts): what a run adds to
 * them, read from its stored row with the expressions the monitoring queries
 * used on the runs themselves, and the writes that apply a transaction's
 * deltas. SQLite has one writer, so a rollup row is read, added to and written
 * back inside the writing transaction.
 */
import type { SqliteHandle, SqliteStatement } from "./handle.js";
import { histAdd, histBucketSql, RollupDeltas, type Cell, type ContributionRow } from "../rollup.js";

const LAT = "(julianday(end_time) - julianday(start_time)) * 86400000.0";
const TTFT = "(julianday(first_token_time) - julianday(start_time)) * 86400000.0";
const COST = "json_extract(v_usage, '$.total_cost')";

/**
 * The contribution columns of a run row, with `hour` as given (the hour start, or the run's own time for raw reads),
 * each named with `p` before its name (a statement that reads other columns too names them apart).
 */
function contributionColumns(hour: string, p = ""): string {
  return `session_name AS ${p}project, ${hour} AS ${p}hour, parent_run_id IS NULL AS ${p}root, run_type = 'llm' AS ${p}llm, name AS ${p}name,
    json_extract(extra, '$.metadata.trace_model_name') AS ${p}model, json_extract(extra, '$.metadata.trace_provider') AS ${p}provider,
    error IS NOT NULL AS ${p}errors, ${histBucketSql(LAT)} AS ${p}lat_b, ${histBucketSql(TTFT)} AS ${p}ttft_b,
    json_extract(v_usage, '$.input_tokens') AS ${p}input_tokens, json_extract(v_usage, '$.output_tokens') AS ${p}output_tokens,
    ${COST} AS ${p}cost, ${COST} IS NOT NULL AS ${p}cost_runs`;
}

/** The start of the run's hour, epoch ms (stored start times are canonical: `YYYY-MM-DDTHH` first). */
const HOUR = "unixepoch(substr(start_time, 1, 13) || ':00:00Z') * 1000";
/** Runs that count in some chart. */
const COUNTS = "(parent_run_id IS NULL OR run_type = 'llm') AND start_time IS NOT NULL";

/** Prefix of the contribution columns that ingest reads with a run's row (its load, and RETURNING after its write). */
const IN_ROW = "c_";
const FIELDS = [
  "project",
  "hour",
  "root",
  "llm",
  "name",
  "model",
  "provider",
  "errors",
  "lat_b",
  "ttft_b",
  "input_tokens",
  "output_tokens",
  "cost",
  "cost_runs",
] as const;

/**
 * The contribution as columns of a statement on one run row (a SELECT of it, or the RETURNING clause of its write):
 * the expressions that retention and a rebuild sum (groupedContributions), so what ingest subtracts before a write
 * is exactly what it added after the one before.
 */
export const CONTRIBUTION_IN_ROW = `${contributionColumns(HOUR, IN_ROW)}, (${COUNTS}) AS ${IN_ROW}counts`;

/** The run's contribution from a row read with CONTRIBUTION_IN_ROW; none when the run is in no chart. */
export function contributionInRow(row: Record<string, unknown>): ContributionRow | undefined {
  if (row[`${IN_ROW}counts`] !== 1) return undefined;
  const c: Record<string, unknown> = {};
  for (const f of FIELDS) c[f] = row[IN_ROW + f];
  return c as unknown as ContributionRow;
}

/** The names of CONTRIBUTION_IN_ROW's columns, in its order. */
export const CONTRIBUTION_IN_ROW_NAMES: readonly string[] = [...FIELDS.map((f) => IN_ROW + f), `${IN_ROW}counts`];
if (FIELDS.join() !== "project,hour,root,llm,name,model,provider,errors,lat_b,ttft_b,input_tokens,output_tokens,cost,cost_runs")
  throw new Error("contributionInRawRow reads the contribution columns in an order that is no longer theirs");

/** The latency expression the contribution columns compute from a run's row (ms). */
export const RUN_LATENCY_MS = LAT;

/** contributionInRow for a row read as an array: CONTRIBUTION_IN_ROW's columns from index `at`. */
export function contributionInRawRow(row: readonly unknown[], at: number): ContributionRow | undefined {
  if (row[at + FIELDS.length] !== 1) return undefined;
  // One literal in FIELDS' order: an object of one shape, made at once.
  return {
    project: row[at],
    hour: row[at + 1],
    root: row[at + 2],
    llm: row[at + 3],
    name: row[at + 4],
    model: row[at + 5],
    provider: row[at + 6],
    errors: row[at + 7],
    lat_b: row[at + 8],
    ttft_b: row[at + 9],
    input_tokens: row[at + 10],
    output_tokens: row[at + 11],
    cost: row[at + 12],
    cost_runs: row[at + 13],
  } as ContributionRow;
}

/** Contributions of the runs `where` picks, grouped (n = how many runs each row stands for). */
export function groupedContributions(db: SqliteHandle, where: string, ...args: unknown[]): ContributionRow[] {
  return db
    .prepare(
      `SELECT project, hour, root, llm, name, model, provider, lat_b, ttft_b, sum(errors) AS errors, sum(input_tokens) AS input_tokens,
        sum(output_tokens) AS output_tokens, sum(cost) AS cost, sum(cost_runs) AS cost_runs, count(*) AS n
       FROM (SELECT ${contributionColumns(HOUR)} FROM runs WHERE ${COUNTS} AND (${where}))
       GROUP BY project, hour, root, llm, name, model, provider, lat_b, ttft_b`,
    )
    .all(...args) as ContributionRow[];
}

/** The contributions of one project's runs that started in [gte, lt) (canonical times), each at its own start time. */
export function rawContributions(db: SqliteHandle, project: string, gte: string, lt: string): ContributionRow[] {
  const cols = contributionColumns("unixepoch(start_time, 'subsec') * 1000.0");
  return db
    .prepare(
      `SELECT ${cols} FROM runs WHERE parent_run_id IS NULL AND session_name = @p AND start_time >= @gte AND start_time < @lt
       UNION ALL SELECT ${cols} FROM runs WHERE run_type = 'llm' AND parent_run_id IS NOT NULL AND session_name = @p AND start_time >= @gte AND start_time < @lt`,
    )
    .all({ p: project, gte, lt }) as ContributionRow[];
}

/** A rollup row's key, bound by position (project, hour, scope, model, provider, name): by name, better-sqlite3 looks each one up on an object. */
const KEY = "project = ? AND hour = ? AND scope = ? AND model = ? AND provider = ? AND name = ?";

/** Writes a transaction's rollup deltas (inside it). */
export class SqliteRollupWriter {
  private readonly get: SqliteStatement;
  private readonly put: SqliteStatement;

  constructor(db: SqliteHandle) {
    this.get = db.prepare(
      `SELECT runs, errors, streamed, input_tokens, output_tokens, cost, cost_runs, latency_hist, ttft_hist FROM monitor_rollups WHERE ${KEY}`,
    );
    this.put = db.prepare(
      `INSERT OR REPLACE INTO monitor_rollups (project, hour, scope, model, provider, name, runs, errors, streamed, input_tokens, output_tokens, cost, cost_runs, latency_hist, ttft_hist)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
  }

  apply(deltas: RollupDeltas): void {
    for (const d of deltas.changes()) this.applyCell(d);
  }

  private applyCell(d: Cell): void {
    const old = this.get.get(d.project, d.time_ms, d.scope, d.model, d.provider, d.name) as Record<string, number | string> | undefined;
    const sum = (c: keyof Cell) => (old ? Number(old[c]) : 0) + (d[c] as number);
    const latency = histAdd(old ? JSON.parse(old.latency_hist as string) : {}, d.latency);
    const ttft = histAdd(old ? JSON.parse(old.ttft_hist as string) : {}, d.ttft);
    this.put.run(
      d.project,
      d.time_ms,
      d.scope,
      d.model,
      d.provider,
      d.name,
      sum("runs"),
      sum("errors"),
      sum("streamed"),
      sum("input_tokens"),
      sum("output_tokens"),
      sum("cost"),
      sum("cost_runs"),
      JSON.stringify(latency),
      JSON.stringify(ttft),
    );
  }
}

/** Rebuild every rollup from the runs (migration 11's backfill; also a repair). */
export function rebuildRollups(db: SqliteHandle): void {
  db.exec("DELETE FROM monitor_rollups");
  const d = new RollupDeltas();
  for (const r of groupedContributions(db, "1")) d.add(r, 1);
  new SqliteRollupWriter(db).apply(d);
}
