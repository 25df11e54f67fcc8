/**
 * Monitoring: one project's runs over a time range, in buckets, as the
 * monitoring page charts them. Answered by aggregate queries in the store;
 * no run leaves it. Series are aligned with `buckets` (bucket start times,
 * epoch ms); a percentile is null in a bucket with no value to rank.
 */

export interface MonitorQuery {
  project: string;
  /** Range start (inclusive) and end (exclusive), epoch ms. */
  from_ms: number;
  to_ms: number;
  /** Bucket width, ms. */
  step_ms: number;
}

type Counts = number[];
type Values = (number | null)[];

export interface MonitorSeries {
  project: string;
  from_ms: number;
  to_ms: number;
  step_ms: number;
  buckets: number[];
  /** Root runs: one per trace. */
  traces: { runs: Counts; errors: Counts; latency_p50: Values; latency_p95: Values; latency_p99: Values };
  /** llm runs; ttft over the streamed ones (a first token time). Cost null where no run had a price. */
  llm: {
    runs: Counts;
    errors: Counts;
    streamed: Counts;
    latency_p50: Values;
    latency_p95: Values;
    latency_p99: Values;
    ttft_p50: Values;
    ttft_p95: Values;
    input_tokens: Counts;
    output_tokens: Counts;
    cost: Values;
  };
}

/** model and provider break llm runs down; name breaks root runs (traces) down. */
export type Breakdown = "model" | "provider" | "name";

export interface BreakdownRow {
  value: string;
  runs: number;
  errors: number;
  latency_p50: number | null;
  latency_p95: number | null;
  /** Null for a breakdown by name (root runs carry no usage of their own). */
  input_tokens: number | null;
  output_tokens: number | null;
  cost: number | null;
  /** Runs per bucket. */
  spark: number[];
}

export interface MonitorStore {
  monitorSeries(q: MonitorQuery): Promise<MonitorSeries>;
  monitorBreakdown(q: MonitorQuery, by: Breakdown): Promise<BreakdownRow[]>;
}
