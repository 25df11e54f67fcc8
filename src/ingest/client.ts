/**
 * The ingest Client: every run handed to it reaches the sink exactly once by
 * id (at-least-once delivery into an idempotent store), as fast as SPEC §8
 * allows and no faster.
 *
 *   const client = new Client({ endpoint: "http://127.0.0.1:8484", apiKey });
 *   client.createRun(run); client.updateRun(run.id, { end_time, outputs });
 *   await client.flush();          // serverless: before the handler returns
 *
 * Flow: createRun/updateRun queue an op (a create and an update of one id that
 * meet in the queue become one post). Batches bounded by count and bytes go to
 * the sink, `concurrency` at a time. A failed batch is retried with backoff
 * (Retry-After honoured), split on 413, dead-lettered on other 4xx, and spooled
 * to disk after `maxAttempts`. Past `maxQueueBytes` new ops go to the spool
 * instead of memory. On exit, whatever is left is spooled; the next Client
 * replays the spool.
 */
import type { Run, RunPatch } from "../run/schema.js";
import type { RunWriter } from "../run/writer.js";
import { MemoryRateLimiter, sleep } from "../ratelimit/limiter.js";
import { resolveOptions, type ClientOptions, type ResolvedOptions } from "./config.js";
import { DeadLetterFile } from "./deadletter.js";
import { EmbeddedSink } from "./embedded-sink.js";
import { HttpSink } from "./http-sink.js";
import { freeEncoders } from "../tokens/index.js";
import { finalize, mergeInto, patchOp, postOp, type Attachments, type Op } from "./ops.js";
import { backoffMs } from "./retry.js";
import { SinkError, type Sink, type SinkLimits } from "./sink.js";
import { Spool } from "./spool.js";

export interface ClientStats {
  /** HTTP (or store) send attempts, retries included. */
  requests: number;
  queued: number;
  inFlight: number;
  delivered: number;
  retried: number;
  spooled: number;
  deadLettered: number;
}

let warnedOnce = new Set<string>();

export class Client implements RunWriter {
  readonly options: ResolvedOptions;
  readonly sink: Sink;
  private readonly spool: Spool;
  private readonly deadLetters: DeadLetterFile;
  private readonly warn: (msg: string) => void;
  private readonly backoff: ClientOptions["backoff"];

  private queue: Op[] = [];
  private queuedBytes = 0;
  /** Posts still waiting in the queue, by id, so an update can be folded into them. */
  private readonly waitingPosts = new Map<string, Op>();
  private readonly inFlight = new Set<Op[]>();
  /** Ops per claimed spool segment not yet accounted for. */
  private readonly segmentOps = new Map<string, number>();
  /** Ops written to the spool for lack of memory, not yet read back. */
  private spilled = 0;
  /** Whether the spool directory may hold something to replay; avoids listing it after every batch. */
  private spoolMayHaveWork = true;
  private timer?: NodeJS.Timeout;
  private retryTimer?: NodeJS.Timeout;
  private limits?: SinkLimits;
  private limitsLoading?: Promise<SinkLimits>;
  private waiters: (() => void)[] = [];
  private roomWaiters: (() => void)[] = [];
  private closed = false;
  private readonly onBeforeExit = () => {
    if (this.hasWork()) void this.flush();
  };
  private readonly onExit = () => this.spoolEverything();
  readonly stats: ClientStats = { requests: 0, queued: 0, inFlight: 0, delivered: 0, retried: 0, spooled: 0, deadLettered: 0 };

  constructor(opts: ClientOptions = {}) {
    this.options = resolveOptions(opts);
    this.warn = opts.warn ?? ((msg) => process.emitWarning(msg, "TracepipeWarning"));
    this.backoff = opts.backoff;
    this.sink =
      opts.sink ??
      (this.options.endpoint
        ? new HttpSink({
            endpoint: this.options.endpoint,
            apiKey: this.options.apiKey,
            limiter: opts.limiter ?? new MemoryRateLimiter(),
            rateLimit: opts.rateLimit,
            gzip: opts.gzip ?? "auto",
            defaults: { batchSize: this.options.batchSize, batchBytes: this.options.batchBytes },
            warn: (m) => this.warnOnce(m),
          })
        : new EmbeddedSink(this.options.dbPath));
    this.spool = new Spool(this.options.spoolDir);
    this.deadLetters = new DeadLetterFile(this.options.deadLetterPath);
    if (opts.exitHooks !== false) {
      process.setMaxListeners(process.getMaxListeners() + 2);
      process.on("beforeExit", this.onBeforeExit);
      process.on("exit", this.onExit);
    }
    // Runs spooled by an earlier process (or an earlier outage) go out first.
    this.replay();
  }

  private warnOnce(msg: string): void {
    if (warnedOnce.has(msg)) return;
    warnedOnce.add(msg);
    this.warn(msg);
  }

  // ---- producer side ----------------------------------------------------------------

  createRun(run: Run | (Record<string, unknown> & { id: string }), opts: { attachments?: Attachments } = {}): void {
    if (this.closed) throw new Error("Client is shut down");
    const r = run as Record<string, unknown>;
    const withProject = r.session_name === undefined ? { ...r, session_name: this.options.project } : { ...r };
    const op = postOp(withProject, opts.attachments);
    this.enqueue(op);
  }

  updateRun(id: string, patch: Omit<RunPatch, "id"> | Record<string, unknown>, opts: { attachments?: Attachments; prepare?: () => void } = {}): void {
    if (this.closed) throw new Error("Client is shut down");
    const op = patchOp(id, patch, opts.attachments);
    if (opts.prepare) op.prepare = [opts.prepare];
    const waiting = this.waitingPosts.get(id);
    if (waiting) {
      mergeInto(waiting, op);
      this.queuedBytes += op.bytes;
      return;
    }
    this.enqueue(op);
  }

  private enqueue(op: Op): void {
    if (this.queuedBytes + op.bytes > this.options.maxQueueBytes) {
      // Memory is bounded: spill to disk rather than drop. The spool is read back as the queue drains.
      this.spool.append([finalize(op)]);
      this.spilled++;
      this.spoolMayHaveWork = true;
      this.stats.spooled++;
      return;
    }
    this.queue.push(op);
    this.queuedBytes += op.bytes;
    if (op.kind === "post") this.waitingPosts.set(op.id, op);
    this.schedule();
  }

  // ---- delivery -----------------------------------------------------------------------

  private schedule(): void {
    const batchSize = this.limits?.batchSize ?? this.options.batchSize;
    if (this.queue.length >= batchSize) {
      queueMicrotask(() => this.pump(false));
      return;
    }
    this.armTimer();
  }

  /** A partial batch goes out when the flush interval has passed (or on flush()), never sooner. */
  private armTimer(): void {
    if (!this.timer && this.queue.length > 0) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.pump(true);
      }, this.options.flushIntervalMs);
      // A pending partial batch must not keep the process alive on its own: beforeExit flushes it.
      this.timer.unref();
    }
  }

  private async loadLimits(): Promise<SinkLimits> {
    if (this.limits) return this.limits;
    this.limitsLoading ??= this.sink.limits().then(
      (l) => (this.limits = l),
      (err) => {
        this.warnOnce(`tracepipe: could not read batch limits from ${this.sink.target} (${(err as Error).message}); using the defaults`);
        return (this.limits = { batchSize: this.options.batchSize, batchBytes: this.options.batchBytes });
      },
    );
    return this.limitsLoading;
  }

  private takeBatch(limits: SinkLimits): Op[] {
    const batch: Op[] = [];
    let bytes = 0;
    while (this.queue.length && batch.length < limits.batchSize) {
      const op = this.queue[0]!;
      if (batch.length > 0 && bytes + op.bytes > limits.batchBytes) break;
      this.queue.shift();
      this.queuedBytes -= op.bytes;
      if (op.kind === "post" && this.waitingPosts.get(op.id) === op) this.waitingPosts.delete(op.id);
      batch.push(finalize(op));
      bytes += op.bytes;
    }
    return batch;
  }

  /**
   * Start batches while there is room in flight. Full batches always go; a
   * partial one only when `partial` (the flush interval passed, or a flush()
   * is waiting). Sending partial batches whenever a slot frees up would turn a
   * steady trickle of runs into a request per run or two: more requests
   * against the 6000 / 10 s budget and more CPU in the caller's process.
   */
  private pump(partial: boolean): void {
    if (!this.limits) {
      void this.loadLimits().then(
        () => this.pump(partial),
        () => this.pump(partial),
      );
      return;
    }
    while (this.inFlight.size < this.options.concurrency) {
      if (this.queue.length === 0) this.replay();
      if (this.queue.length === 0) break;
      if (!partial && this.waiters.length === 0 && this.queue.length < this.limits.batchSize && this.queuedBytes < this.limits.batchBytes) {
        this.armTimer();
        break;
      }
      const batch = this.takeBatch(this.limits);
      this.inFlight.add(batch);
      void this.deliver(batch).finally(() => {
        this.inFlight.delete(batch);
        if (this.queue.length) this.pump(false);
        else this.replay();
        this.notify();
      });
    }
    this.notify();
  }

  /** Read the next spool segment into the queue when memory allows. */
  private replay(): void {
    if (!this.spoolMayHaveWork || this.queuedBytes > this.options.maxQueueBytes / 2) return;
    const claimed = this.spool.claim();
    if (!claimed) {
      if (this.spilled === 0) this.spoolMayHaveWork = false;
      // Spilled ops may still sit in the segment being written: seal it so it can be read back.
      if (this.spilled > 0) {
        this.spool.seal();
        const again = this.spool.claim();
        if (again) this.load(again.segment, again.ops);
      }
      return;
    }
    this.load(claimed.segment, claimed.ops);
  }

  private load(segment: string, ops: Op[]): void {
    if (ops.length === 0) {
      this.spool.release(segment);
      return;
    }
    this.segmentOps.set(segment, ops.length);
    this.spilled = Math.max(0, this.spilled - ops.length);
    for (const op of ops) {
      this.queue.push(op);
      this.queuedBytes += op.bytes;
    }
    this.schedule();
  }

  /** One batch, to the end: delivered, split, dead-lettered or spooled. */
  private async deliver(batch: Op[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        this.stats.requests++;
        await this.sink.send(batch);
        this.stats.delivered += batch.length;
        this.account(batch);
        return;
      } catch (err) {
        const e = err instanceof SinkError ? err : new SinkError(String((err as Error)?.message ?? err), "retry");
        // A refused batch (413 too large, or 400/422 for one bad run) is bisected, so one bad
        // run ends up alone in the dead-letter file and the others still arrive.
        if (e.kind === "split" || (e.kind === "fatal" && batch.length > 1 && (e.status === 400 || e.status === 422))) {
          if (batch.length === 1) return this.deadLetter(batch, e);
          const mid = Math.ceil(batch.length / 2);
          await this.deliver(batch.slice(0, mid));
          await this.deliver(batch.slice(mid));
          return;
        }
        if (e.kind === "fatal") return this.deadLetter(batch, e);
        if (attempt + 1 >= this.options.maxAttempts || this.closed) {
          // Out of patience (or shutting down): keep the batch on disk and try again later.
          const retryIn = this.backoff?.maxMs ?? 30_000;
          this.spool.appendSealed(batch, retryIn);
          this.stats.spooled += batch.length;
          this.spoolMayHaveWork = true;
          this.account(batch);
          this.warnOnce(`tracepipe: ${this.sink.target} kept failing (${e.message}); runs were spooled to ${this.options.spoolDir} and will be retried`);
          this.scheduleSpoolRetry();
          return;
        }
        this.stats.retried += batch.length;
        await sleep(backoffMs(attempt, this.backoff, e.retryAfterMs));
      }
    }
  }

  private scheduleSpoolRetry(): void {
    if (this.retryTimer || this.closed) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.spoolMayHaveWork = true;
      this.replay();
    }, (this.backoff?.maxMs ?? 30_000) + 10);
    this.retryTimer.unref();
  }

  private deadLetter(batch: Op[], e: SinkError): void {
    this.deadLetters.write({ endpoint: this.sink.target, status: e.status, detail: e.detail, error: e.message, runs: batch.map((o) => ({ kind: o.kind, id: o.id, run: o.run })) });
    this.stats.deadLettered += batch.length;
    this.warnOnce(`tracepipe: ${this.sink.target} refused a batch (${e.message}); it was written to ${this.options.deadLetterPath}`);
    this.account(batch);
  }

  /** These ops are done with: release spool segments whose ops are all accounted for. */
  private account(batch: Op[]): void {
    for (const op of batch) {
      if (!op.segment) continue;
      const left = (this.segmentOps.get(op.segment) ?? 1) - 1;
      if (left <= 0) {
        this.segmentOps.delete(op.segment);
        this.spool.release(op.segment);
      } else this.segmentOps.set(op.segment, left);
    }
  }

  // ---- flush, shutdown, exit ------------------------------------------------------------

  private hasWork(): boolean {
    return this.queue.length > 0 || this.inFlight.size > 0 || this.spilled > 0;
  }

  private hasRoom(): boolean {
    const batchSize = this.limits?.batchSize ?? this.options.batchSize;
    return this.queuedBytes < this.options.maxQueueBytes / 2 && this.queue.length < batchSize * this.options.concurrency * 4;
  }

  /**
   * Resolves when the in-memory queue has room (under half its byte bound and
   * a few batches per connection), so a bulk producer such as backfill can
   * pace itself to delivery instead of spilling to the spool.
   */
  whenRoom(): Promise<void> {
    if (this.hasRoom() || this.closed) return Promise.resolve();
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  private notify(): void {
    this.stats.queued = this.queue.length;
    this.stats.inFlight = this.inFlight.size;
    if (this.roomWaiters.length && this.hasRoom()) {
      const w = this.roomWaiters;
      this.roomWaiters = [];
      for (const fn of w) fn();
    }
    if (this.hasWork()) return;
    const w = this.waiters;
    this.waiters = [];
    for (const fn of w) fn();
  }

  /**
   * Resolves when every run handed over so far is delivered, dead-lettered, or
   * (after `maxAttempts`) spooled for a later retry. In serverless handlers,
   * `await client.flush()` before returning.
   */
  flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (!this.hasWork()) return Promise.resolve();
    const done = new Promise<void>((resolve) => this.waiters.push(resolve));
    this.pump(true);
    return done;
  }

  /**
   * Flush, then release the sink, timers, exit hooks and the token encoders
   * (tiktoken's WASM tables, tens of MB; they load again if anything estimates later).
   * The client takes no runs after this.
   */
  async shutdown(): Promise<void> {
    await this.flush();
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.spool.seal();
    process.off("beforeExit", this.onBeforeExit);
    process.off("exit", this.onExit);
    await this.sink.close();
    freeEncoders();
  }

  /** The process is exiting (no more async work): write everything undelivered to the spool. */
  private spoolEverything(): void {
    const ops = [...this.queue];
    for (const b of this.inFlight) ops.push(...b);
    if (ops.length === 0) {
      this.spool.seal();
      return;
    }
    // In-flight batches may also have arrived; the server is idempotent by id, so replaying them is safe.
    this.spool.seal();
    for (const op of ops) finalize(op);
    this.spool.appendSealed(ops);
    this.queue = [];
  }
}

/** For tests: forget which warnings were already printed. */
export function resetWarnings(): void {
  warnedOnce = new Set();
}
