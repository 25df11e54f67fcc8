/**
 * A throwaway SQLite file for what a process must look up later but cannot
 * hold in memory (backfill's batch requests to join, spans to assemble into
 * traces): in a temporary directory, without a journal or fsync (it dies with
 * the process), with inserts batched into transactions. It is no Store: it
 * holds nothing past the process, whatever store the runs go to.
 */
import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A prepared query over a scratch table: parameters `P`, rows `R`. */
export interface ScratchQuery<P extends unknown[], R> {
  get(...params: P): R | undefined;
  all(...params: P): R[];
  iterate(...params: P): IterableIterator<R>;
}

export class ScratchTable<Row extends unknown[]> {
  private readonly db: Database.Database;
  private readonly dir: string;
  private readonly put: Database.Statement<Row>;
  private pending: Row[] = [];

  constructor(
    prefix: string,
    schema: string,
    insertSql: string,
    private readonly batch: number,
  ) {
    this.dir = mkdtempSync(join(tmpdir(), prefix));
    this.db = new Database(join(this.dir, "scratch.db"));
    this.db.pragma("journal_mode = OFF");
    this.db.pragma("synchronous = OFF");
    this.db.exec(schema);
    this.put = this.db.prepare<Row>(insertSql);
  }

  /** A query to run after commit(). */
  query<P extends unknown[], R>(sql: string): ScratchQuery<P, R> {
    return this.db.prepare<P, R>(sql) as unknown as ScratchQuery<P, R>;
  }

  add(row: Row): void {
    this.pending.push(row);
    if (this.pending.length >= this.batch) this.commit();
  }

  /** Write what is pending; call before reading. */
  commit(): void {
    if (!this.pending.length) return;
    const rows = this.pending;
    this.pending = [];
    this.db.transaction(() => {
      for (const r of rows) this.put.run(...r);
    })();
  }

  close(): void {
    this.db.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
