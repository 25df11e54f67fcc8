/** FeedbackStore over SQLite: the `feedback` table (migration 7), upserted by feedback id. */
import type { FeedbackRecord } from "../../run/feedback.js";
import type { SqliteHandle } from "./handle.js";
import { canonicalTime } from "../time.js";
import type { FeedbackSummary, StoredFeedback } from "../contract/feedback.js";

const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));

/** Store checked records in one transaction; a later record of the same id replaces the earlier. */
export function writeFeedback(db: SqliteHandle, records: readonly FeedbackRecord[]): number {
  if (!records.length) return 0;
  const stmt = db.prepare(
    `INSERT INTO feedback (id, run_id, trace_id, key, score, value, comment, source, source_metadata, extra, created_at, received_at, updated_at)
     VALUES (@id, @run_id, @trace_id, @key, @score, @value, @comment, @source, @source_metadata, @extra, @created_at, @now, @now)
     ON CONFLICT(id) DO UPDATE SET run_id = excluded.run_id, trace_id = coalesce(excluded.trace_id, feedback.trace_id), key = excluded.key,
       score = excluded.score, value = excluded.value, comment = excluded.comment, source = excluded.source,
       source_metadata = excluded.source_metadata, extra = excluded.extra, created_at = coalesce(excluded.created_at, feedback.created_at), updated_at = excluded.updated_at`,
  );
  const now = new Date().toISOString();
  db.transaction(() => {
    for (const f of records) {
      stmt.run({
        ...f,
        value: json(f.value),
        source_metadata: json(f.source_metadata),
        extra: json(f.extra),
        created_at: f.created_at ? (canonicalTime(f.created_at) ?? f.created_at) : now,
        now,
      });
    }
  })();
  return records.length;
}

interface Row {
  id: string;
  run_id: string;
  trace_id: string | null;
  key: string;
  score: number | null;
  value: string | null;
  comment: string | null;
  source: string | null;
  source_metadata: string | null;
  extra: string | null;
  created_at: string | null;
  received_at: string;
}

const parse = (t: string | null) => (t === null ? null : JSON.parse(t));

export function feedbackOf(db: SqliteHandle, runIds: readonly string[]): StoredFeedback[] {
  if (!runIds.length) return [];
  const rows = db
    .prepare(`SELECT * FROM feedback WHERE run_id IN (SELECT value FROM json_each(?)) ORDER BY created_at, id`)
    .all(JSON.stringify(runIds)) as Row[];
  return rows.map((r) => ({
    id: r.id,
    run_id: r.run_id,
    trace_id: r.trace_id,
    key: r.key,
    score: r.score,
    value: parse(r.value),
    comment: r.comment,
    source: r.source ?? "api",
    source_metadata: parse(r.source_metadata),
    extra: parse(r.extra),
    created_at: r.created_at,
    received_at: r.received_at,
  }));
}

/** Per key over one trace's runs (through the run, so feedback sent without a trace id counts too). */
export const TRACE_FEEDBACK_SQL = `SELECT f.key AS key, count(*) AS count, avg(f.score) AS avg_score
  FROM runs c JOIN feedback f ON f.run_id = c.id WHERE c.trace_id = ? GROUP BY f.key ORDER BY f.key`;

export function traceFeedback(db: SqliteHandle, traceId: string): FeedbackSummary[] {
  return db.prepare(TRACE_FEEDBACK_SQL).all(traceId) as FeedbackSummary[];
}
