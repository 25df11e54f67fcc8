/** The FeedbackStore half of PostgresStore: the `feedback` table (migration 2), upserted by feedback id. */
import type { FeedbackRecord } from "../../run/feedback.js";
import type { FeedbackSummary, StoredFeedback } from "../contract/feedback.js";
import { FEEDBACK_COLUMNS, FEEDBACK_UPSERT, feedbackColumns, feedbackView, type FeedbackRow } from "../feedback-views.js";
import { storable } from "./columns.js";
import type { PgPool } from "./pool.js";
import { inTraces } from "./trace-members.js";

const TYPES: Record<string, string> = { score: "float8" };
/** Scalar text columns, as PostgreSQL text can hold them (columns.ts storable). */
const TEXT_COLUMNS = ["key", "comment", "source"] as const;

/** Store checked records in one transaction; a later record of the same id replaces the earlier (one statement per record, so a batch may name an id twice). */
export async function writeFeedback(pool: PgPool, records: readonly FeedbackRecord[]): Promise<number> {
  if (!records.length) return 0;
  const now = new Date().toISOString();
  const n = FEEDBACK_COLUMNS.length;
  const sql = `INSERT INTO feedback (${FEEDBACK_COLUMNS.join(", ")}, received_at, updated_at)
    VALUES (${FEEDBACK_COLUMNS.map((col, i) => `$${i + 1}::${TYPES[col] ?? "text"}`).join(", ")}, $${n + 1}, $${n + 1}) ${FEEDBACK_UPSERT}`;
  await pool.transaction(async (c) => {
    for (const f of records) {
      const row = feedbackColumns(f, now);
      for (const col of TEXT_COLUMNS) row[col] = typeof row[col] === "string" ? storable(row[col]) : null;
      await c.query(sql, [...FEEDBACK_COLUMNS.map((col) => row[col] ?? null), now]);
    }
  });
  return records.length;
}

export async function feedbackOf(pool: PgPool, runIds: readonly string[]): Promise<StoredFeedback[]> {
  if (!runIds.length) return [];
  const rows = (
    await pool.query<FeedbackRow>("SELECT * FROM feedback WHERE run_id = ANY($1::text[]) ORDER BY created_at NULLS FIRST, id", [
      [...runIds],
    ])
  ).rows;
  return rows.map(feedbackView);
}

/** Per trace and key over the traces' runs (through the run, so feedback sent without a trace id counts too). */
export async function feedbackOfTraces(pool: PgPool, traceIds: readonly string[]): Promise<Map<string, FeedbackSummary[]>> {
  const out = new Map<string, FeedbackSummary[]>();
  if (!traceIds.length) return out;
  const rows = (
    await pool.query<FeedbackSummary & { trace_id: string }>(
      `SELECT c.trace_id, f.key, count(*)::int AS count, avg(f.score) AS avg_score
       FROM runs c JOIN feedback f ON f.run_id = c.id WHERE ${inTraces("$1::text[]", "c.")} GROUP BY c.trace_id, f.key ORDER BY f.key`,
      [[...traceIds]],
    )
  ).rows;
  for (const { trace_id, ...s } of rows) {
    const list = out.get(trace_id);
    if (list) list.push(s);
    else out.set(trace_id, [s]);
  }
  return out;
}

export async function traceFeedback(pool: PgPool, traceId: string): Promise<FeedbackSummary[]> {
  return (await feedbackOfTraces(pool, [traceId])).get(traceId) ?? [];
}
