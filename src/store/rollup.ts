/**
 * Monitoring rollups, shared by both stores: per project x hour x scope (root
 * runs, llm runs) x model x provider x run name, the counts and sums the
 * monitoring page charts and two histograms (latency, time to first token)
 * from which percentiles are read. The stores keep them on ingest: each
 * write's old contribution is subtracted and its new one added, in the
 * transaction that writes the run (docs/collector-api.md, "Monitoring numbers").
 *
 * Histograms are sparse maps from bucket index to count, a bucket per value
 * of two significant digits (ms): a value v in [10^e, 10^(e+1)) goes to
 * bucket 100 e + m, where m = round(v / 10^(e-1)) (10..99; 100 carries into
 * the next decade), and the bucket reads as m * 10^(e-1). So a percentile
 * read from a histogram is the exact nearest-rank percentile rounded to two
 * significant digits: within HIST_ALPHA (relative) of it. Values at or below
 * 0 (an end before the start) share one bucket that reads as 0. The index is
 * computed in SQL (histBucketSql), by each store alike for what it adds and
 * what it subtracts.
 */
import type { Breakdown, BreakdownRow, MonitorQuery, MonitorSeries } from "./contract/monitor.js";

/** Relative error bound of a percentile read from a histogram (rounding to two significant digits: at most 0.5 / 10.5). */
export const HIST_ALPHA = 0.05;
/** The bucket of values at or below 0. */
const LOW = -100_000;
export const HOUR_MS = 3_600_000;

/** The histogram bucket of `value` (an SQL expression in ms), in SQL both stores speak (log10, power, floor, round). */
export function histBucketSql(value: string): string {
  const v = `(${value})`;
  const e = `floor(log10(${v}))`;
  const m = `round(${v} / power(10, ${e} - 1))`;
  return `CASE WHEN ${v} IS NULL THEN NULL WHEN ${v} <= 0 THEN ${LOW} ELSE CAST(CASE WHEN ${m} >= 100 THEN (${e} + 1) * 100 + 10 ELSE ${e} * 100 + ${m} END AS INTEGER) END`;
}

/** The value a bucket reads as. */
export function bucketValue(i: number): number {
  if (i <= LOW) return 0;
  const e = Math.floor(i / 100);
  const m = i - 100 * e;
  return e >= 1 ? m * Math.pow(10, e - 1) : m / Math.pow(10, 1 - e);
}

/** Bucket index -> count. */
export type Hist = Record<string, number>;

/** Add `by` to one bucket of a histogram (an empty bucket is left out). */
function histBump(h: Hist, bucket: string, by: number): void {
  const v = (h[bucket] ?? 0) + by;
  if (v === 0) delete h[bucket];
  else h[bucket] = v;
}

export function histAdd(into: Hist, from: Hist, sign = 1): Hist {
  for (const k in from) {
    const v = (into[k] ?? 0) + sign * from[k]!;
    if (v === 0) delete into[k];
    else into[k] = v;
  }
  return into;
}

/** Nearest-rank percentile (the value at rank ceil(p * n)) of a histogram; null when empty. */
export function histPercentile(h: Hist, p: number): number | null {
  const keys = Object.keys(h)
    .map(Number)
    .filter((k) => h[k]! > 0)
    .sort((a, b) => a - b);
  let n = 0;
  for (const k of keys) n += h[k]!;
  if (n === 0) return null;
  const rank = Math.max(1, Math.ceil(p * n));
  let seen = 0;
  for (const k of keys) {
    seen += h[k]!;
    if (seen >= rank) return bucketValue(k);
  }
  return bucketValue(keys[keys.length - 1]!);
}

export type Scope = "root" | "llm";

/** The dimensions of one rollup row; "" when the run has none. */
export interface CellKey {
  project: string;
  /** Hour start (rollups) or the run's start (raw runs), epoch ms. */
  time_ms: number;
  scope: Scope;
  model: string;
  provider: string;
  name: string;
}

export interface Cell extends CellKey {
  runs: number;
  errors: number;
  streamed: number;
  input_tokens: number;
  output_tokens: number;
  cost: number;
  /** Runs with a cost: the chart shows none where no run had a price. */
  cost_runs: number;
  latency: Hist;
  ttft: Hist;
}

/**
 * One run's (or, with `n`, a group of like runs') part in the rollups, as the
 * stores' contribution queries return it. `hour` is null when the run has no
 * start time (it is in no chart).
 */
export interface ContributionRow {
  project: string | null;
  hour: number | string | null;
  root: boolean | number | null;
  llm: boolean | number | null;
  name: unknown;
  model: unknown;
  provider: unknown;
  errors: number | string | null;
  lat_b: number | string | null;
  ttft_b: number | string | null;
  input_tokens: number | string | null;
  output_tokens: number | string | null;
  cost: number | string | null;
  cost_runs: number | string | null;
  /** How many runs the row stands for (1 when absent). */
  n?: number | string | null;
}

const dim = (v: unknown): string => (v === null || v === undefined ? "" : typeof v === "string" ? v : String(v));
const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v) || 0);

export function cellKey(c: CellKey): string {
  return JSON.stringify([c.project, c.time_ms, c.scope, c.model, c.provider, c.name]);
}

/** Rollup deltas of one transaction, by row key. */
export class RollupDeltas {
  readonly cells = new Map<string, Cell>();

  /** Add (sign 1) or take away (sign -1) a contribution row's cells. */
  add(r: ContributionRow, sign: 1 | -1): void {
    if (r.hour === null || r.hour === undefined || r.project === null || r.project === undefined) return;
    const root = r.root === true || r.root === 1;
    const llm = r.llm === true || r.llm === 1;
    if (!root && !llm) return;
    const n = r.n === undefined || r.n === null ? 1 : Number(r.n);
    const time_ms = Number(r.hour);
    const model = dim(r.model);
    const provider = dim(r.provider);
    const name = dim(r.name);
    if (root) this.addTo(this.cell(r.project, time_ms, "root", model, provider, name), r, sign, n);
    if (llm) this.addTo(this.cell(r.project, time_ms, "llm", model, provider, name), r, sign, n);
  }

  /** The cell found last: a batch's runs mostly fall in one cell, whose key then need not be built again for each. */
  private last: Cell | undefined;

  /** The cell of this row key, made empty if it is not there yet. */
  private cell(project: string, time_ms: number, scope: Scope, model: string, provider: string, name: string): Cell {
    const l = this.last;
    if (
      l !== undefined &&
      l.project === project &&
      l.time_ms === time_ms &&
      l.scope === scope &&
      l.model === model &&
      l.provider === provider &&
      l.name === name
    )
      return l;
    const k = cellKey({ project, time_ms, scope, model, provider, name });
    let c = this.cells.get(k);
    if (!c) {
      const empty = { runs: 0, errors: 0, streamed: 0, input_tokens: 0, output_tokens: 0, cost: 0, cost_runs: 0 };
      c = { project, time_ms, scope, model, provider, name, ...empty, latency: {}, ttft: {} };
      this.cells.set(k, c);
    }
    this.last = c;
    return c;
  }

  /** A contribution row's counts and sums into `c` (sign 1) or out of it (-1); it stands for `n` runs. */
  private addTo(c: Cell, r: ContributionRow, sign: 1 | -1, n: number): void {
    const runs = sign * n;
    c.runs += runs;
    c.errors += sign * num(r.errors);
    c.input_tokens += sign * num(r.input_tokens);
    c.output_tokens += sign * num(r.output_tokens);
    c.cost += sign * num(r.cost);
    c.cost_runs += sign * num(r.cost_runs);
    if (r.lat_b !== null && r.lat_b !== undefined) histBump(c.latency, String(Number(r.lat_b)), runs);
    if (r.ttft_b !== null && r.ttft_b !== undefined) {
      c.streamed += runs;
      histBump(c.ttft, String(Number(r.ttft_b)), runs);
    }
  }

  /** Add a cell's counts, sums and histograms (a stored or queued rollup row) to its row key's. */
  addCell(c: Cell): void {
    const k = cellKey(c);
    const into = this.cells.get(k);
    if (!into) {
      this.cells.set(k, { ...c, latency: { ...c.latency }, ttft: { ...c.ttft } });
      return;
    }
    into.runs += c.runs;
    into.errors += c.errors;
    into.streamed += c.streamed;
    into.input_tokens += c.input_tokens;
    into.output_tokens += c.output_tokens;
    into.cost += c.cost;
    into.cost_runs += c.cost_runs;
    histAdd(into.latency, c.latency);
    histAdd(into.ttft, c.ttft);
  }

  /** The cells that change something, in key order (so concurrent writers take row locks in one order). */
  changes(): Cell[] {
    return [...this.cells.entries()]
      .filter(
        ([, c]) =>
          c.runs ||
          c.errors ||
          c.streamed ||
          c.input_tokens ||
          c.output_tokens ||
          c.cost ||
          c.cost_runs ||
          Object.keys(c.latency).length ||
          Object.keys(c.ttft).length,
      )
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, c]) => c);
  }
}

export function bucketCount(q: MonitorQuery): number {
  return Math.max(1, Math.ceil((q.to_ms - q.from_ms) / q.step_ms));
}

/**
 * How a query is answered: whole hours in [from_ms, rollupTo) from the
 * rollups when every bucket is whole hours starting on the hour; the rest of
 * the range ([rawFrom, to_ms)) from the runs themselves.
 */
export function plan(q: MonitorQuery): { rollupTo: number; rawFrom: number } {
  const aligned = q.step_ms % HOUR_MS === 0 && q.from_ms % HOUR_MS === 0;
  if (!aligned) return { rollupTo: q.from_ms, rawFrom: q.from_ms };
  const end = Math.max(q.from_ms, Math.floor(q.to_ms / HOUR_MS) * HOUR_MS);
  return { rollupTo: end, rawFrom: end };
}

function bucketOf(q: MonitorQuery, n: number, t: number): number {
  const k = Math.floor((t - q.from_ms) / q.step_ms);
  return k >= 0 && k < n ? k : -1;
}

/** Every chart's series from rollup and raw cells of the range. */
export function seriesOf(q: MonitorQuery, cells: Iterable<Cell>): MonitorSeries {
  const n = bucketCount(q);
  const zeros = () => new Array<number>(n).fill(0);
  const hists = () => Array.from({ length: n }, (): Hist => ({}));
  const t = { runs: zeros(), errors: zeros(), lat: hists() };
  const l = {
    runs: zeros(),
    errors: zeros(),
    streamed: zeros(),
    lat: hists(),
    ttft: hists(),
    in: zeros(),
    out: zeros(),
    cost: zeros(),
    costRuns: zeros(),
  };
  for (const c of cells) {
    const k = bucketOf(q, n, c.time_ms);
    if (k < 0) continue;
    if (c.scope === "root") {
      t.runs[k]! += c.runs;
      t.errors[k]! += c.errors;
      histAdd(t.lat[k]!, c.latency);
    } else {
      l.runs[k]! += c.runs;
      l.errors[k]! += c.errors;
      l.streamed[k]! += c.streamed;
      histAdd(l.lat[k]!, c.latency);
      histAdd(l.ttft[k]!, c.ttft);
      l.in[k]! += c.input_tokens;
      l.out[k]! += c.output_tokens;
      l.cost[k]! += c.cost;
      l.costRuns[k]! += c.cost_runs;
    }
  }
  const pct = (hs: Hist[], p: number) => hs.map((h) => histPercentile(h, p));
  return {
    project: q.project,
    from_ms: q.from_ms,
    to_ms: q.to_ms,
    step_ms: q.step_ms,
    buckets: Array.from({ length: n }, (_, i) => q.from_ms + i * q.step_ms),
    traces: { runs: t.runs, errors: t.errors, latency_p50: pct(t.lat, 0.5), latency_p95: pct(t.lat, 0.95), latency_p99: pct(t.lat, 0.99) },
    llm: {
      runs: l.runs,
      errors: l.errors,
      streamed: l.streamed,
      latency_p50: pct(l.lat, 0.5),
      latency_p95: pct(l.lat, 0.95),
      latency_p99: pct(l.lat, 0.99),
      ttft_p50: pct(l.ttft, 0.5),
      ttft_p95: pct(l.ttft, 0.95),
      input_tokens: l.in,
      output_tokens: l.out,
      cost: l.cost.map((v, i) => (l.costRuns[i]! > 0 ? v : null)),
    },
  };
}

/** Most groups a breakdown lists (by runs); the rest are summed into no row. */
const MAX_GROUPS = 50;

/** One table of the page: per model or provider (llm runs) or per root run name (traces). */
export function breakdownOf(q: MonitorQuery, cells: Iterable<Cell>, by: Breakdown): BreakdownRow[] {
  const n = bucketCount(q);
  const scope: Scope = by === "name" ? "root" : "llm";
  const groups = new Map<
    string,
    { runs: number; errors: number; in: number; out: number; cost: number; costRuns: number; lat: Hist; spark: number[] }
  >();
  for (const c of cells) {
    if (c.scope !== scope) continue;
    const v = c[by];
    const k = bucketOf(q, n, c.time_ms);
    if (v === "" || k < 0) continue;
    let g = groups.get(v);
    if (!g) groups.set(v, (g = { runs: 0, errors: 0, in: 0, out: 0, cost: 0, costRuns: 0, lat: {}, spark: new Array<number>(n).fill(0) }));
    g.runs += c.runs;
    g.errors += c.errors;
    g.in += c.input_tokens;
    g.out += c.output_tokens;
    g.cost += c.cost;
    g.costRuns += c.cost_runs;
    histAdd(g.lat, c.latency);
    g.spark[k]! += c.runs;
  }
  return [...groups.entries()]
    .filter(([, g]) => g.runs > 0)
    .sort(([a, x], [b, y]) => y.runs - x.runs || (a < b ? -1 : a > b ? 1 : 0))
    .slice(0, MAX_GROUPS)
    .map(([value, g]) => ({
      value,
      runs: g.runs,
      errors: g.errors,
      latency_p50: histPercentile(g.lat, 0.5),
      latency_p95: histPercentile(g.lat, 0.95),
      input_tokens: scope === "llm" ? g.in : null,
      output_tokens: scope === "llm" ? g.out : null,
      cost: scope === "llm" ? (g.costRuns > 0 ? g.cost : null) : null,
      spark: g.spark,
    }));
}

/** A stored rollup row as a cell (histograms stored as JSON text or jsonb). */
export function cellOfRow(r: Record<string, unknown>): Cell {
  const hist = (v: unknown): Hist => (typeof v === "string" ? (JSON.parse(v) as Hist) : ((v as Hist | null) ?? {}));
  return {
    project: String(r.project),
    time_ms: Number(r.hour),
    scope: r.scope as Scope,
    model: String(r.model),
    provider: String(r.provider),
    name: String(r.name),
    runs: Number(r.runs),
    errors: Number(r.errors),
    streamed: Number(r.streamed),
    input_tokens: Number(r.input_tokens),
    output_tokens: Number(r.output_tokens),
    cost: Number(r.cost),
    cost_runs: Number(r.cost_runs),
    latency: hist(r.latency_hist),
    ttft: hist(r.ttft_hist),
  };
}

/** Raw runs of a window (contribution rows with their own start as `hour`) as cells. */
export function cellsOfRuns(rows: readonly ContributionRow[]): Cell[] {
  const d = new RollupDeltas();
  for (const r of rows) d.add(r, 1);
  return [...d.cells.values()];
}
