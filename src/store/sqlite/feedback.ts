/** FeedbackStore over SQLite: the `feedback` table (migration 7), upserted by feedback id. */
import type { FeedbackRecord } from "../../run/feedback.js";
import type { SqliteHandle } from "./handle.js";
import { inTrace } from "./trace-members.js";
import type { FeedbackSummary, StoredFeedback } from "../contract/feedback.js";
import { FEEDBACK_COLUMNS, FEEDBACK_UPSERT, feedbackColumns, feedbackView, type FeedbackRow } from "../feedback-views.js";

/** Store checked records in one transaction; a later record of the same id replaces the earlier. */
export function writeFeedback(db: SqliteHandle, records: readonly FeedbackRecord[]): number {
  if (!records.length) return 0;
  const stmt = db.prepare(
    `INSERT INTO feedback (${FEEDBACK_COLUMNS.join(", ")}, received_at, updated_at)
     VALUES (${FEEDBACK_COLUMNS.map((c) => `@${c}`).join(", ")}, @now, @now) ${FEEDBACK_UPSERT}`,
  );
  const now = new Date().toISOString();
  db.transaction(() => {
    for (const f of records) stmt.run({ ...feedbackColumns(f, now), now });
  })();
  return records.length;
}

export function feedbackOf(db: SqliteHandle, runIds: readonly string[]): StoredFeedback[] {
  if (!runIds.length) return [];
  const rows = db
    .prepare(`SELECT * FROM feedback WHERE run_id IN (SELECT value FROM json_each(?)) ORDER BY created_at, id`)
    .all(JSON.stringify(runIds)) as FeedbackRow[];
  return rows.map(feedbackView);
}

/** Per key over one trace's runs (through the run, so feedback sent without a trace id counts too). */
export const TRACE_FEEDBACK_SQL = `SELECT f.key AS key, count(*) AS count, avg(f.score) AS avg_score
  FROM runs c JOIN feedback f ON f.run_id = c.id WHERE ${inTrace("@trace", "c.")} GROUP BY f.key ORDER BY f.key`;

export function traceFeedback(db: SqliteHandle, traceId: string): FeedbackSummary[] {
  return db.prepare(TRACE_FEEDBACK_SQL).all({ trace: traceId }) as FeedbackSummary[];
}
