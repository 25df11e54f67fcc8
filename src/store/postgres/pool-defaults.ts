/** The PostgreSQL pool's bounds by default (pool.ts), apart so `serve --help` can name them without loading pg. */

/** Connections one collector opens at most. */
export const DEFAULT_STORE_CONNECTIONS = 10;
/** Callers that may wait for a connection before the next is refused (503 with Retry-After). */
export const DEFAULT_STORE_MAX_WAITING = 64;
