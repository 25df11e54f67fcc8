/**
 * When batches leave the queue: at most `concurrency` in flight, a full batch
 * at once, a partial one only after `flushIntervalMs` or while a flush() waits.
 * Batching this way keeps a steady trickle of runs from becoming a request per
 * run (each request counts against SPEC §8's rate budget and costs the host
 * CPU). Batch limits come from the sink (GET /info) before the first batch.
 * When a batch is done with, its runs' parked successors join the queue and
 * the spool is read back as memory frees up.
 */
import type { ClientState } from "./client-state.js";
import type { ClientOptions } from "./config.js";
import type { BatchDelivery } from "./delivery.js";
import { released, type Op } from "./ops.js";
import type { RunQueue } from "./queue.js";
import type { Sink, SinkLimits } from "./sink.js";

/** What the pump needs of the client around it. */
export interface PumpHost {
  /** A flush() or shutdown() is waiting for delivery. */
  awaited(): boolean;
  /** Read due spool segments into the queue, if memory allows. */
  replay(): void;
  /** Queue or flight changed: refresh stats and wake waiters whose condition now holds. */
  notify(): void;
}

export class Pump {
  readonly inFlight = new Set<Op[]>();
  private timer?: NodeJS.Timeout;
  /** A pump is already queued as a microtask (see schedule). */
  private pumpQueued = false;
  private limits?: SinkLimits;
  private limitsLoading?: Promise<SinkLimits>;

  constructor(
    private readonly state: ClientState,
    private readonly sink: Sink,
    private readonly queue: RunQueue,
    private readonly delivery: BatchDelivery,
    private readonly valueLimits: ClientOptions["valueLimits"],
    private readonly host: PumpHost,
  ) {}

  /** Most runs per batch: the sink's limit once read, the configured one until then. */
  get batchSize(): number {
    return this.limits?.batchSize ?? this.state.options.batchSize;
  }

  /** Ops in flight now, across batches. */
  inFlightOps(): number {
    let n = 0;
    for (const b of this.inFlight) n += b.length;
    return n;
  }

  /** Ops were queued: send now if a batch is full or a flush() waits, else when the flush interval passes. */
  schedule(): void {
    if (this.queue.ops.length >= this.batchSize || this.host.awaited()) {
      // A full batch, or a flush() waiting: no reason to wait for company. One pump per burst of
      // ops (a span processor hands over hundreds in one turn), not a microtask per op.
      if (this.pumpQueued) return;
      this.pumpQueued = true;
      queueMicrotask(() => {
        this.pumpQueued = false;
        this.pump(this.host.awaited());
      });
      return;
    }
    this.armTimer();
  }

  /** A partial batch goes out when the flush interval has passed (or on flush()), never sooner. */
  private armTimer(): void {
    if (!this.timer && this.queue.ops.length > 0) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.pump(true);
      }, this.state.options.flushIntervalMs);
      // A pending partial batch must not keep the process alive on its own: beforeExit flushes it.
      this.timer.unref();
    }
  }

  /** flush() sends partial batches itself: the interval timer has nothing left to do. */
  stopTimer(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  private async loadLimits(): Promise<SinkLimits> {
    if (this.limits) return this.limits;
    this.limitsLoading ??= this.sink.limits().then(
      (l) => (this.limits = l),
      (err) => {
        this.state.warnOnce(
          `tracepipe: could not read batch limits from ${this.sink.target} (${(err as Error).message}); using the defaults`,
        );
        return (this.limits = { batchSize: this.state.options.batchSize, batchBytes: this.state.options.batchBytes });
      },
    );
    return this.limitsLoading;
  }

  /**
   * Start batches while there is room in flight. Full batches always go; a
   * partial one only when `partial` (the flush interval passed, or a flush()
   * is waiting). Sending partial batches whenever a slot frees up would turn a
   * steady trickle of runs into a request per run or two: more requests
   * against the 6000 / 10 s budget and more CPU in the caller's process.
   */
  pump(partial: boolean): void {
    if (!this.limits) {
      void this.loadLimits().then(
        () => this.pump(partial),
        () => this.pump(partial),
      );
      return;
    }
    while (this.inFlight.size < this.state.options.concurrency) {
      if (this.queue.ops.length === 0) this.host.replay();
      if (this.queue.ops.length === 0) break;
      if (!partial && !this.host.awaited() && this.queue.ops.length < this.limits.batchSize && this.queue.bytes < this.limits.batchBytes) {
        this.armTimer();
        break;
      }
      const batch = this.queue.take(this.limits, this.valueLimits);
      this.inFlight.add(batch);
      void this.delivery.deliver(batch).finally(() => {
        this.inFlight.delete(batch);
        for (const op of batch) {
          // Delivered, or its run was read to be dead-lettered or spooled: its bytes may be reused.
          released(op);
          this.release(op.id);
        }
        if (this.queue.ops.length) this.pump(false);
        else this.host.replay();
        this.host.notify();
      });
    }
    this.host.notify();
  }

  /** The run's op in flight is done with: its parked successor may go. */
  private release(id: string): void {
    if (this.queue.release(id)) this.schedule();
  }
}
