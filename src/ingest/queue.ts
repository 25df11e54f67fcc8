/**
 * The in-memory side of a Client's queue: ops waiting to be sent, in the order
 * they were made, with per-run ordering. A run has at most
 * one unsent op in memory: a newer op of the run merges into it (newest fields
 * win), so a burst of updates goes out as one op. While an older op of
 * a run is in flight (sending or waiting to retry), the newer one is parked
 * here and joins the queue only when the older is done with, so it can never
 * overtake it. Batches are taken from the front, bounded by count and bytes.
 *
 * Pure bookkeeping: no timers, no I/O. Routing an op to the spool instead
 * (memory full, or an older op of its run waits there) is the Client's call.
 */
import type { ClientOptions } from "./config.js";
import { finalize, mergeOps, type Op } from "./ops.js";
import type { SinkLimits } from "./sink.js";

export class RunQueue {
  /** Ops ready to send, oldest first. */
  ops: Op[] = [];
  /** Bytes of ops held in memory: queued and parked. */
  bytes = 0;
  /** The unsent op of each run (queued or parked): a newer op of the run merges into it. */
  private readonly unsent = new Map<string, Op>();
  /** Ops whose run has an older op in flight; they go to the queue when it is done with. */
  readonly parked = new Map<string, Op>();
  /** Runs with an op in flight (sending or waiting to retry). */
  private readonly busy = new Set<string>();

  /** Ops held in memory, queued or parked (what stats.queued counts). */
  get held(): number {
    return this.ops.length + this.parked.size;
  }

  /** Merge `op` into the unsent op of its run, if there is one. */
  mergeIntoUnsent(op: Op): boolean {
    const waiting = this.unsent.get(op.id);
    if (!waiting) return false;
    const before = waiting.bytes;
    mergeOps(waiting, op);
    this.bytes += waiting.bytes - before;
    return true;
  }

  /** Hold a new op: parked behind its run's op in flight, or queued. True when it was queued (ready to send). */
  add(op: Op): boolean {
    this.unsent.set(op.id, op);
    this.bytes += op.bytes;
    if (this.busy.has(op.id)) {
      this.parked.set(op.id, op);
      return false;
    }
    this.ops.push(op);
    return true;
  }

  /** Take a batch from the front, within the limits; its runs count as in flight until release(). */
  take(limits: SinkLimits, valueLimits: ClientOptions["valueLimits"]): Op[] {
    const batch: Op[] = [];
    let bytes = 0;
    while (this.ops.length && batch.length < limits.batchSize) {
      const op = this.ops[0]!;
      if (batch.length > 0 && bytes + op.bytes > limits.batchBytes) break;
      this.ops.shift();
      this.bytes -= op.bytes;
      if (this.unsent.get(op.id) === op) this.unsent.delete(op.id);
      this.busy.add(op.id);
      batch.push(finalize(op, valueLimits));
      bytes += op.bytes;
    }
    return batch;
  }

  /** The run's op in flight is done with: its parked successor joins the queue. True when one did. */
  release(id: string): boolean {
    this.busy.delete(id);
    const next = this.parked.get(id);
    if (!next) return false;
    this.parked.delete(id);
    this.ops.push(next);
    return true;
  }

  /** Take the parked successor of a run out of memory (to be folded into its older op, which goes to the spool). */
  unpark(id: string): Op | undefined {
    const next = this.parked.get(id);
    if (!next) return undefined;
    this.parked.delete(id);
    this.unsent.delete(id);
    this.bytes -= next.bytes;
    return next;
  }

  /** Forget every op held: they were written to the spool. Runs in flight stay marked busy. */
  clear(): void {
    this.ops = [];
    this.parked.clear();
    this.unsent.clear();
    this.bytes = 0;
  }
}
