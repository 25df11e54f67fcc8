/**
 * The trace viewer's and `tracepipe runs`' reads: pages of trace summaries by
 * cursor, the runs of one trace as a tree, with filters and text search.
 */

export interface TraceFilter {
  project?: string;
  /** Substring of the root run's name (case-insensitive). */
  name?: string;
  /** Root run type. */
  run_type?: string;
  /** A run of the trace used this model / provider. */
  model?: string;
  provider?: string;
  /** Only traces with at least one run in error. */
  errors_only?: boolean;
  /** Substring of any run's inputs or outputs (case-insensitive), large fields included. */
  q?: string;
  start_time_gte?: string;
  start_time_lt?: string;
  /** Only traces whose summed cost (USD) is at least / at most this; traces without a cost never match. */
  min_cost?: number;
  max_cost?: number;
  /** Latency and cost sort traces without one last, in either order; ties go by trace id, in the same direction. */
  sort?: "start_time" | "latency" | "cost";
  order?: "asc" | "desc";
  /** Traces per page, 1 to 500 (default 50). */
  limit?: number;
  /** From the previous page of the same sort; anything else is a CursorError. */
  cursor?: string | null;
}

export interface TraceSummary {
  trace_id: string;
  name: string | null;
  run_type: string | null;
  project: string | null;
  start_time: string | null;
  end_time: string | null;
  latency_ms: number | null;
  /** The root's error, else the first error inside the trace; null when none. */
  error: string | null;
  error_count: number;
  run_count: number;
  models: string[];
  providers: string[];
  input_tokens: number | null;
  output_tokens: number | null;
  total_tokens: number | null;
  /** USD, when every priced run had a price; null when no run had one. */
  total_cost: number | null;
  /** Any token count in the trace was estimated locally. */
  estimated: boolean;
  /** Time to first token of the trace's first streamed llm run, ms from the trace's start. */
  ttft_ms: number | null;
}

/** One run of a trace as the tree needs it (no payloads). */
export interface TraceRun {
  id: string;
  parent_run_id: string | null;
  dotted_order: string | null;
  name: string | null;
  run_type: string | null;
  start_time: string | null;
  end_time: string | null;
  latency_ms: number | null;
  first_token_time: string | null;
  error: string | null;
  model: string | null;
  provider: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  total_tokens: number | null;
  total_cost: number | null;
  estimated: boolean;
}

/** One page of root traces; `cursor` is null on the last page. */
export interface TracePage {
  traces: TraceSummary[];
  cursor: string | null;
}

export interface TraceStore {
  /** A page of trace summaries (roots: runs without a parent), newest first by default. */
  listTraces(filter?: TraceFilter): Promise<TracePage>;
  /** Every run of one trace in tree order (dotted_order, then id); empty when the trace is unknown. */
  traceRuns(traceId: string): Promise<TraceRun[]>;
}
