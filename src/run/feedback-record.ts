/**
 * A feedback record as a client sends it (LangSmith's field names), built
 * where the client hands it over. Kept apart from feedback.ts, whose zod
 * schema only the collector and the store need: the main entry imports this
 * file, and building schemas is part of what importing it costs.
 */
import { uuidv7 } from "./ids.js";

export interface FeedbackOptions {
  score?: number | boolean;
  value?: unknown;
  comment?: string;
  /** Default `api`. */
  source?: string;
  /** The trace the run belongs to, when known (lets the store file it before the run arrives). */
  traceId?: string;
  /** A stable id makes re-sending the same feedback an update, not a second one. */
  feedbackId?: string;
}

/** A feedback record as a client sends it (LangSmith's field names). */
export function feedbackRecord(runId: string, key: string, opts: FeedbackOptions = {}): Record<string, unknown> {
  const r: Record<string, unknown> = {
    id: opts.feedbackId ?? uuidv7(),
    run_id: runId,
    key,
    feedback_source: { type: opts.source ?? "api" },
    created_at: new Date().toISOString(),
  };
  if (opts.traceId !== undefined) r.trace_id = opts.traceId;
  if (opts.score !== undefined) r.score = opts.score;
  if (opts.value !== undefined) r.value = opts.value;
  if (opts.comment !== undefined) r.comment = opts.comment;
  return r;
}
