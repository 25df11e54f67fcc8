/**
 * How both stores shape the viewer's trace answers from what they read: a
 * trace summary from its root row and per-trace totals, a tree run from its
 * row. One home, so SQLite and
 * PostgreSQL answer alike; each store keeps only its SQL.
 */
import type { FeedbackSummary } from "./contract/feedback.js";
import type { TraceRun, TraceSummary } from "./contract/traces.js";
import { msBetween } from "./time.js";

/** A root run as the stores read it for a trace summary. */
export interface TraceRootRow {
  id: string;
  name: string | null;
  run_type: string | null;
  session_name: string | null;
  start_time: string | null;
  end_time: string | null;
  error: string | null;
}

/** Totals over one trace's runs: the summary's counts, with the first error and first token time read. */
export interface TraceTotals extends Pick<
  TraceSummary,
  "run_count" | "error_count" | "models" | "providers" | "input_tokens" | "output_tokens" | "total_tokens" | "total_cost" | "estimated"
> {
  first_error: string | null;
  first_token_time: string | null;
}

/** A run of a trace as the stores read it for the tree (no payloads). */
export type TraceRunRow = Omit<TraceRun, "latency_ms">;

export function traceSummaryView(r: TraceRootRow, a: TraceTotals, feedback: FeedbackSummary[]): TraceSummary {
  return {
    trace_id: r.id,
    name: r.name,
    run_type: r.run_type,
    project: r.session_name,
    start_time: r.start_time,
    end_time: r.end_time,
    latency_ms: msBetween(r.start_time, r.end_time),
    error: r.error ?? a.first_error,
    error_count: a.error_count,
    run_count: a.run_count,
    models: a.models,
    providers: a.providers,
    input_tokens: a.input_tokens,
    output_tokens: a.output_tokens,
    total_tokens: a.total_tokens,
    total_cost: a.total_cost,
    estimated: a.estimated,
    ttft_ms: msBetween(r.start_time, a.first_token_time),
    feedback,
  };
}

export function traceRunView(r: TraceRunRow): TraceRun {
  return {
    id: r.id,
    parent_run_id: r.parent_run_id,
    dotted_order: r.dotted_order,
    name: r.name,
    run_type: r.run_type,
    start_time: r.start_time,
    end_time: r.end_time,
    latency_ms: msBetween(r.start_time, r.end_time),
    first_token_time: r.first_token_time,
    error: r.error,
    model: r.model,
    provider: r.provider,
    input_tokens: r.input_tokens,
    output_tokens: r.output_tokens,
    total_tokens: r.total_tokens,
    total_cost: r.total_cost,
    estimated: r.estimated,
  };
}
