/**
 * The one better-sqlite3 connection a SQLite store's parts share: WAL mode,
 * the schema migrated to the newest version (store/sqlite/migrations.ts).
 */
import Database from "better-sqlite3";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { StoreUnavailableError } from "../../errors.js";
import { migrate } from "./migrations.js";

/**
 * The page cache. Big enough for the pages ingest keeps coming back to (the
 * last leaves of the time-ordered indexes, the rollup and thread rows, the
 * upper levels of the id and trace indexes); no bigger, because a commit that
 * follows a page split (SQLite's balance renumbers a page through a temporary
 * number far past the file's end) walks the cache's whole hash table, so that
 * commit costs in proportion to how many pages the cache holds. Pages it does
 * not hold are read from the operating system's file cache.
 */
export const CACHE_KIB = -16384;

/**
 * WAL pages written before SQLite copies them back into the file: a page that
 * several commits rewrite (an index's last leaf, a rollup row, a page of a hot
 * index) is copied once per checkpoint, not once per commit that made it, and
 * a checkpoint's fixed cost is paid less often. The WAL may grow to about
 * this many pages (4 KiB each) between checkpoints; closing truncates it.
 */
export const WAL_CHECKPOINT_PAGES = 10_000;

/** Open (creating the file, its directory and the schema as needed) the database at `path`; `:memory:` for tests. */
export function openDatabase(path: string): Database.Database {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("busy_timeout = 5000");
  // Ingest is write-heavy: a bigger page cache and in-memory temp tables keep it off the disk where they can.
  db.pragma(`cache_size = ${CACHE_KIB}`);
  db.pragma("temp_store = MEMORY");
  db.pragma(`wal_autocheckpoint = ${WAL_CHECKPOINT_PAGES}`);
  migrate(db);
  return db;
}

/** Checkpoint the WAL into the file and close; a closed connection is left as it is. */
export function closeDatabase(db: Database.Database): void {
  if (!db.open) return;
  try {
    db.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
}

/**
 * SQLite's answers that say the database cannot be written now, not that the
 * request is wrong: another connection holds it past busy_timeout, the disk is
 * full, an I/O error, a file made read-only. The transaction was rolled back,
 * so nothing of the request was stored and the same request may succeed later.
 */
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|READONLY|CANTOPEN|PROTOCOL)/;

/** An error that says the database cannot be written now as the contract's StoreUnavailableError naming `target`; any other error as it is. */
export function asUnavailable(err: unknown, target: string): unknown {
  const code = (err as { code?: unknown })?.code;
  if (typeof code === "string" && UNAVAILABLE.test(code))
    return new StoreUnavailableError(`the SQLite store at ${target} cannot be written now: ${(err as Error).message} (${code})`, {
      cause: err,
    });
  return err;
}
