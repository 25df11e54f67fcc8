/**
 * The part of a better-sqlite3 database that the SQLite store's query
 * functions (migrations, pieces, trace queries) use, typed here rather than
 * imported: better-sqlite3 ships no types of its own and
 * @types/better-sqlite3 is a devDependency, so a declaration file that names
 * `Database.Database` fails (TS7016) for every consumer that checks libraries.
 * A better-sqlite3 `Database` is one of these.
 */
export interface SqliteStatement {
  run(...params: unknown[]): unknown;
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}

export interface SqliteHandle {
  exec(sql: string): unknown;
  prepare(sql: string): SqliteStatement;
  transaction<T>(fn: () => T): () => T;
}
