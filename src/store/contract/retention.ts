/**
 * Retention: whole traces removed once they are older than a cut-off, with
 * everything stored for them (runs, attachments, large-field pieces, staged
 * OTLP spans). A run goes when its trace's root run is stored and started
 * before the cut-off, or when its trace started before it by its own record
 * (the root segment of its dotted_order, else its start time): a trace whose
 * root never arrived ages out too.
 */

export interface PruneResult {
  /** Runs removed. */
  runs: number;
  /** Attachments removed. */
  attachments: number;
  /** Whole partitions dropped (PostgreSQL; empty for SQLite). */
  partitionsDropped: string[];
  /**
   * True when nothing was tried because another process prunes the same store
   * now (PostgreSQL shared by collectors: one prunes at a time). Absent otherwise.
   */
  skipped?: true;
}

export interface PruneOptions {
  /** Stop between slices when aborted (what was removed stays removed). */
  signal?: AbortSignal;
}

export interface RetentionStore {
  /**
   * Remove the traces older than `cutoff` (see above), a slice at a time, each
   * slice its own short transaction, with the event loop served in between, so
   * ingest carries on meanwhile.
   */
  pruneTraces(cutoff: Date, opts?: PruneOptions): Promise<PruneResult>;
}
