/**
 * Feedback: scores, values and comments on runs (DESIGN "Run record"), stored
 * beside the runs. Records are checked by the store (run/feedback.ts schema)
 * and upserted by their own id, so a re-sent batch stores each once; feedback
 * may arrive before its run and is shown once the run is there.
 */
import type { Issue } from "../../errors.js";
import type { FeedbackRecord } from "../../run/feedback.js";

export interface StoredFeedback extends FeedbackRecord {
  received_at: string;
}

/** One key's feedback over a run or a trace: how many, and the mean of the scores given. */
export interface FeedbackSummary {
  key: string;
  count: number;
  /** Mean score; null when none of them had a score (values only). */
  avg_score: number | null;
}

export interface FeedbackStore {
  /**
   * Check every record (a ValidationError lists every problem, located by
   * `locate`, and nothing is stored), then store them in one transaction.
   * Resolves to the number stored.
   */
  storeFeedback(records: readonly unknown[], locate?: (index: number) => Issue["loc"]): Promise<number>;
  /** The feedback on these runs, oldest first. */
  feedbackOf(runIds: readonly string[]): Promise<StoredFeedback[]>;
  /** Per key, over the runs of one trace. */
  traceFeedback(traceId: string): Promise<FeedbackSummary[]>;
}
