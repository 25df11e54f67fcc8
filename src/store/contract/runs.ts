/**
 * Runs: the one ingest operation and the reads of stored runs.
 *
 * The collector (`tracepipe serve`) and the client's embedded sink both call
 * the same `ingest` (validate -> merge create/update -> derive -> store), so
 * both accept and refuse exactly the same runs with the same `{loc, msg, type}`
 * issues, whichever database is behind it.
 */
import type { Issue } from "../../errors.js";
import type { Run, RunPatch } from "../../run/schema.js";
import type { AttachmentInput } from "./attachments.js";

/** A stored run: the record as sent, plus what the store derived on ingest. */
export interface StoredRun extends Run {
  /** Vendor format detected in inputs/outputs (`native`, `openai-chat`, ...), or null. */
  detected_format?: string | null;
  /**
   * Native messages derived from a vendor payload. Null when the run's own
   * `inputs` / `outputs` are already native (they are stored once, as sent) or
   * could not be normalized.
   */
  normalized_inputs?: { messages: unknown[] } | null;
  normalized_outputs?: { messages: unknown[] } | null;
  /** Why normalization failed; the run is stored anyway (SPEC §2.6: other formats are stored). */
  normalize_error?: string | null;
  /** Time of the first `new_token` event. */
  first_token_time?: string | null;
}

/** Records as received: checked by the store, not by the caller. */
export interface IngestBatch {
  post?: readonly unknown[];
  patch?: readonly unknown[];
  attachments?: readonly AttachmentInput[];
  /** Where record `index` of `kind` sits in the request, for error locations. Default `[kind, index]`. */
  locate?: (kind: "post" | "patch", index: number) => Issue["loc"];
}

declare const checked: unique symbol;

/**
 * Records that passed the store's own check (store/validate.ts BatchCheck,
 * the same schemas `ingest` applies): `ingest` stores them without checking
 * them again. Only BatchCheck makes one; any other object is checked as an
 * IngestBatch.
 */
export interface CheckedBatch {
  readonly [checked]: true;
  readonly post: readonly Run[];
  readonly patch: readonly RunPatch[];
  readonly attachments?: readonly AttachmentInput[];
}

export interface IngestResult {
  /** Runs created (first post, or first sighting through a patch). */
  created: number;
  /** Runs that already existed and were merged into. */
  updated: number;
  /** Attachments stored. */
  attachments: number;
  /** Ids of the runs whose record now has an end time and no parent (completed traces). */
  completedRoots: string[];
}

export interface RunQuery {
  trace_id?: string;
  project?: string;
  run_type?: string;
  start_time_gte?: string;
  start_time_lt?: string;
  /** Runs per page, 1 to 1000 (default 100). */
  limit?: number;
  /** From the previous page; a cursor the store did not make is a CursorError. */
  cursor?: string | null;
}

/** One page of runs in (start_time, id) order; `cursor` is null on the last page. */
export interface RunPage {
  runs: StoredRun[];
  cursor: string | null;
}

export interface RunStore {
  /**
   * Check every record, then apply posts and patches atomically, idempotent
   * by run id: a duplicate post is not stored twice, and a post and a patch in
   * either order (same batch or not) yield one complete run. A post fills only
   * what is still empty; a patch overwrites what it carries (the newest update
   * wins). Any invalid record rejects the whole batch with a ValidationError
   * listing every problem, and nothing is stored (the client then bisects to
   * isolate it).
   */
  ingest(batch: IngestBatch | CheckedBatch): Promise<IngestResult>;
  getRun(id: string): Promise<StoredRun | undefined>;
  queryRuns(query: RunQuery): Promise<RunPage>;
  /** Runs stored, in one project or in all. */
  countRuns(project?: string): Promise<number>;
}
