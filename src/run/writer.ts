import type { Run, RunPatch } from "./schema.js";

export interface UpdateOptions {
  prepare?: () => void;
}

/** Anything runs can be written to: the ingest Client, or an in-memory writer in tests. */
export interface RunWriter {
  createRun(run: Run): void;
  /**
   * `prepare` is work that completes the patch in place and may run later, off
   * the caller's path (token estimation, say); a writer runs it exactly once,
   * before the patch is serialized or stored.
   */
  updateRun(id: string, patch: Omit<RunPatch, "id">, opts?: UpdateOptions): void;
}
