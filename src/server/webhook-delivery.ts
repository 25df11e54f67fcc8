/**
 * The collector's webhook delivery loop over the store's outbox
 * (store/contract/webhooks.ts): claim due deliveries for a lease, make one
 * attempt each (webhooks/sender.ts), record it with what follows (delivered,
 * retried after a backoff, or failed), and claim again. Every collector on a
 * shared store runs one; the claims keep them from sending the same delivery,
 * and the lease hands a killed collector's deliveries to the others.
 *
 * It claims right away when told a run completed here (`wake`) and otherwise
 * every `pollMs`, which also picks up completions made by other collectors,
 * by OTLP conversion, and retries falling due. See docs/webhooks.md.
 */
import type { ClaimedWebhook, WebhookOutboxStore, WebhookOutcome } from "../store/contract/webhooks.js";
import type { RunStore } from "../store/contract/runs.js";
import { DEFAULT_WEBHOOK_TIMEOUT_MS, type AttemptResult, type WebhookSender } from "../webhooks/sender.js";
import { webhookPayload } from "../webhooks/runs.js";
import { sleep } from "../internal/sleep.js";

export interface WebhookDeliveryOptions {
  /** Attempts per delivery, the first included (default 8); then it is `failed`. */
  maxAttempts?: number;
  /** The delay before retry n is between half and all of min(maxMs, baseMs * 2^(n-1)), and never below the receiver's Retry-After (defaults 1 s and 5 min). */
  backoff?: { baseMs: number; maxMs: number };
  /** Claim at least this often, ms (default 1000). */
  pollMs?: number;
  /** Deliveries under way at once in this collector (default 8). */
  concurrency?: number;
  /** How long a claim holds a delivery, ms (default twice the sender's timeout plus 1 s): a collector that dies mid-delivery holds it this long. */
  leaseMs?: number;
  /** Told about every recorded attempt (logs, tests). */
  onAttempt?: (e: { run_id: string; url: string; attempt: AttemptResult; status: WebhookOutcome["status"] }) => void;
  warn?: (msg: string) => void;
}

export interface WebhookDeliveryStats {
  delivered: number;
  failed: number;
  /** Deliveries the URL policy refused: nothing was sent. */
  refused: number;
  /** Requests sent (a refused URL makes none). */
  attempts: number;
}

export const DEFAULT_MAX_ATTEMPTS = 8;
const DEFAULT_BACKOFF = { baseMs: 1000, maxMs: 300_000 };

/** The delay before the next attempt, after `made` attempts. */
export function retryDelayMs(made: number, backoff: { baseMs: number; maxMs: number }, retryAfterMs = 0, random = Math.random): number {
  const ceiling = Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.min(made - 1, 30));
  // Half fixed, half jitter: collectors retrying at once spread out, and no retry comes at once.
  return Math.min(backoff.maxMs, Math.max(retryAfterMs, Math.round(ceiling / 2 + (random() * ceiling) / 2)));
}

export class WebhookDeliveryLoop {
  readonly stats: WebhookDeliveryStats = { delivered: 0, failed: 0, refused: 0, attempts: 0 };
  private readonly inFlight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  /** The claim under way, if any. */
  private claiming: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private warnedAt = 0;
  private readonly maxAttempts: number;
  private readonly backoff: { baseMs: number; maxMs: number };
  private readonly pollMs: number;
  private readonly concurrency: number;
  private readonly leaseMs: number;

  constructor(
    private readonly store: WebhookOutboxStore & Pick<RunStore, "getRun">,
    private readonly sender: WebhookSender,
    private readonly opts: WebhookDeliveryOptions & { timeoutMs?: number } = {},
  ) {
    this.maxAttempts = Math.max(1, opts.maxAttempts ?? DEFAULT_MAX_ATTEMPTS);
    this.backoff = opts.backoff ?? DEFAULT_BACKOFF;
    this.pollMs = opts.pollMs ?? 1000;
    this.concurrency = Math.max(1, opts.concurrency ?? 8);
    this.leaseMs = opts.leaseMs ?? 2 * (opts.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS) + 1000;
  }

  /** Start claiming (once the collector listens, so relative URLs know where they point). */
  start(): void {
    if (!this.stopped) this.wake();
  }

  /** Claim now: a run completed here, or an attempt ended and there may be more due. */
  wake(): void {
    if (this.stopped) return;
    if (this.claiming) {
      this.again = true;
      return;
    }
    this.claiming = this.claim().finally(() => {
      this.claiming = undefined;
      this.schedule();
    });
  }

  private schedule(): void {
    clearTimeout(this.timer);
    if (this.stopped) return;
    this.timer = setTimeout(() => this.wake(), this.pollMs);
    this.timer.unref();
  }

  private async claim(): Promise<void> {
    try {
      do {
        this.again = false;
        const free = this.concurrency - this.inFlight.size;
        if (free <= 0) break;
        const claimed = await this.store.claimWebhooks(free, this.leaseMs);
        // Stopping meanwhile: what was just claimed is left to its lease, and claimed again by whoever runs next.
        if (this.stopped) break;
        for (const c of claimed) this.launch(c);
        // A full claim may have left more due: claim again at once.
        if (claimed.length === free) this.again = true;
      } while (this.again && !this.stopped);
    } catch (err) {
      this.warnSometimes(
        `claiming webhook deliveries failed (tried again in ${this.pollMs} ms): ${(err as Error)?.message ?? String(err)}`,
      );
    }
  }

  private launch(c: ClaimedWebhook): void {
    const p = this.deliver(c)
      .catch((err: unknown) => {
        // Not recorded (the store away): the lease runs out and the delivery is claimed again.
        this.warnSometimes(`recording a webhook attempt for run ${c.run_id} failed: ${(err as Error)?.message ?? String(err)}`);
      })
      .finally(() => {
        this.inFlight.delete(p);
        this.wake();
      });
    this.inFlight.add(p);
  }

  private async deliver(c: ClaimedWebhook): Promise<void> {
    const n = c.attempts + 1;
    const run = await this.store.getRun(c.run_id);
    const attempt: AttemptResult = run
      ? await this.sender.attempt(c.url, c.run_id, webhookPayload(run), n)
      : { at: new Date().toISOString(), duration_ms: 0, error: "the run is no longer stored", verdict: "final" };
    const outcome: WebhookOutcome =
      attempt.verdict === "delivered"
        ? { status: "delivered" }
        : attempt.verdict === "retry" && n < this.maxAttempts
          ? { status: "pending", retryInMs: retryDelayMs(n, this.backoff, attempt.retryAfterMs) }
          : { status: "failed" };
    const { verdict: _v, retryAfterMs: _r, ...kept } = attempt;
    await this.store.recordWebhookAttempt(c, kept, outcome);
    if (attempt.verdict === "refused") this.stats.refused++;
    else this.stats.attempts++;
    if (outcome.status === "delivered") this.stats.delivered++;
    if (outcome.status === "failed") this.stats.failed++;
    this.opts.onAttempt?.({ run_id: c.run_id, url: c.url, attempt, status: outcome.status });
  }

  private warnSometimes(msg: string): void {
    // The database away fails every claim: one warning a minute says so without flooding the log.
    if (Date.now() - this.warnedAt < 60_000) return;
    this.warnedAt = Date.now();
    (this.opts.warn ?? ((m: string) => process.emitWarning(m, "TracepipeWarning")))(`tracepipe collector: ${msg}`);
  }

  /** Resolves once nothing is under way here and the outbox holds no pending delivery (retries included). */
  async idle(): Promise<void> {
    for (;;) {
      if (this.inFlight.size) await Promise.allSettled([...this.inFlight]);
      else if ((await this.store.pendingWebhooks()).count === 0 && !this.inFlight.size) return;
      else {
        this.wake();
        await sleep(Math.min(this.pollMs, 50));
      }
    }
  }

  /** Stop claiming; resolves when the attempts under way have been recorded (before the store closes). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.claiming;
    while (this.inFlight.size) await Promise.allSettled([...this.inFlight]);
  }
}
