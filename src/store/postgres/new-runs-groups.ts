/**
 * Group commit for the new-runs statement (new-runs.ts). A collector under
 * load receives many small batches at once; each sent as its own statement
 * costs the database a statement's fixed work (binding, executor start, the
 * rollup queue row, the commit) and the collector a round trip on a
 * connection of its own. So one statement of new runs runs at a time per
 * store; batches that come meanwhile wait, and the next statement writes all
 * of them together. A second statement (up to MAX_IN_FLIGHT) starts only when
 * a group waits that is closed (full, or followed by another), a load one
 * statement at a time cannot carry. An idle store sends a batch at once (no
 * delay); a loaded one sends fewer, larger statements. Several collectors on
 * one database each keep to this, so a load spread over more collectors
 * still reaches the database as few, large statements, not as each
 * collector's share cut into more of them.
 * When a statement ends, the next group's goes out before the ended one's
 * callers are answered (their answers wait for the event loop's next turn),
 * so the collector writes their replies while the database runs the next
 * statement instead of the database waiting for those replies.
 *
 * A grouped statement is all or nothing, as one batch's is: when it writes
 * every run, each batch of the group is done; when some key was stored
 * already (or a root run turns out to be in a thread) it writes only the
 * keys, and every batch of the group is merged the usual way, which inserts
 * a key without a run as a new run. A grouped statement that fails for a
 * reason other than the database being away is sent again batch by batch,
 * so one batch's bad value fails only that batch. Batches that share a run
 * id never share a statement (one statement cannot write a key twice).
 */
import { StoreUnavailableError } from "../../errors.js";
import { JSONCOL } from "../merge-rules.js";
import type { NewRunsBatch } from "./new-runs.js";
import type { PgPool } from "./pool.js";

/** Statements of new runs one store runs at once at most; the second only for a closed group (see above). */
export const MAX_IN_FLIGHT = 2;
/** Runs one grouped statement writes at most (a larger batch goes alone). */
export const MAX_GROUP_RUNS = 250;
/** Characters of JSON payload one grouped statement carries at most (a larger batch goes alone): the statement is a copy of them. */
export const MAX_GROUP_CHARS = 8 * 1024 * 1024;

/** Sends one statement of new runs; resolves to how many runs it wrote. */
export type SendNewRuns = (batch: NewRunsBatch) => Promise<number>;

interface Waiting {
  batch: NewRunsBatch;
  resolve: (written: boolean) => void;
  reject: (err: unknown) => void;
}

interface Group {
  members: Waiting[];
  ids: Set<string>;
  chars: number;
}

/** The characters of JSON payload a batch's rows carry. */
function payloadChars(batch: NewRunsBatch): number {
  let n = 0;
  for (const row of batch.rows.rows) for (const c of JSONCOL) if (typeof row[c] === "string") n += (row[c] as string).length;
  return n;
}

/** The batches of a group as one: rows and webhooks in turn, outcomes summed. */
export function combineBatches(batches: readonly NewRunsBatch[]): NewRunsBatch {
  if (batches.length === 1) return batches[0]!;
  const projects = new Set<string>();
  for (const b of batches) for (const p of b.rows.outcome.projects) projects.add(p);
  return {
    rows: {
      ids: batches.flatMap((b) => b.rows.ids),
      rows: batches.flatMap((b) => b.rows.rows),
      outcome: {
        created: batches.reduce((n, b) => n + b.rows.outcome.created, 0),
        updated: 0,
        completedRoots: batches.flatMap((b) => b.rows.outcome.completedRoots),
        projects,
      },
      threaded: batches.some((b) => b.rows.threaded),
    },
    webhooks: batches.flatMap((b) => b.webhooks),
  };
}

export class NewRunsGroups {
  private inFlight = 0;
  private readonly queue: Group[] = [];
  /** Who waits in drain() for the queue and the statements to be done. */
  private readonly drained: (() => void)[] = [];

  constructor(
    private readonly pool: PgPool,
    private readonly send: SendNewRuns,
    private readonly maxInFlight = MAX_IN_FLIGHT,
  ) {}

  /** Write `batch` as new runs, alone or with others; true when its runs were written, false when only its keys were. */
  write(batch: NewRunsBatch): Promise<boolean> {
    // Inside an open transaction the statement is part of it: never grouped with another caller's.
    if (this.pool.inTransaction()) return this.send(batch).then((n) => n === batch.rows.ids.length);
    return new Promise<boolean>((resolve, reject) => {
      this.enqueue({ batch, resolve, reject });
      this.pump();
    });
  }

  /**
   * Resolves once every batch written so far is sent and its caller settled
   * (each statement is bounded by the statement timeout); for closing the store.
   */
  drain(): Promise<void> {
    if (this.idle()) return Promise.resolve();
    return new Promise<void>((resolve) => this.drained.push(resolve));
  }

  private idle(): boolean {
    return this.inFlight === 0 && this.queue.length === 0;
  }

  private enqueue(w: Waiting): void {
    const last = this.queue.at(-1);
    const ids = w.batch.rows.ids;
    const chars = payloadChars(w.batch);
    const fits =
      last && last.ids.size + ids.length <= MAX_GROUP_RUNS && last.chars + chars <= MAX_GROUP_CHARS && !ids.some((id) => last.ids.has(id));
    if (fits) {
      last.members.push(w);
      last.chars += chars;
      for (const id of ids) last.ids.add(id);
    } else this.queue.push({ members: [w], ids: new Set(ids), chars });
  }

  private pump(): void {
    // With a statement running, the head group waits to grow unless a group behind it shows it cannot.
    while (this.inFlight < this.maxInFlight && (this.inFlight === 0 ? this.queue.length > 0 : this.queue.length > 1)) {
      const group = this.queue.shift()!;
      this.inFlight++;
      void this.sendGroup(group)
        .catch((err: unknown) => () => group.members.forEach((m) => m.reject(err)))
        .then((settle) => {
          this.inFlight--;
          this.pump();
          // The next statement goes out first: its callers' replies are written while the database runs it.
          setImmediate(() => {
            settle();
            if (this.idle()) this.drained.splice(0).forEach((resolve) => resolve());
          });
        });
    }
  }

  /** Sends a group; resolves, once its statements are done, to what settles its callers. */
  private async sendGroup(group: Group): Promise<() => void> {
    const { members } = group;
    if (members.length === 1) return this.sendAlone(members[0]!);
    const combined = combineBatches(members.map((m) => m.batch));
    let written: number;
    try {
      written = await this.send(combined);
    } catch (err) {
      if (err instanceof StoreUnavailableError) return () => members.forEach((m) => m.reject(err));
      // The statement wrote nothing: each batch again on its own, so only a bad one fails.
      const settles: (() => void)[] = [];
      for (const m of members) settles.push(await this.sendAlone(m));
      return () => settles.forEach((settle) => settle());
    }
    const all = written === combined.rows.ids.length;
    return () => members.forEach((m) => m.resolve(all));
  }

  private async sendAlone(m: Waiting): Promise<() => void> {
    try {
      const written = await this.send(m.batch);
      return () => m.resolve(written === m.batch.rows.ids.length);
    } catch (err) {
      return () => m.reject(err);
    }
  }
}
