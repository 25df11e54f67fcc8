/**
 * Group commit: the ingests handed over in one turn of the event loop are
 * written together at its end, in one transaction. A commit's cost (the WAL
 * frames of every page it touched, the header pages each commit rewrites) is
 * then paid once for the group instead of once per request, which is most of
 * what concurrent requests cost beyond their rows.
 *
 * Each ingest keeps its own outcome. One refused by its checks is refused
 * before anything is written. The others are written one after another with
 * no savepoint between them: a savepoint makes SQLite copy every page it is
 * the first to touch, which costs about as much as the writes. Should a write
 * still fail part-way (a constraint), the group's transaction is undone and
 * the group written again, each ingest in a savepoint of its own, so the
 * failed one rolls back alone and the others are written. A promise is
 * settled only once the group's transaction has committed, so an ingest is
 * never reported stored when a later failure (a full disk failing the commit,
 * or SQLite rolling the whole transaction back) undid it: then every ingest
 * of the group fails with that error, and nothing of it is kept.
 *
 * What the writes of a group add to shared rows (totals that many requests
 * add to alike) may be left to a tail: each write that succeeds adds its part
 * to the group's tail, and the tail is written once, last, in the same
 * transaction, so those rows are read and written once per group rather than
 * once per request. A write undone in its savepoint has added nothing to it.
 */
import type Database from "better-sqlite3";

/** The most ingests written in one transaction: a bigger group adds latency for little more saving. */
const MAX_GROUP = 64;

interface Pending<B, R> {
  batch: B;
  resolve: (r: R) => void;
  reject: (err: unknown) => void;
}

type Outcome<R> = { ok: true; value: R } | { ok: false; err: unknown };
/** An ingest past its checks (its write), or refused by them. */
type Prepared<R, T> = { write: (tail: T) => R } | { err: unknown };

/** A group's tail: opened when its transaction begins (again if it is written again), written last inside it. */
export interface GroupTail<T> {
  open(): T;
  write(tail: T): void;
}

/** Thrown out of a group's transaction to undo it when one write failed and SQLite kept the transaction. */
class WriteFailedInGroup {}

export class GroupCommit<B, R, T = undefined> {
  private pending: Pending<B, R>[] = [];
  /** Transactions committed, and the ingests they held. */
  readonly stats = { groups: 0, ingests: 0 };
  /**
   * The group's transaction and one write's savepoint, made once: better-sqlite3 builds four wrapper functions and
   * their properties each time a transaction function is made, which a group would otherwise pay every time.
   */
  private readonly inTransaction: (prepared: Prepared<R, T>[], savepoints: boolean, outcomes: Outcome<R>[]) => void;
  private readonly inSavepoint: (p: { write: (tail: T) => R }, tail: T) => R;

  constructor(
    private readonly db: Database.Database,
    /**
     * Checks one batch, throwing if it is refused (nothing written), and returns its write: called inside the group's
     * transaction with the group's tail, and called again if that transaction is undone. A write adds to the tail only
     * once nothing of it can fail any more.
     */
    private readonly prepare: (batch: B) => (tail: T) => R,
    /** The error an ingest is rejected with, for the error that failed it (or its whole group). */
    private readonly mapError: (err: unknown) => unknown,
    /** Called when a group has committed. */
    private readonly committed: () => void,
    /** The group's tail, when its writes leave one. */
    private readonly tail?: GroupTail<T>,
  ) {
    this.inTransaction = db.transaction((prepared: Prepared<R, T>[], savepoints: boolean, outcomes: Outcome<R>[]) =>
      this.writeAll(prepared, savepoints, outcomes),
    );
    // A nested better-sqlite3 transaction is a savepoint.
    this.inSavepoint = db.transaction((p: { write: (tail: T) => R }, tail: T) => p.write(tail));
  }

  /** Written at the end of this turn of the event loop, with whatever else is handed over in it. */
  add(batch: B): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.pending.push({ batch, resolve, reject });
      if (this.pending.length === 1) setImmediate(() => this.flush());
    });
  }

  /** Write what is pending now (also before the store closes). */
  flush(): void {
    while (this.pending.length) this.writeGroup(this.pending.splice(0, MAX_GROUP));
  }

  private writeGroup(group: Pending<B, R>[]): void {
    const prepared = group.map((p): Prepared<R, T> => {
      try {
        return { write: this.prepare(p.batch) };
      } catch (err) {
        return { err };
      }
    });
    let outcomes: Outcome<R>[];
    try {
      try {
        outcomes = this.commit(prepared, false);
      } catch (err) {
        if (!(err instanceof WriteFailedInGroup)) throw err;
        outcomes = this.commit(prepared, true);
      }
    } catch (err) {
      const mapped = this.mapError(err);
      for (const p of group) p.reject(mapped);
      return;
    }
    this.stats.groups++;
    this.stats.ingests += group.length;
    this.committed();
    group.forEach((p, i) => {
      const o = outcomes[i]!;
      if (o.ok) p.resolve(o.value);
      else p.reject(this.mapError(o.err));
    });
  }

  /** The group's writes in one transaction, each in a savepoint of its own when `savepoints`; their outcomes once it has committed. */
  private commit(prepared: Prepared<R, T>[], savepoints: boolean): Outcome<R>[] {
    const outcomes: Outcome<R>[] = [];
    this.inTransaction(prepared, savepoints, outcomes);
    return outcomes;
  }

  /** Inside the group's transaction: each write (in a savepoint of its own when `savepoints`), then the tail. */
  private writeAll(prepared: Prepared<R, T>[], savepoints: boolean, outcomes: Outcome<R>[]): void {
    const tail = this.tail?.open() as T;
    for (const p of prepared) {
      if ("err" in p) {
        outcomes.push({ ok: false, err: p.err });
        continue;
      }
      try {
        outcomes.push({ ok: true, value: savepoints ? this.inSavepoint(p, tail) : p.write(tail) });
      } catch (err) {
        // SQLite rolled the whole transaction back (a full disk, an I/O error): what the group wrote is gone.
        if (!this.db.inTransaction) throw err;
        if (!savepoints) throw new WriteFailedInGroup();
        outcomes.push({ ok: false, err });
      }
    }
    // A failure here undoes the whole group, as a failed commit would.
    this.tail?.write(tail);
  }
}
