/**
 * Group commit: the ingests handed over in one turn of the event loop are
 * written together at its end, in one transaction with a savepoint each. A
 * commit's cost (the WAL frames of every page it touched, the header pages
 * each commit rewrites) is then paid once for the group instead of once per
 * request, which is most of what concurrent requests cost beyond their rows.
 *
 * Each ingest keeps its own outcome: one refused (a validation error, a
 * constraint) rolls back only its savepoint, and the others are written. A
 * promise is settled only once the group's transaction has committed, so an
 * ingest is never reported stored when a later failure (a full disk failing
 * the commit, or SQLite rolling the whole transaction back) undid it: then
 * every ingest of the group fails with that error, and nothing of it is kept.
 */
import type Database from "better-sqlite3";

/** The most ingests written in one transaction: a bigger group adds latency for little more saving. */
const MAX_GROUP = 64;

interface Pending<B, R> {
  batch: B;
  resolve: (r: R) => void;
  reject: (err: unknown) => void;
}

export class GroupCommit<B, R> {
  private pending: Pending<B, R>[] = [];
  /** Transactions committed, and the ingests they held. */
  readonly stats = { groups: 0, ingests: 0 };

  constructor(
    private readonly db: Database.Database,
    /** Writes one batch (inside the group's transaction: a nested better-sqlite3 transaction there is a savepoint). */
    private readonly writeOne: (batch: B) => R,
    /** The error an ingest is rejected with, for the error that failed it (or its whole group). */
    private readonly mapError: (err: unknown) => unknown,
    /** Called when a group has committed. */
    private readonly committed: () => void,
  ) {}

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
    const outcomes: ({ ok: true; value: R } | { ok: false; err: unknown })[] = [];
    try {
      this.db.transaction(() => {
        for (const p of group) {
          try {
            outcomes.push({ ok: true, value: this.writeOne(p.batch) });
          } catch (err) {
            // SQLite rolled the whole transaction back (a full disk, an I/O error): what the group wrote is gone.
            if (!this.db.inTransaction) throw err;
            outcomes.push({ ok: false, err });
          }
        }
      })();
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
}
