import { SqliteRunStore, type SqliteRunStoreOptions } from "./sqlite.js";

export type { RunStore, StoredRun, IngestBatch, IngestResult, RunQuery } from "./types.js";
export { SqliteRunStore, type SqliteRunStoreOptions } from "./sqlite.js";
export { canonicalTime } from "./time.js";

/** Open (creating the file, its directory and the schema as needed) the run store at `path`; `:memory:` for tests. */
export function openStore(path: string, opts?: SqliteRunStoreOptions): SqliteRunStore {
  return new SqliteRunStore(path, opts);
}
