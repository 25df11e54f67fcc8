/**
 * The PostgreSQL store's options and the pool's bounds by default (pool.ts), apart so `serve --help`
 * can name them and openStore's declarations can take them without loading pg or its types.
 */
import type { StoreOptions } from "../contract/store.js";

/** Connections one collector opens at most. */
export const DEFAULT_STORE_CONNECTIONS = 10;
/** Callers that may wait for a connection before the next is refused (503 with Retry-After). */
export const DEFAULT_STORE_MAX_WAITING = 64;

export interface PgPoolOptions {
  /** Connections at most (default 10). */
  max?: number;
  /** Callers that may wait for a connection before the next is refused with StoreUnavailableError (default 64). */
  maxWaiting?: number;
  /** How long a caller waits for a connection, ms (default 5000). */
  connectTimeoutMs?: number;
  /** A statement running longer is cancelled and the call is unavailable, ms (default 30000). */
  statementTimeoutMs?: number;
}

/** What PostgresStore.open (and openStore) take: every store's options and the pool's bounds. */
export interface PostgresStoreOptions extends StoreOptions, PgPoolOptions {}
