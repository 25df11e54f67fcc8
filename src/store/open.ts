/**
 * openStore: the one way to open a Store. The target says which database:
 * a file path (or `:memory:`) is the SQLite store. Each implementation is
 * imported only when opened, so its driver loads only for who uses it.
 */
import type { Store, StoreOptions } from "./contract/store.js";

export async function openStore(target: string, opts: StoreOptions = {}): Promise<Store> {
  const { SqliteStore } = await import("./sqlite/index.js");
  return new SqliteStore(target, opts);
}
