/**
 * One batch, from the moment it leaves the queue to its end: delivered,
 * bisected, dead-lettered, or spooled for a later retry. Retryable failures
 * wait with backoff (full jitter, Retry-After honoured: retry.ts) up to
 * `maxAttempts` (a Retry-After past LONGEST_WAIT_IN_MEMORY_MS, or the
 * backoff's ceiling when higher, is waited out in the spool, not in memory); a refused batch is bisected so one bad run ends up alone in
 * the dead-letter file while the others arrive. Whatever happens, the batch's
 * spool segments are accounted for and nothing rejects into the host: the
 * pump (pump.ts) only learns that the batch is done with.
 */
import { sleep } from "../internal/sleep.js";
import type { ClientState } from "./client-state.js";
import type { ClientOptions } from "./config.js";
import type { DeadLetterFile } from "./deadletter.js";
import { finalize, mergeOps, type Op } from "./ops.js";
import type { RunQueue } from "./queue.js";
import { backoffMs } from "../internal/retry.js";
import { SinkError, type Sink } from "./sink.js";
import type { SpoolReplay } from "./spool-replay.js";

/** A server's Retry-After up to this (or up to the backoff's ceiling, when higher) is waited out in memory. */
export const LONGEST_WAIT_IN_MEMORY_MS = 30_000;

export class BatchDelivery {
  constructor(
    private readonly state: ClientState,
    private readonly sink: Sink,
    private readonly queue: RunQueue,
    private readonly spoolReplay: SpoolReplay,
    private readonly deadLetters: DeadLetterFile,
    private readonly backoff: ClientOptions["backoff"],
    private readonly valueLimits: ClientOptions["valueLimits"],
    /** Whether a flush() or shutdown() is waiting for delivery. */
    private readonly awaited: () => boolean,
  ) {}

  /** One batch, to the end: delivered, split, dead-lettered or spooled. Never rejects. */
  async deliver(batch: Op[]): Promise<void> {
    try {
      await this.attempt(batch);
    } catch (err) {
      // attempt() handles every failure it knows; this is the last guard for the host.
      this.state.warnOnce(`tracepipe: delivery failed unexpectedly (${(err as Error)?.message ?? String(err)}); the batch was spooled`);
      try {
        this.spoolForRetry(batch, this.backoff?.maxMs ?? 30_000);
      } catch {
        this.state.drop(batch.length, "tracepipe: a batch could be neither delivered nor spooled; it was dropped");
      }
    }
  }

  private async attempt(batch: Op[]): Promise<void> {
    const { stats } = this.state;
    for (let attempt = 0; ; attempt++) {
      if (this.state.abandoned) return; // already in the spool (exit, or shutdown past its timeout)
      try {
        stats.requests++;
        await this.sink.send(batch, this.state.stopper.signal);
        stats.delivered += batch.length;
        this.spoolReplay.account(batch);
        return;
      } catch (err) {
        const e = err instanceof SinkError ? err : new SinkError(String((err as Error)?.message ?? err), "retry");
        if (this.state.abandoned) return;
        // A refused batch (413 too large, or 400/422 for one bad run) is bisected, so one bad
        // run ends up alone in the dead-letter file and the others still arrive.
        if (e.kind === "split" || (e.kind === "fatal" && batch.length > 1 && (e.status === 400 || e.status === 422))) {
          if (batch.length === 1) return this.deadLetter(batch, e);
          const mid = Math.ceil(batch.length / 2);
          await this.attempt(batch.slice(0, mid));
          await this.attempt(batch.slice(mid));
          return;
        }
        if (e.kind === "fatal") return this.deadLetter(batch, e);
        const ceiling = this.backoff?.maxMs ?? 30_000;
        if (e.retryAfterMs !== undefined && e.retryAfterMs > Math.max(ceiling, LONGEST_WAIT_IN_MEMORY_MS) && this.spoolReplay.writable) {
          // The server asks for a longer pause than this client waits in memory: the batch waits in the
          // spool instead, due when the server said, so neither the host's memory nor a flush() is held.
          // With no writable spool it waits in memory as before: spooling would drop it.
          this.spoolForRetry(batch, e.retryAfterMs);
          this.state.warnOnce(
            `tracepipe: ${this.sink.target} asked to wait ${Math.round(e.retryAfterMs / 1000)} s (Retry-After); runs were spooled to ${this.spoolReplay.writeDir} and will be sent then`,
          );
          return;
        }
        if (attempt + 1 >= this.state.options.maxAttempts || this.state.closed) {
          // Out of patience (or shutting down): keep the batch on disk and try again later.
          this.spoolForRetry(batch, ceiling);
          this.state.warnOnce(
            `tracepipe: ${this.sink.target} kept failing (${e.message}); runs were spooled to ${this.spoolReplay.writeDir} and will be retried`,
          );
          return;
        }
        stats.retried += batch.length;
        // Nobody awaiting delivery (no flush/shutdown): the backoff alone must not keep the host
        // alive; when its work is done, beforeExit delivers or spools within exitTimeoutMs.
        await sleep(backoffMs(attempt, this.backoff, e.retryAfterMs), this.state.stopper.signal, !this.awaited()).catch(() => undefined);
      }
    }
  }

  /**
   * Put a batch that kept failing in the spool, due after `delayMs`. A newer
   * op of the same run parked behind it is folded in first (newest fields
   * win), and newer ops that come later are spooled behind it, so its retry
   * can never land after them.
   */
  private spoolForRetry(batch: Op[], delayMs: number): void {
    const due = Date.now() + delayMs;
    for (const op of batch) {
      const next = this.queue.unpark(op.id);
      if (!next) continue;
      finalize(next, this.valueLimits);
      mergeOps(op, next);
    }
    // Under a flush, held back until it ends (see Spool.appendSealed).
    this.spoolReplay.retry(batch, due, this.sink.target, this.awaited());
  }

  private deadLetter(batch: Op[], e: SinkError): void {
    const ok = this.deadLetters.write({
      endpoint: this.sink.target,
      status: e.status,
      detail: e.detail,
      error: e.message,
      runs: batch.map((o) => ({ kind: o.kind, id: o.id, run: o.run })),
    });
    if (ok) {
      this.state.stats.deadLettered += batch.length;
      this.state.warnOnce(`tracepipe: ${this.sink.target} refused a batch (${e.message}); it was written to ${this.deadLetters.writePath}`);
    } else
      this.state.drop(
        batch.length,
        `tracepipe: ${this.sink.target} refused a batch (${e.message}) and the dead-letter file is not writable; it was dropped`,
      );
    this.spoolReplay.account(batch);
  }
}
