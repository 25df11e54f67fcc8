import type { Run, RunPatch } from "./schema.js";

/** Anything runs can be written to: the ingest Client, or an in-memory writer in tests. */
export interface RunWriter {
  createRun(run: Run): void;
  updateRun(id: string, patch: Omit<RunPatch, "id">): void;
}
