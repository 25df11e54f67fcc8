/**
 * The run store's types are defined by concern in store/contract/. This file
 * keeps the synchronous RunStore the SQLite store implements until it moves
 * to store/sqlite/ behind the contract.
 */
import type { CheckedBatch, IngestBatch, IngestResult, RunQuery, StoredRun } from "./contract/runs.js";

export type { StoredRun, IngestBatch, CheckedBatch, IngestResult, RunQuery } from "./contract/runs.js";
export type { AttachmentInput } from "./contract/attachments.js";

export interface RunStore {
  ingest(batch: IngestBatch | CheckedBatch): Promise<IngestResult>;
  getRun(id: string): StoredRun | undefined;
  queryRuns(query: RunQuery): { runs: StoredRun[]; cursor: string | null };
  countRuns(project?: string): number;
  deleteProject(name: string): number;
  close(): void;
}
