/**
 * A new run's part in the monitoring rollups, worked out in the collector
 * from the row it is about to insert, so the new-runs statement queues the
 * batch's cells as parameters instead of the database deriving them from its
 * RETURNING and grouping them (rollups.ts's CONTRIBUTION, new-runs.ts).
 *
 * What the rollups later take away (a merge, retention) is read in SQL from
 * the stored row, so what is added here must be exactly what SQL would read:
 * the same hour, the same histogram buckets (histBucketSql's floating-point
 * steps: PostgreSQL's log10, power and round, which rounds half to even),
 * the same token counts. Where the collector cannot be sure of that (a time
 * that is not canonical, a value next to a bucket's edge, a number that is
 * not finite), it answers undefined and the statement derives the cells in
 * SQL as before.
 */
import { isObj, type Obj } from "../../internal/obj.js";
import { daysInMonth } from "../../internal/calendar.js";
import { RollupDeltas, type Cell, type ContributionRow } from "../rollup.js";

/** The bucket of values at or below 0 (store/rollup.ts). */
const LOW = -100_000;

/** Powers of ten as literals (each the double nearest to it, as PostgreSQL's power(10, k) gives it): index k + 22. */
const POW10 = Array.from({ length: 45 }, (_, i) => Number(`1e${i - 22}`));

/** Relative distance from a decision edge (a power of ten, a rounding midpoint) under which the collector leaves the bucket to SQL. */
const EDGE = 1e-9;

/** rint: to the nearest integer, half to even (PostgreSQL's round of a double). */
function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/**
 * histBucketSql(v) as PostgreSQL computes it; null for null, undefined when
 * v is too near an edge for the collector's arithmetic to be sure it agrees.
 */
export function histBucket(v: number | null): number | null | undefined {
  if (v === null) return null;
  if (!Number.isFinite(v)) return undefined;
  if (v <= 0) return LOW;
  const lg = Math.log10(v);
  const e = Math.floor(lg);
  const exact = POW10[e + 22] === v; // an exact power of ten (1, 10, 0.001 ...): log10 is e in both
  if (!exact && Math.abs(lg - Math.round(lg)) < EDGE) return undefined;
  const p = POW10[e - 1 + 22];
  if (p === undefined) return undefined;
  const x = v / p;
  if (x < 10 || x >= 100) return undefined;
  const frac = x - Math.floor(x);
  // A quotient next to a midpoint may round either way if the two sides' divisors differ by an ulp (negative powers).
  if (e - 1 < 0 && Math.abs(frac - 0.5) < EDGE * x) return undefined;
  const m = roundHalfEven(x);
  return m >= 100 ? (e + 1) * 100 + 10 : e * 100 + m;
}

const CANONICAL = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{6})Z$/;

/** A canonical time PostgreSQL reads alike: its whole seconds (ms since the epoch), microseconds and hour start (ms); undefined for any other text. */
function timeOf(t: string): { ms: number; us: number; hour: number } | undefined {
  const m = CANONICAL.exec(t);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s, us] = m.slice(1).map(Number) as [number, number, number, number, number, number, number];
  if (y < 1000 || mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h > 23 || mi > 59 || s > 59) return undefined;
  return { ms: Date.UTC(y, mo - 1, d, h, mi, s), us, hour: Date.UTC(y, mo - 1, d, h) };
}

/** A number as float8 reads it back from the text pg sends; undefined when not a finite number. */
function finite(v: unknown): number | null | undefined {
  if (v === null || v === undefined) return null;
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

/** A usage key as `CASE WHEN jsonb_typeof(usage->'k') = 'number' THEN (usage->>'k')::float8 END` reads it. */
function usageNumber(usage: unknown, key: string): number | null | undefined {
  if (!isObj(usage)) return null;
  const v = usage[key];
  if (typeof v !== "number") return null;
  return Number.isFinite(v) ? v : undefined;
}

/**
 * The contribution row (rollups.ts's CONTRIBUTION) of a new run's row as new-runs.ts inserts it;
 * undefined when SQL should work it out.
 */
export function newRunContribution(row: Obj): ContributionRow | undefined {
  const root = row.parent_run_id === null || row.parent_run_id === undefined;
  const llm = row.run_type === "llm";
  const project = typeof row.session_name === "string" ? row.session_name : null;
  const start = typeof row.start_time === "string" ? row.start_time : null;
  if (start === null || project === null || (!root && !llm)) return { ...NONE, root, llm };
  const t0 = timeOf(start);
  if (t0 === undefined) return undefined;
  const latency = finite(row.latency_ms);
  const cost = finite(row.total_cost);
  if (latency === undefined || cost === undefined) return undefined;
  let ttft: number | null = null;
  if (typeof row.first_token_time === "string") {
    const t1 = timeOf(row.first_token_time);
    const us = t1 && (t1.ms - t0.ms) * 1000 + (t1.us - t0.us);
    // The interval in microseconds, exact as an integer here: as a double, divided once, it is what numeric's ms give as float8.
    if (us === undefined || !Number.isSafeInteger(us)) return undefined;
    ttft = us / 1000;
  } else if (row.first_token_time !== null && row.first_token_time !== undefined) return undefined;
  const lat_b = histBucket(latency);
  const ttft_b = histBucket(ttft);
  if (lat_b === undefined || ttft_b === undefined) return undefined;
  let usage: unknown = null;
  if (typeof row.usage === "string") usage = JSON.parse(row.usage);
  else if (row.usage !== null && row.usage !== undefined) return undefined;
  const input_tokens = usageNumber(usage, "input_tokens");
  const output_tokens = usageNumber(usage, "output_tokens");
  if (input_tokens === undefined || output_tokens === undefined) return undefined;
  return {
    project,
    hour: t0.hour,
    root,
    llm,
    name: row.name ?? null,
    model: row.model ?? null,
    provider: row.provider ?? null,
    errors: row.error === null || row.error === undefined ? 0 : 1,
    lat_b,
    ttft_b,
    input_tokens,
    output_tokens,
    cost,
    cost_runs: cost === null ? 0 : 1,
  };
}

/**
 * The rollup cells of new rows, summed as any transaction's deltas are
 * (RollupDeltas); undefined when some row's part is left to SQL.
 */
export function newRunCells(rows: readonly Obj[]): Cell[] | undefined {
  const deltas = new RollupDeltas();
  for (const row of rows) {
    const r = newRunContribution(row);
    if (r === undefined) return undefined;
    deltas.add(r, 1);
  }
  return deltas.changes();
}

/** A row in no chart (RollupDeltas.add skips it). */
const NONE: ContributionRow = {
  project: null,
  hour: null,
  root: false,
  llm: false,
  name: null,
  model: null,
  provider: null,
  errors: 0,
  lat_b: null,
  ttft_b: null,
  input_tokens: null,
  output_tokens: null,
  cost: null,
  cost_runs: 0,
};
