/**
 * Feedback on a run (DESIGN "Run record"): a key with a score or a value, an
 * optional comment, and where it came from. The record is LangSmith's, as its
 * SDKs send it to `POST /feedback` and as `feedback.{id}` multipart parts;
 * fields this store does not use (correction, feedback_config, ...) are kept
 * in `extra` rather than refused, so a newer SDK's feedback is still stored.
 */
import { z } from "zod";
import { Timestamp } from "./schema.js";

/** A score is a number; LangSmith SDKs also send booleans (true = 1). */
const Score = z.union([z.number().finite(), z.boolean()]).transform((v) => (typeof v === "boolean" ? (v ? 1 : 0) : v));

const Source = z.looseObject({ type: z.string().max(200).nullish(), metadata: z.record(z.string(), z.unknown()).nullish() });

/** The fields stored in their own columns; everything else of the record goes to `extra`. */
const OWN = ["id", "run_id", "trace_id", "key", "score", "value", "comment", "feedback_source", "created_at"] as const;

export const Feedback = z
  .looseObject({
    id: z.uuid(),
    run_id: z.uuid({ error: "feedback needs the id of the run it is about (project-level feedback is not stored)" }),
    trace_id: z.uuid().nullish(),
    key: z.string().min(1).max(500),
    score: Score.nullish(),
    value: z.unknown().optional(),
    comment: z.string().max(100_000).nullish(),
    feedback_source: Source.nullish(),
    created_at: Timestamp.nullish(),
  })
  .transform((f) => {
    const extra: Record<string, unknown> = {};
    for (const k in f) if (!(OWN as readonly string[]).includes(k) && f[k] !== undefined && f[k] !== null) extra[k] = f[k];
    return {
      id: f.id,
      run_id: f.run_id,
      trace_id: f.trace_id ?? null,
      key: f.key,
      score: f.score ?? null,
      value: f.value === undefined ? null : f.value,
      comment: f.comment ?? null,
      /** `api` (an SDK or our client), `app` (a person in an app), `model` (an evaluator), or what the sender said. */
      source: f.feedback_source?.type ?? "api",
      source_metadata: f.feedback_source?.metadata ?? null,
      created_at: f.created_at ?? null,
      extra: Object.keys(extra).length ? extra : null,
    };
  });

/** A feedback record as checked: what the store keeps. */
export type FeedbackRecord = z.output<typeof Feedback>;

export { feedbackRecord, type FeedbackOptions } from "./feedback-record.js";
