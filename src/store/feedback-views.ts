/**
 * How both stores write and read a feedback row: the columns a checked record
 * fills, the upsert rule for a record sent again, and the stored record a row
 * reads back as. One home, so SQLite and PostgreSQL answer alike; each store
 * keeps only its SQL.
 */
import type { FeedbackRecord } from "../run/feedback.js";
import type { StoredFeedback } from "./contract/feedback.js";
import { canonicalTime } from "./time.js";

/** The feedback table's columns a record fills, in insert order (received_at and updated_at are the write's time). */
export const FEEDBACK_COLUMNS = [
  "id",
  "run_id",
  "trace_id",
  "key",
  "score",
  "value",
  "comment",
  "source",
  "source_metadata",
  "extra",
  "created_at",
] as const;

type FeedbackColumn = (typeof FEEDBACK_COLUMNS)[number];

/**
 * A later record of the same id replaces the earlier, except that a trace id
 * or creation time it leaves out keeps the stored one.
 */
export const FEEDBACK_UPSERT = `ON CONFLICT (id) DO UPDATE SET run_id = excluded.run_id, trace_id = coalesce(excluded.trace_id, feedback.trace_id), key = excluded.key,
  score = excluded.score, value = excluded.value, comment = excluded.comment, source = excluded.source,
  source_metadata = excluded.source_metadata, extra = excluded.extra, created_at = coalesce(excluded.created_at, feedback.created_at), updated_at = excluded.updated_at`;

const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));

/** A checked record's column values; `now` stands in for a creation time the sender left out. */
export function feedbackColumns(f: FeedbackRecord, now: string): Record<FeedbackColumn, unknown> {
  return {
    id: f.id,
    run_id: f.run_id,
    trace_id: f.trace_id,
    key: f.key,
    score: f.score,
    value: json(f.value),
    comment: f.comment,
    source: f.source,
    source_metadata: json(f.source_metadata),
    extra: json(f.extra),
    created_at: f.created_at ? (canonicalTime(f.created_at) ?? f.created_at) : now,
  };
}

/** A feedback row as both stores read it (JSON columns as text). */
export interface FeedbackRow {
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

export function feedbackView(r: FeedbackRow): StoredFeedback {
  return {
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
  };
}
