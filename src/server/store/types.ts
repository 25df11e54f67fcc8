/**
 * The run store shared by the collector (`tracepipe serve`) and the client's
 * embedded sink. One interface, one SQLite implementation (better-sqlite3, WAL).
 */
import type { Run, RunPatch } from "../../run/schema.js";

/** A stored run: the record as sent, plus what the collector derived on ingest. */
export interface StoredRun extends Run {
  /** Vendor format detected in inputs/outputs (`native`, `openai-chat`, ...), or null. */
  detected_format?: string | null;
  /** Native messages derived from a vendor payload, beside the raw inputs/outputs. */
  normalized_inputs?: { messages: unknown[] } | null;
  normalized_outputs?: { messages: unknown[] } | null;
  /** Why normalization failed; the run is stored anyway (SPEC §2.6: other formats are stored). */
  normalize_error?: string | null;
  /** Time of the first `new_token` event. */
  first_token_time?: string | null;
}

export interface IngestBatch {
  post?: Run[];
  patch?: RunPatch[];
}

export interface IngestResult {
  /** Runs created (first post, or first sighting through a patch). */
  created: number;
  /** Runs that already existed and were merged into. */
  updated: number;
}

export interface RunQuery {
  trace_id?: string;
  project?: string;
  run_type?: string;
  start_time_gte?: string;
  start_time_lt?: string;
  limit?: number;
  cursor?: string | null;
}

export interface RunStore {
  /**
   * Apply posts and patches in ONE transaction, idempotent by run id: a duplicate
   * post is not stored twice, and a post and a patch in either order (same batch
   * or not) yield one complete run.
   */
  ingest(batch: IngestBatch): IngestResult;
  getRun(id: string): StoredRun | undefined;
  queryRuns(query: RunQuery): { runs: StoredRun[]; cursor: string | null };
  countRuns(project?: string): number;
  /** Delete a project (session) and its runs; returns the number of runs removed. */
  deleteProject(name: string): number;
  close(): void;
}
