/**
 * The ingest Client: every run handed to it reaches the sink exactly once by
 * id (at-least-once delivery into an idempotent store), as fast as SPEC §8
 * allows and no faster, and nothing it does throws into the host.
 *
 *   const client = new Client({ endpoint: "http://127.0.0.1:8484", apiKey });
 *   client.createRun(run); client.updateRun(run.id, { end_time, outputs });
 *   client.createFeedback(run.id, "thumbs_up", { score: 1 });
 *   await client.flush({ timeoutMs: 2000 });   // serverless: before the handler returns
 *
 * Flow: createRun/updateRun make the value safe (src/run/safe.ts) and queue an
 * op. Ops of one run never overtake each other: a newer op
 * merges into an older one still waiting, waits ("parked") while an older one
 * is in flight or retrying, and follows an older one into the spool. Batches
 * bounded by count and bytes go to the sink, `concurrency` at a time. A failed
 * batch is retried with backoff (Retry-After honoured), split on 413,
 * dead-lettered on other 4xx, and spooled to disk after `maxAttempts`. Past
 * `maxQueueBytes` new ops go to the spool instead of memory. On exit, whatever
 * is left is spooled; the next Client (or a timer, for segments not yet due)
 * replays the spool.
 *
 * This class is the public API and the wiring; each idea has its own module:
 *   client-state.ts  counters (stats), warnings, the closed/abandoned flags
 *   queue.ts         in-memory per-run ordering, merging, batching
 *   pump.ts          when batches go: concurrency, flush interval, sink limits
 *   delivery.ts      one batch to its end: retry/backoff, bisect, dead-letter
 *   spool-replay.ts  this client's use of the spool: spill, retry, replay, exit
 *   flush.ts         flush()/whenRoom() waiters and the FlushResult
 *   exit.ts          beforeExit/exit hooks bounded by exitTimeoutMs
 * Routing an op (enqueue) stays here because it is where memory and spool meet.
 */
import { applyPrivacy, Sampler, type PrivacyOptions } from "./privacy.js";
import type { Run, RunPatch } from "../run/schema.js";
import type { RunWriter } from "../run/writer.js";
import { MemoryRateLimiter } from "../ratelimit/limiter.js";
import { resolveOptions, type ClientOptions, type ResolvedOptions } from "./config.js";
import { DeadLetterFile } from "./deadletter.js";
import { EmbeddedSink } from "./embedded-sink.js";
import { HttpSink } from "./http-sink.js";
import { freeEncoders } from "../tokens/index.js";
import { encodedOp, feedbackOp, finalize, mergeOps, patchOp, postOp, type Attachments, type Op } from "./ops.js";
import { feedbackRecord, type FeedbackOptions } from "../run/feedback-record.js";
import { encodeRunBytes } from "./multipart.js";
import type { Sink } from "./sink.js";
import { SpoolReplay } from "./spool-replay.js";
import { ClientState, type ClientStats } from "./client-state.js";
import { BatchDelivery } from "./delivery.js";
import { ExitHooks } from "./exit.js";
import { flushResult, Waiters, type FlushOptions, type FlushResult } from "./flush.js";
import { Pump } from "./pump.js";
import { RunQueue } from "./queue.js";
import { deferredCount, runDeferred } from "../run/deferred.js";

export { resetWarnings, type ClientStats } from "./client-state.js";
export type { FlushOptions, FlushResult } from "./flush.js";

export class Client implements RunWriter {
  readonly options: ResolvedOptions;
  readonly sink: Sink;
  private readonly state: ClientState;
  private readonly valueLimits: ClientOptions["valueLimits"];
  private readonly sampler: Sampler;
  private privacy?: PrivacyOptions;

  private readonly queue = new RunQueue();
  private readonly spoolReplay: SpoolReplay;
  private readonly pump: Pump;
  private readonly waiters = new Waiters();
  private readonly exitHooks: ExitHooks;
  readonly stats: ClientStats;

  constructor(opts: ClientOptions = {}) {
    this.options = resolveOptions(opts);
    this.state = new ClientState(this.options, opts.warn ?? ((msg) => process.emitWarning(msg, "TracepipeWarning")));
    this.stats = this.state.stats;
    this.valueLimits = opts.valueLimits;
    this.sampler = new Sampler(this.options.samplingRate);
    if (opts.hideInputs !== undefined || opts.hideOutputs !== undefined || opts.mask !== undefined)
      this.privacy = { hideInputs: opts.hideInputs, hideOutputs: opts.hideOutputs, mask: opts.mask };
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
            batchSizeFromServer: this.options.batchSizeFromServer,
            warn: (m) => this.state.warnOnce(m),
          })
        : new EmbeddedSink(this.options.storeTarget));
    this.spoolReplay = new SpoolReplay(this.state, this.valueLimits, () => {
      this.replay();
      this.notify();
    });
    const deadLetters = new DeadLetterFile(this.options.deadLetterPath, (m) => this.state.warnOnce(m));
    const delivery = new BatchDelivery(
      this.state,
      this.sink,
      this.queue,
      this.spoolReplay,
      deadLetters,
      opts.backoff,
      this.valueLimits,
      () => this.waiters.awaited,
    );
    this.pump = new Pump(this.state, this.sink, this.queue, delivery, this.valueLimits, {
      awaited: () => this.waiters.awaited,
      replay: () => this.replay(),
      notify: () => this.notify(),
    });
    this.exitHooks = new ExitHooks(
      {
        // Runs still waiting to be built (run/deferred.ts) count: the exit flush hands them over first.
        hasPending: () => (this.hasWork() || deferredCount() > 0) && !this.state.abandoned,
        flush: (o) => this.flush(o),
        spoolEverything: () => this.spoolEverything(),
      },
      this.options.exitTimeoutMs,
    );
    if (opts.exitHooks !== false) this.exitHooks.install();
    this.stats.inSpool = this.spoolReplay.pendingOps();
    // Runs spooled by an earlier process (or an earlier outage) go out first.
    this.replay();
  }

  // ---- producer side ----------------------------------------------------------------

  /**
   * Hand a run over. Returns at once; the run is copied (made safe) now, so
   * later changes to it are not seen. With `owned` the caller promises never
   * to read or change the run again (the span processor, which builds each
   * run afresh): a run already safe is then kept rather than copied. Never throws.
   */
  createRun(run: Run | (Record<string, unknown> & { id: string }), opts: { attachments?: Attachments; owned?: boolean } = {}): void {
    if (this.refuseClosed() || this.sampledOut(run)) return;
    try {
      // Masking functions get the run's values and may change them in place: they get a copy, as the caller's runs do.
      const op = postOp(run, opts.attachments, this.valueLimits, opts.owned === true && !this.privacy);
      if (op.run.session_name === undefined) op.run.session_name = this.options.project;
      // Masking applies to the client's own copy, before the run is queued, spooled or sent.
      if (this.privacy) op.run = applyPrivacy(op.run, this.privacy);
      this.enqueue(op);
    } catch (err) {
      this.state.drop(1, `tracepipe: a run could not be queued (${(err as Error)?.message}); it was dropped`);
    }
  }

  /**
   * Update a run. Updates of one run apply in the order they were made, whatever retries or restarts happen in between.
   * With `owned` (as for createRun) the patch, and what `prepare` adds to it, is checked rather than copied. Never throws.
   */
  updateRun(
    id: string,
    patch: Omit<RunPatch, "id"> | Record<string, unknown>,
    opts: { attachments?: Attachments; prepare?: () => void; owned?: boolean } = {},
  ): void {
    // The patch as the sampler reads it (with its run's id) is built only when sampling is on.
    if (this.refuseClosed() || (this.sampler.rate < 1 && this.sampledOut({ ...(patch as Record<string, unknown>), id }))) return;
    try {
      let prepare = opts.prepare;
      if (this.privacy && prepare) {
        // The masked copy must include what the deferred step adds (an estimate), so it runs now.
        try {
          prepare();
        } catch {
          // deferred work only adds to a run
        }
        prepare = undefined;
      }
      const op = patchOp(id, patch, opts.attachments, prepare, this.valueLimits, opts.owned === true && !this.privacy);
      if (this.privacy) op.run = { ...applyPrivacy(op.run, this.privacy), id: op.id };
      this.enqueue(op);
    } catch (err) {
      this.state.drop(1, `tracepipe: a run update could not be queued (${(err as Error)?.message}); it was dropped`);
    }
  }

  /**
   * Feedback on a run: `key` with a score or a value, and a comment. Queued,
   * batched, rate-limited and spooled like runs (a `feedback.{id}` part of the
   * same multipart batches). Returns the feedback's id; never throws.
   *
   *   client.createFeedback(run.id, "correctness", { score: 1, comment: "right answer" });
   */
  createFeedback(runId: string, key: string, opts: FeedbackOptions = {}): string | undefined {
    if (this.refuseClosed()) return undefined;
    try {
      const op = feedbackOp(feedbackRecord(runId, key, opts), this.valueLimits);
      this.enqueue(op);
      return op.id;
    } catch (err) {
      this.state.drop(1, `tracepipe: feedback could not be queued (${(err as Error)?.message}); it was dropped`);
      return undefined;
    }
  }

  /** Sampling: a whole trace is sent or not (see privacy.ts); counted, never silent. */
  private sampledOut(run: unknown): boolean {
    if (this.sampler.rate >= 1 || typeof run !== "object" || run === null) return false;
    if (this.sampler.keep(run as Record<string, unknown>)) return false;
    this.stats.sampledOut++;
    return true;
  }

  private refuseClosed(): boolean {
    if (!this.state.closed) return false;
    this.state.drop(1, "tracepipe: runs handed to a Client after shutdown() are dropped");
    return true;
  }

  /** Route an op so that no older op of its run can land after it. */
  private enqueue(op: Op, fromSpool = false): void {
    if (!fromSpool) {
      const behind = this.spoolReplay.behind(op.id);
      if (behind) return this.spoolReplay.putBehind(op, behind);
    }
    if (this.queue.mergeIntoUnsent(op)) return;
    if (!fromSpool && this.queue.bytes + op.bytes > this.options.maxQueueBytes) return this.spoolReplay.overflow(op);
    if (this.queue.add(this.sink.encodesRuns ? encodedOp(op, encodeRunBytes) : op)) this.pump.schedule();
  }

  // ---- spool read-back ------------------------------------------------------------------

  /** Read the next due spool segment into the queue when memory allows; arm a timer for one not yet due. */
  private replay(): void {
    if (!this.spoolReplay.mayHaveWork || this.state.abandoned || this.queue.bytes > this.options.maxQueueBytes / 2) return;
    // Enough segments for a full batch at once: segments written behind a retry hold one op each.
    for (const c of this.spoolReplay.claim(this.pump.batchSize)) this.load(c.segment, c.ops);
  }

  private load(segment: string, ops: Op[]): void {
    if (!this.spoolReplay.settle(segment, ops)) return;
    for (const op of ops) this.enqueue(op, true);
    this.pump.schedule();
  }

  // ---- flush, shutdown, exit ------------------------------------------------------------

  private hasWork(): boolean {
    return this.queue.ops.length > 0 || this.pump.inFlight.size > 0 || this.queue.parked.size > 0 || this.spoolReplay.spilled > 0;
  }

  private hasRoom(): boolean {
    return this.queue.bytes < this.options.maxQueueBytes / 2 && this.queue.ops.length < this.pump.batchSize * this.options.concurrency * 4;
  }

  /**
   * Resolves when the in-memory queue has room (under half its byte bound and
   * a few batches per connection), so a bulk producer such as backfill can
   * pace itself to delivery instead of spilling to the spool.
   */
  whenRoom(): Promise<void> {
    if (this.hasRoom() || this.state.closed) return Promise.resolve();
    return this.waiters.untilRoom();
  }

  private notify(): void {
    this.stats.queued = this.queue.held;
    this.stats.inFlight = this.pump.inFlight.size;
    if (this.waiters.roomAwaited && this.hasRoom()) this.waiters.wakeRoom();
    if (!this.hasWork()) this.waiters.wakeIdle();
  }

  private pendingOps(): number {
    return this.queue.held + this.pump.inFlightOps();
  }

  private result(timedOut: boolean): FlushResult {
    this.stats.inSpool = this.spoolReplay.pendingOps();
    const pending = this.state.abandoned ? 0 : this.pendingOps();
    return flushResult(this.stats, pending, timedOut);
  }

  /**
   * Resolves when every run handed over so far is delivered, dead-lettered, or
   * (after `maxAttempts`) spooled for a later retry, or when `timeoutMs` has
   * passed. The result counts what is still not delivered: ops in the spool
   * (written by this or an earlier process) and, after a timeout, ops still
   * queued or in flight. In serverless handlers, `await client.flush({ timeoutMs })`
   * before returning. Never rejects.
   */
  async flush(opts: FlushOptions = {}): Promise<FlushResult> {
    // Runs whose building was deferred off their calls' path (run/deferred.ts) are handed over first.
    runDeferred();
    this.pump.stopTimer();
    let timedOut = false;
    if (this.hasWork() && !this.state.abandoned) timedOut = await this.waiters.untilIdle(opts.timeoutMs, () => this.pump.pump(true));
    // Batches that failed under this flush go back to their retry schedule.
    if (!this.waiters.awaited) this.spoolReplay.releaseHeld();
    return this.result(timedOut);
  }

  /**
   * Flush (for at most `timeoutMs`), then spool whatever is still in memory,
   * and release the sink, timers, exit hooks and the token encoders
   * (tiktoken's WASM tables, tens of MB; they load again if anything estimates
   * later). Runs handed over after this are dropped (counted in stats.dropped).
   * The result counts what was not delivered. Never rejects.
   */
  async shutdown(opts: FlushOptions = {}): Promise<FlushResult> {
    const flushed = await this.flush(opts);
    this.state.closed = true;
    if (flushed.timedOut) this.spoolEverything();
    this.spoolReplay.stop();
    this.exitHooks.remove();
    if (!flushed.timedOut) await this.sink.close().catch(() => undefined);
    freeEncoders();
    return this.result(flushed.timedOut);
  }

  /**
   * The process is exiting (no more async work), or shutdown ran out of time:
   * write everything undelivered to the spool. The ops of one run (in flight,
   * parked) become one, newest fields winning; a run whose older op is
   * already in the spool is written with an earlier due time, so it replays
   * before that op's successors.
   */
  private spoolEverything(): void {
    if (this.state.abandoned) return;
    // On exit no setImmediate runs any more: deferred builds are handed over now, to be spooled with the rest.
    runDeferred();
    const byId = new Map<string, Op>();
    const add = (op: Op) => {
      finalize(op, this.valueLimits);
      const had = byId.get(op.id);
      if (had) mergeOps(had, op);
      else byId.set(op.id, op);
    };
    // In-flight batches may also have arrived; the server is idempotent by id, so replaying them is safe.
    for (const b of this.pump.inFlight) for (const op of b) add(op);
    for (const op of this.queue.ops) add(op);
    for (const op of this.queue.parked.values()) add(op);
    this.spoolReplay.seal();
    this.state.abandoned = true;
    this.state.stopper.abort();
    if (byId.size === 0) return;
    this.spoolReplay.writeAll(byId);
    this.queue.clear();
  }
}
