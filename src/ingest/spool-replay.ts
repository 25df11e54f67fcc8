/**
 * A Client's replay through the on-disk spool (spool.ts holds the files): which
 * of its runs have ops waiting there, so per-run order holds across memory and
 * disk; spilling when memory is full; writing batches that kept failing (with
 * a due time) and everything left on exit; reading segments back as the queue
 * drains, with a timer for segments not yet due; and releasing a segment only
 * when every op read from it is delivered or dead-lettered.
 *
 * What it guarantees: an op never replays before an older op of its run that
 * this client spooled (newer ops are written behind it, or an older op is
 * written ahead of them); disk trouble never throws, and every op the spool
 * cannot take is counted in stats.dropped with a warning.
 */
import { MAX_TIMER_MS } from "../internal/sleep.js";
import type { ClientOptions } from "./config.js";
import type { ClientState } from "./client-state.js";
import { finalize, type Op } from "./ops.js";
import { keyOf, Spool } from "./spool.js";

/** Where a run's newest spooled op is, so a newer op of the run can be put behind it. */
export interface SpooledEntry {
  /** The due time of its segment. */
  due: number;
  /** In the segment still being written (spilled for lack of memory), not a sealed retry segment. */
  open: boolean;
  /** Ops of the run this client spooled and has not read back. */
  n: number;
}

/**
 * Spooled runs tracked one by one (for update order) before new ops simply all
 * go behind them: about 160 bytes each, so tracking stays within a tenth of
 * the queue's memory bound (16 MiB: ~10k runs), and never under 1000.
 */
function maxTrackedRuns(maxQueueBytes: number): number {
  return Math.max(1000, Math.floor(maxQueueBytes / 1600));
}

export class SpoolReplay {
  private readonly spool: Spool;
  /** Runs with an op in the spool put there by this client and not read back yet. */
  private readonly spooledRuns = new Map<string, SpooledEntry>();
  /** Ops per claimed spool segment not yet accounted for. */
  private readonly segmentOps = new Map<string, number>();
  /** Set while spilled runs are not tracked one by one (see maxTrackedRuns): the due time of the segment where that began. */
  private untrackedSince?: number;
  /** Ops this client spilled to the spool (for lack of memory) and will read back before flush() resolves. */
  spilled = 0;
  /** Spilled ops per spool segment (by key), so reading a segment back settles its share of `spilled`. */
  private readonly spillKeys = new Map<string, number>();
  /** Whether the spool directory may hold something to replay; avoids listing it after every batch. */
  mayHaveWork = true;
  private replayTimer?: { at: number; t: NodeJS.Timeout };

  constructor(
    private readonly state: ClientState,
    private readonly valueLimits: ClientOptions["valueLimits"],
    /** A segment not yet due became due: read the spool again. */
    private readonly onDue: () => void,
  ) {
    this.spool = new Spool(state.options.spoolDir, { warn: (m) => state.warnOnce(m) });
  }

  /** The directory written to now (the configured one, or its tmpdir fallback), for warnings. */
  /** Whether a spool directory can be made: without one, what would be spooled is dropped. */
  get writable(): boolean {
    return this.spool.usable();
  }

  get writeDir(): string {
    return this.spool.writeDir ?? this.state.options.spoolDir;
  }

  /** Ops waiting in the spool now, written by this or any earlier process. */
  pendingOps(): number {
    return this.spool.pendingOps();
  }

  /** The spooled op a new op of run `id` must go behind: a tracked one, or (past maxTrackedRuns) the spilled ops as a whole. */
  behind(id: string): SpooledEntry | undefined {
    const spooled = this.spooledRuns.get(id);
    if (spooled || this.untrackedSince !== undefined) return spooled ?? { due: this.untrackedSince!, open: true, n: 0 };
    return undefined;
  }

  /** An older op of this run waits in the spool (or may): this one goes right behind it. */
  putBehind(op: Op, entry: SpooledEntry): void {
    finalize(op, this.valueLimits);
    // Spilled ops sit in the open segment, and anything appended now lands after them;
    // a sealed retry segment is followed by one with the same due time and a later sequence.
    const ok = entry.open ? this.spill(op) !== undefined : this.spool.appendSealed([op], entry.due);
    if (!ok) return this.state.drop(1, `tracepipe: the spool is not writable; runs are being dropped`);
    if (!entry.open) {
      this.state.stats.spooled++;
      this.state.stats.inSpool++;
    }
    entry.n++;
    this.mayHaveWork = true;
  }

  /** Memory is bounded: spill to disk rather than drop. The spool is read back as the queue drains. */
  overflow(op: Op): void {
    finalize(op, this.valueLimits);
    const at = this.spill(op);
    if (at === undefined) return this.state.drop(1, `tracepipe: the queue is full and the spool is not writable; runs are being dropped`);
    if (this.spooledRuns.size >= maxTrackedRuns(this.state.options.maxQueueBytes)) {
      // Tracking every spilled run would make memory grow with the outage. Past this many,
      // everything new goes behind the spilled ops, in file order, until they are read back.
      this.untrackedSince = at;
      return;
    }
    this.spooledRuns.set(op.id, { due: at, open: true, n: 1 });
  }

  /** Write one op to the open spool segment, to be read back as the queue drains. Returns the segment's due time. */
  private spill(op: Op): number | undefined {
    const at = this.spool.append([op]);
    if (!at) return undefined;
    this.spillKeys.set(at.key, (this.spillKeys.get(at.key) ?? 0) + 1);
    this.spilled++;
    this.mayHaveWork = true;
    this.state.stats.spooled++;
    this.state.stats.inSpool++;
    return at.due;
  }

  /**
   * Claim due segments, enough for `want` ops; arm a timer for one not yet
   * due when none is. The caller checks mayHaveWork first and settles each
   * claimed segment with settle().
   */
  claim(want: number): { segment: string; ops: Op[] }[] {
    let claimed = this.spool.claim(want);
    if (claimed.length === 0 && this.spilled > 0) {
      // Spilled ops may still sit in the segment being written: seal it so it can be read back.
      this.spool.seal();
      for (const e of this.spooledRuns.values()) e.open = false;
      claimed = this.spool.claim(want);
    }
    if (claimed.length === 0) {
      if (this.spilled > 0) {
        // Sealed and still not claimable: another process sharing the spool took them.
        this.spilled = 0;
        this.spillKeys.clear();
        this.untrackedSince = undefined;
      }
      this.mayHaveWork = false;
      if (this.spool.nextDueAt !== undefined) this.armReplayTimer(this.spool.nextDueAt);
    }
    return claimed;
  }

  /**
   * A claimed segment was read back: its ops are no longer in the spool for
   * ordering's sake and will be released by account() once done with. False
   * when it held no ops (released at once: nothing to queue).
   */
  settle(segment: string, ops: Op[]): boolean {
    this.state.stats.inSpool = Math.max(0, this.state.stats.inSpool - ops.length);
    if (ops.length === 0) {
      this.spool.release(segment);
      return false;
    }
    this.segmentOps.set(segment, ops.length);
    const key = keyOf(segment);
    const mine = this.spillKeys.get(key);
    if (mine !== undefined) {
      this.spillKeys.delete(key);
      this.spilled = Math.max(0, this.spilled - mine);
      if (this.spilled === 0) this.untrackedSince = undefined;
    }
    for (const op of ops) {
      const e = this.spooledRuns.get(op.id);
      if (e && --e.n <= 0) this.spooledRuns.delete(op.id);
    }
    return true;
  }

  /** The flush that held back the batches failing under it is over: they are read back when due. */
  releaseHeld(): void {
    if (!this.spool.releaseHeld()) return;
    this.mayHaveWork = true;
    this.armReplayTimer(Date.now());
  }

  /** Spooled ops not yet due are replayed when they are, by whichever client is alive then. */
  private armReplayTimer(at: number): void {
    if (this.state.closed || this.state.abandoned) return;
    if (this.replayTimer && this.replayTimer.at <= at) return;
    if (this.replayTimer) clearTimeout(this.replayTimer.t);
    const t = setTimeout(
      () => {
        this.replayTimer = undefined;
        this.mayHaveWork = true;
        this.onDue();
      },
      // A due time past a timer's range wakes early and arms again (see sleep.ts).
      Math.min(MAX_TIMER_MS, Math.max(10, at - Date.now() + 10)),
    );
    // The spool outlives the process; waiting for a retry time must not keep it alive.
    t.unref();
    this.replayTimer = { at, t };
  }

  /**
   * Write a batch that kept failing, due at `due` (its runs' parked successors
   * already folded in). A run with newer ops already in the spool (written
   * behind an earlier try of this op) goes just before them, not at the new
   * due time, or they would replay first. With `hold` (a flush is waiting),
   * not read back until releaseHeld(): see Spool.appendSealed.
   */
  retry(batch: Op[], due: number, target: string, hold = false): void {
    const groups = this.groupByDue(batch, due);
    this.account(batch);
    for (const [at, ops] of groups) {
      if (!this.spool.appendSealed(ops, at, hold)) {
        this.state.drop(ops.length, `tracepipe: ${target} kept failing and the spool is not writable; runs were dropped`);
        continue;
      }
      this.state.stats.spooled += ops.length;
      this.state.stats.inSpool += ops.length;
      for (const op of ops) {
        const e = this.spooledRuns.get(op.id);
        if (e) e.n++;
        else this.spooledRuns.set(op.id, { due: at, open: false, n: 1 });
      }
    }
    this.mayHaveWork = true;
    for (const at of groups.keys()) this.armReplayTimer(at);
  }

  /**
   * Ops by the due time to write them at: `due`, or just before the newest
   * spooled op of their run (or the untracked spilled ops) when that is
   * earlier, so they replay ahead of their run's newer ops already on disk.
   */
  private groupByDue(ops: Iterable<Op>, due: number): Map<number, Op[]> {
    const groups = new Map<number, Op[]>();
    for (const op of ops) {
      const after = this.spooledRuns.get(op.id)?.due ?? this.untrackedSince;
      const at = after !== undefined ? Math.min(due, after - 1) : due;
      const g = groups.get(at);
      if (g) g.push(op);
      else groups.set(at, [op]);
    }
    return groups;
  }

  /** These ops are done with: release spool segments whose ops are all accounted for. */
  account(batch: Op[]): void {
    for (const op of batch) {
      for (const seg of op.segments ?? []) {
        const left = (this.segmentOps.get(seg) ?? 1) - 1;
        if (left <= 0) {
          this.segmentOps.delete(seg);
          this.spool.release(seg);
        } else this.segmentOps.set(seg, left);
      }
      op.segments = undefined;
    }
  }

  /**
   * The process is exiting (or shutdown ran out of time): write the client's
   * last ops, one per run, due now; a run whose older op is already in the
   * spool is written with an earlier due time, so it replays before that op's
   * successors. Segments read back are released only when all was written
   * (their ops are in the new segments); otherwise they stay to replay again.
   */
  writeAll(byId: Map<string, Op>): void {
    const groups = this.groupByDue(byId.values(), Date.now());
    let written = 0;
    for (const [due, ops] of groups)
      if (this.spool.appendSealed(ops, due)) written += ops.length;
      else this.state.drop(ops.length, "tracepipe: the spool is not writable; runs still in memory were dropped");
    this.state.stats.spooled += written;
    if (written === byId.size) for (const seg of this.segmentOps.keys()) this.spool.release(seg);
    this.segmentOps.clear();
  }

  /** Close the segment being written, so it can be read back (or by the next process). */
  seal(): void {
    this.spool.seal();
  }

  /** shutdown(): no more replays from this client; what is left waits for the next one. */
  stop(): void {
    if (this.replayTimer) clearTimeout(this.replayTimer.t);
    this.replayTimer = undefined;
    this.spool.seal();
  }
}
