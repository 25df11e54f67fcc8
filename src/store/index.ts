/**
 * The run store: one contract (RunStore, with the one ingest operation) and
 * its SQLite implementation. Loading this module loads better-sqlite3, so the
 * main entry reaches it only through a dynamic import (the embedded sink).
 */
import { SqliteRunStore, type SqliteRunStoreOptions } from "./sqlite.js";

export type { RunStore, StoredRun, IngestBatch, IngestResult, RunQuery, AttachmentInput } from "./types.js";
export { SqliteRunStore, type SqliteRunStoreOptions } from "./sqlite.js";
export { migrate } from "./migrations.js";
export { canonicalTime } from "./time.js";
export { CursorError, type TraceFilter, type TraceSummary, type TraceRun } from "./traces.js";

/** Open (creating the file, its directory and the schema as needed) the run store at `path`; `:memory:` for tests. */
export function openStore(path: string, opts?: SqliteRunStoreOptions): SqliteRunStore {
  return new SqliteRunStore(path, opts);
}
