/** The FeedbackStore half of PostgresStore: the `feedback` table (migration 2), upserted by feedback id. */
import type { FeedbackRecord } from "../../run/feedback.js";
import type { FeedbackSummary, StoredFeedback } from "../contract/feedback.js";
import { canonicalTime } from "../time.js";
import { storable } from "./columns.js";
import type { PgPool } from "./pool.js";

const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));
const text = (v: string | null | undefined) => (typeof v === "string" ? storable(v) : null);

const COLUMNS = [
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
const TYPES: Record<string, string> = { score: "float8" };

/** Store checked records in one transaction; a later record of the same id replaces the earlier (one statement per record, so a batch may name an id twice). */
export async function writeFeedback(pool: PgPool, records: readonly FeedbackRecord[]): Promise<number> {
  if (!records.length) return 0;
  const now = new Date().toISOString();
  await pool.transaction(async (c) => {
    for (const f of records) {
      const row: Record<string, unknown> = {
        id: f.id,
        run_id: f.run_id,
        trace_id: f.trace_id,
        key: text(f.key),
        score: f.score,
        value: json(f.value),
        comment: text(f.comment),
        source: text(f.source),
        source_metadata: json(f.source_metadata),
        extra: json(f.extra),
        created_at: f.created_at ? (canonicalTime(f.created_at) ?? f.created_at) : now,
      };
      await c.query(
        `INSERT INTO feedback (${COLUMNS.join(", ")}, received_at, updated_at)
         VALUES (${COLUMNS.map((col, i) => `$${i + 1}::${TYPES[col] ?? "text"}`).join(", ")}, $${COLUMNS.length + 1}, $${COLUMNS.length + 1})
         ON CONFLICT (id) DO UPDATE SET run_id = excluded.run_id, trace_id = coalesce(excluded.trace_id, feedback.trace_id), key = excluded.key,
           score = excluded.score, value = excluded.value, comment = excluded.comment, source = excluded.source,
           source_metadata = excluded.source_metadata, extra = excluded.extra, created_at = coalesce(excluded.created_at, feedback.created_at), updated_at = excluded.updated_at`,
        [...COLUMNS.map((col) => row[col] ?? null), now],
      );
    }
  });
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

export async function feedbackOf(pool: PgPool, runIds: readonly string[]): Promise<StoredFeedback[]> {
  if (!runIds.length) return [];
  const rows = (
    await pool.query<Row>("SELECT * FROM feedback WHERE run_id = ANY($1::text[]) ORDER BY created_at NULLS FIRST, id", [[...runIds]])
  ).rows;
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

/** Per trace and key over the traces' runs (through the run, so feedback sent without a trace id counts too). */
export async function feedbackOfTraces(pool: PgPool, traceIds: readonly string[]): Promise<Map<string, FeedbackSummary[]>> {
  const out = new Map<string, FeedbackSummary[]>();
  if (!traceIds.length) return out;
  const rows = (
    await pool.query<FeedbackSummary & { trace_id: string }>(
      `SELECT c.trace_id, f.key, count(*)::int AS count, avg(f.score) AS avg_score
       FROM runs c JOIN feedback f ON f.run_id = c.id WHERE c.trace_id = ANY($1::text[]) GROUP BY c.trace_id, f.key ORDER BY f.key`,
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
