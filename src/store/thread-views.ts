/**
 * How both stores shape a thread's answers from what they read: a turn from
 * its root run and usage, a summary from its threads-table row, first and last
 * runs and usage. One home, so SQLite and PostgreSQL answer alike.
 */
import type { StoredRun } from "./contract/runs.js";
import type { ThreadSummary, ThreadTurn } from "./contract/threads.js";
import { assistantText, userText } from "./preview.js";

/** A root run of a thread as the stores read it. */
export interface ThreadTurnRow {
  id: string;
  name: string | null;
  start_time: string | null;
  end_time: string | null;
  latency_ms: number | null;
  error: string | null;
}

/** Usage summed over some traces (null where no run had a number). */
export interface ThreadUsage {
  input_tokens: number | null;
  output_tokens: number | null;
  total_tokens: number | null;
  cost: number | null;
  errors: number;
}

/** A thread's row in the threads table (store/thread-rollup.ts). */
export interface ThreadGroupRow {
  project: string | null;
  thread_id: string;
  turns: number;
  first_time: string;
  last_time: string;
  latency_ms: number;
  latency_turns: number;
}

export function turnView(r: ThreadTurnRow, run: StoredRun | undefined, u: Pick<ThreadUsage, "total_tokens" | "cost">): ThreadTurn {
  return {
    trace_id: r.id,
    name: r.name,
    start_time: r.start_time,
    end_time: r.end_time,
    latency_ms: r.latency_ms,
    error: r.error,
    user: run ? (userText(run.inputs, run.normalized_inputs) ?? null) : null,
    assistant: run ? (assistantText(run.outputs, run.normalized_outputs) ?? null) : null,
    total_tokens: u.total_tokens,
    cost: u.cost,
  };
}

export function summaryView(g: ThreadGroupRow, first: StoredRun | undefined, last: StoredRun | undefined, u: ThreadUsage): ThreadSummary {
  return {
    thread_id: g.thread_id,
    project: g.project,
    turns: g.turns,
    first_time: g.first_time,
    last_time: g.last_time,
    first_message: first ? (userText(first.inputs, first.normalized_inputs) ?? null) : null,
    last_message: last ? (assistantText(last.outputs, last.normalized_outputs) ?? null) : null,
    input_tokens: u.input_tokens,
    output_tokens: u.output_tokens,
    total_tokens: u.total_tokens,
    cost: u.cost,
    latency_ms: g.latency_turns > 0 ? Number(g.latency_ms) : null,
    error_count: u.errors,
  };
}
