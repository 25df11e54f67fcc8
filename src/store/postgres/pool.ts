/**
 * The PostgreSQL store's connection pool (node-postgres): bounded, and honest
 * about the database being away.
 *
 * - A database that is down, restarting, refusing connections or too slow to
 *   hand out a connection makes every call fail fast with a
 *   StoreUnavailableError (the collector answers 503 with Retry-After), never
 *   a generic error, and never a queue that grows without bound: past
 *   `maxWaiting` callers waiting for a connection, the next is refused at once.
 * - The pool reconnects by itself: a broken connection is dropped (pg's pool
 *   discards clients that errored) and the next call opens a new one.
 * - Transactions that lose a deadlock or a serialization race are run again
 *   from the start (the merge reads under row locks, so a rerun sees the
 *   winner's state).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import pg from "pg";
import { StoreUnavailableError } from "../../errors.js";
import { HEAP_WARMUP_SQL } from "./backend-heap.js";
import { storable } from "./columns.js";
import { DEFAULT_STORE_CONNECTIONS, DEFAULT_STORE_MAX_WAITING, type PgPoolOptions } from "./pool-defaults.js";

export type { PgPoolOptions };

/** SQLSTATE classes and codes that mean "the database is not there now", not "this request is wrong". */
function isUnavailable(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | undefined;
  const code = e?.code ?? "";
  if (/^(08|53|57P)/.test(code)) return true; // connection exception, insufficient resources, operator intervention
  if (code === "57014") return true; // query_canceled (statement_timeout)
  if (["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH"].includes(code)) return true;
  const msg = e?.message ?? "";
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|connection is closed|Client was closed/i.test(
    msg,
  );
}

const RETRY_CODES = new Set(["40001", "40P01"]); // serialization_failure, deadlock_detected

/** A failed attempt runs again when it lost a deadlock or serialization race on a connection still usable, at most 5 attempts in all. */
function runAgain(err: unknown, broken: Error | undefined, attempt: number): boolean {
  const code = (err as { code?: string }).code;
  return !broken && code !== undefined && RETRY_CODES.has(code) && attempt < 4;
}

/** The connection of the transaction a call runs inside, while that transaction is open. */
interface OpenTransaction {
  client: pg.PoolClient;
  open: boolean;
}

export interface PoolHealth {
  ok: boolean;
  /** Why not, when not. */
  error?: string;
  /** When the last failure was seen (ISO), if any. */
  since?: string;
}

export class PgPool {
  readonly pool: pg.Pool;
  private readonly maxWaiting: number;
  private lastFailure: { error: string; at: string } | undefined;
  /**
   * Calls made inside `transaction(fn)` (query, a nested transaction) run on
   * its connection, so one transaction can wrap store methods that each open
   * their own (a trace's conversion: its reads and its ingest under the
   * trace's lock) without a second connection per caller, which a full pool
   * could deadlock on.
   */
  private readonly current = new AsyncLocalStorage<OpenTransaction>();

  constructor(
    connectionString: string,
    opts: PgPoolOptions = {},
    /** Where the target is, for messages (no password). */
    private readonly target: string,
  ) {
    this.maxWaiting = opts.maxWaiting ?? DEFAULT_STORE_MAX_WAITING;
    this.pool = new pg.Pool({
      connectionString,
      max: opts.max ?? DEFAULT_STORE_CONNECTIONS,
      connectionTimeoutMillis: opts.connectTimeoutMs ?? 5000,
      idleTimeoutMillis: 30_000,
      statement_timeout: opts.statementTimeoutMs ?? 30_000,
      application_name: "tracepipe",
    });
    // An idle connection the server closed (a restart) is an event, not a crash: the pool drops it.
    this.pool.on("error", (err) => this.failed(err));
    this.pool.on("connect", (client) => {
      // pg-pool listens for a connection's errors only while it is idle; one the server ends while it is checked
      // out (a restart between two of its queries) would otherwise throw out of the process. Its queries fail anyway.
      client.on("error", (err) => this.failed(err));
      // Queued ahead of the connection's first statement (backend-heap.ts); a failure shows in that statement.
      void client.query(HEAP_WARMUP_SQL).catch(() => undefined);
    });
  }

  private failed(err: unknown): void {
    this.lastFailure = { error: (err as Error)?.message ?? String(err), at: new Date().toISOString() };
  }

  /** The error to throw for `err`: unavailability becomes StoreUnavailableError, anything else stays as it is. */
  private translate(err: unknown): unknown {
    if (err instanceof StoreUnavailableError) return err;
    if (!isUnavailable(err)) return err;
    this.failed(err);
    return new StoreUnavailableError(`the PostgreSQL store at ${this.target} is unavailable: ${(err as Error)?.message ?? String(err)}`, {
      cause: err,
    });
  }

  private async connect(): Promise<pg.PoolClient> {
    if (this.pool.waitingCount >= this.maxWaiting) {
      throw new StoreUnavailableError(
        `the PostgreSQL store at ${this.target} is busy: ${this.pool.waitingCount} requests already wait for a connection`,
      );
    }
    try {
      const client = await this.pool.connect();
      this.lastFailure = undefined;
      return client;
    } catch (err) {
      throw this.translate(err);
    }
  }

  /**
   * One statement on any connection. A string parameter PostgreSQL text cannot
   * hold (a filter or id with U+0000 in it) is sent with U+FFFD in its place,
   * the form such values are stored in for queries, instead of failing.
   */
  async query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<pg.QueryResult<R>> {
    const open = this.openTransaction();
    if (open) return open.client.query<R>(sql, params?.map(storableParam));
    const client = await this.connect();
    let broken: Error | undefined;
    try {
      return await client.query<R>(sql, params?.map(storableParam));
    } catch (err) {
      if (isUnavailable(err)) broken = err as Error;
      throw this.translate(err);
    } finally {
      client.release(broken);
    }
  }

  /** `fn` in one transaction on one connection, run again (at most 5 times) when it loses a deadlock or serialization race. */
  async transaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    // Inside another transaction: part of it (its retry reruns the whole).
    const open = this.openTransaction();
    if (open) return fn(open.client);
    for (let attempt = 0; ; attempt++) {
      const client = await this.connect();
      let broken: Error | undefined;
      const tx: OpenTransaction = { client, open: true };
      try {
        await client.query("BEGIN");
        const out = await this.current.run(tx, () => fn(client));
        tx.open = false;
        await client.query("COMMIT");
        return out;
      } catch (err) {
        tx.open = false;
        if (isUnavailable(err)) broken = err as Error;
        else await client.query("ROLLBACK").catch((e: Error) => (broken = e));
        if (runAgain(err, broken, attempt)) continue;
        throw this.translate(err);
      } finally {
        client.release(broken);
      }
    }
  }

  /**
   * One statement as a transaction of its own (inside an open transaction,
   * part of it), run again when it loses a deadlock or serialization race.
   * Its answer comes after its commit, so what it wrote is durable as a
   * COMMIT's is; it costs one round trip where BEGIN ... COMMIT costs three.
   * No U+0000 replacement (unlike `query`): for the store's own writes, whose
   * values are storable already.
   */
  async statement<R extends pg.QueryResultRow = pg.QueryResultRow>(query: pg.QueryConfig): Promise<pg.QueryResult<R>> {
    const open = this.openTransaction();
    if (open) return open.client.query<R>(query);
    for (let attempt = 0; ; attempt++) {
      const client = await this.connect();
      let broken: Error | undefined;
      try {
        return await client.query<R>(query);
      } catch (err) {
        if (isUnavailable(err)) broken = err as Error;
        if (runAgain(err, broken, attempt)) continue;
        throw this.translate(err);
      } finally {
        client.release(broken);
      }
    }
  }

  /** Whether this call runs inside an open transaction (its statements are part of it). */
  inTransaction(): boolean {
    return this.openTransaction() !== undefined;
  }

  /** The transaction this call runs inside, if it is still open (work it started may outlive it). */
  private openTransaction(): OpenTransaction | undefined {
    const tx = this.current.getStore();
    return tx?.open ? tx : undefined;
  }

  /** `fn` with a connection of its own (no transaction opened). */
  async withClient<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.connect();
    let broken: Error | undefined;
    try {
      return await fn(client);
    } catch (err) {
      if (isUnavailable(err)) broken = err as Error;
      throw this.translate(err);
    } finally {
      client.release(broken);
    }
  }

  /** Whether the database answers now (one round trip). */
  async health(): Promise<PoolHealth> {
    try {
      await this.query("SELECT 1");
      return { ok: true };
    } catch (err) {
      const f = this.lastFailure;
      return { ok: false, error: (err as Error).message, ...(f ? { since: f.at } : {}) };
    }
  }

  async end(): Promise<void> {
    await this.pool.end();
  }
}

function storableParam(v: unknown): unknown {
  if (typeof v === "string") return storable(v);
  if (Array.isArray(v)) return v.map(storableParam);
  return v;
}
