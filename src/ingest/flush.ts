/**
 * What flush() and whenRoom() wait on, and what flush() reports. Waiting is
 * by callbacks the client wakes when its state changes (no polling), and a
 * flush() that times out stops waiting without cancelling delivery: what is
 * left keeps going (or, for shutdown, is spooled by the caller). The result
 * counts what is not delivered, so a serverless handler can tell "all sent"
 * from "spooled for later" from "lost".
 */
import type { ClientStats } from "./client-state.js";

export interface FlushResult {
  /** Every op handed over so far was delivered or dead-lettered; none waits, none was dropped. */
  ok: boolean;
  /** The timeout passed first. */
  timedOut: boolean;
  /** Ops still queued or in flight (only after a timeout). */
  pending: number;
  /** Ops waiting in the spool for a later retry: undelivered. */
  spooled: number;
  /** Ops dropped since the client started (see ClientStats.dropped). */
  dropped: number;
  /** Ops dead-lettered since the client started. */
  deadLettered: number;
}

export interface FlushOptions {
  /** Stop waiting after this long; what is left keeps going (flush) or is spooled (shutdown). */
  timeoutMs?: number;
}

/** The result of a flush() or shutdown(), from the counters as they stand (stats.inSpool refreshed by the caller). */
export function flushResult(stats: ClientStats, pending: number, timedOut: boolean): FlushResult {
  const spooled = stats.inSpool;
  return {
    ok: pending === 0 && spooled === 0 && stats.dropped === 0,
    timedOut,
    pending,
    spooled,
    dropped: stats.dropped,
    deadLettered: stats.deadLettered,
  };
}

export class Waiters {
  /** flush() calls waiting for the client to have no work left. */
  private idle: (() => void)[] = [];
  /** whenRoom() calls waiting for room in the in-memory queue. */
  private room: (() => void)[] = [];

  /** A flush() or shutdown() is waiting for delivery (partial batches then go at once). */
  get awaited(): boolean {
    return this.idle.length > 0;
  }

  get roomAwaited(): boolean {
    return this.room.length > 0;
  }

  untilRoom(): Promise<void> {
    return new Promise((resolve) => this.room.push(resolve));
  }

  wakeRoom(): void {
    const w = this.room;
    this.room = [];
    for (const fn of w) fn();
  }

  wakeIdle(): void {
    const w = this.idle;
    this.idle = [];
    for (const fn of w) fn();
  }

  /**
   * Register as waiting for idle, call `start` (which may find the client
   * idle at once and wake it), then wait for wakeIdle() or `timeoutMs`.
   * Resolves true when the timeout came first; the waiter is then forgotten.
   */
  async untilIdle(timeoutMs: number | undefined, start: () => void): Promise<boolean> {
    let waiter!: () => void;
    const done = new Promise<void>((resolve) => this.idle.push((waiter = resolve)));
    start();
    if (timeoutMs === undefined) {
      await done;
      return false;
    }
    let t: NodeJS.Timeout | undefined;
    const expired = new Promise<boolean>((resolve) => (t = setTimeout(() => resolve(true), Math.max(0, timeoutMs))));
    const timedOut = await Promise.race([done.then(() => false), expired]);
    clearTimeout(t);
    if (timedOut) this.idle = this.idle.filter((w) => w !== waiter);
    return timedOut;
  }
}
