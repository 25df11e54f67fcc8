/**
 * openStore: the one way to open a Store. The target says which database:
 * a `postgres://` or `postgresql://` URL is the PostgreSQL store (several
 * collectors may share it), a file path (or `:memory:`) the SQLite store. Each
 * implementation is imported only when opened, so its driver (pg,
 * better-sqlite3) loads only for who uses it.
 */
import { isStoreUrl } from "../env.js";
import type { Store } from "./contract/store.js";
import type { PostgresStoreOptions } from "./postgres/pool-defaults.js";

/** `opts`: every store's options; the connection-pool bounds apply to PostgreSQL only. */
export async function openStore(target: string, opts: PostgresStoreOptions = {}): Promise<Store> {
  if (isStoreUrl(target)) {
    const { PostgresStore } = await import("./postgres/store.js");
    return PostgresStore.open(target, opts);
  }
  const { SqliteStore } = await import("./sqlite/index.js");
  return new SqliteStore(target, opts);
}
