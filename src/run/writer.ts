import type { Run, RunPatch } from "./schema.js";

export interface CreateOptions {
  /**
   * The producer built the run from its own copies and never changes it again
   * (a wrapper's run, built from the call's plain-JSON snapshots): a writer
   * may keep it as it is once it has checked it, rather than copy it.
   */
  owned?: boolean;
}

export interface UpdateOptions {
  prepare?: () => void;
  /** As CreateOptions.owned, for the patch (and whatever `prepare` adds to it). */
  owned?: boolean;
}

/** Anything runs can be written to: the ingest Client, or an in-memory writer in tests. */
export interface RunWriter {
  createRun(run: Run, opts?: CreateOptions): void;
  /**
   * `prepare` is work that completes the patch in place and may run later, off
   * the caller's path (token estimation, say); a writer runs it exactly once,
   * before the patch is serialized or stored.
   */
  updateRun(id: string, patch: Omit<RunPatch, "id">, opts?: UpdateOptions): void;
}
