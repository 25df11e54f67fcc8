/**
 * `serve --retention 30d`: the collector prunes its store every hour (and soon
 * after it starts), removing whole traces older than the retention period
 * (store contract: RetentionStore). The store prunes in slices with the event
 * loop served in between, so requests interleave with a large prune. A prune
 * that fails (the database away) waits for the next hour, with a warning.
 */
import type { RetentionStore } from "../store/contract/retention.js";

/** How often the store is pruned. */
export const RETENTION_INTERVAL_MS = 3_600_000;
/** The first prune, this long after start-up (not during it). */
const FIRST_PRUNE_MS = 10_000;

export class RetentionSweep {
  private readonly first: NodeJS.Timeout;
  private readonly timer: NodeJS.Timeout;
  private running: Promise<void> | undefined;
  private readonly abort = new AbortController();

  constructor(
    private readonly store: RetentionStore,
    private readonly retentionMs: number,
    private readonly warn: (msg: string) => void = (m) => process.emitWarning(m, "TracepipeWarning"),
    intervalMs = RETENTION_INTERVAL_MS,
  ) {
    this.first = setTimeout(() => void this.prune(), Math.min(FIRST_PRUNE_MS, intervalMs));
    this.first.unref();
    this.timer = setInterval(() => void this.prune(), intervalMs);
    this.timer.unref();
  }

  /** One prune (at most one at a time); resolves when it is done. Never rejects. */
  prune(): Promise<void> {
    this.running ??= this.store
      .pruneTraces(new Date(Date.now() - this.retentionMs), { signal: this.abort.signal })
      .then(
        () => undefined,
        (err: unknown) =>
          this.warn(
            `tracepipe collector: pruning traces older than the retention period failed (tried again in an hour): ${(err as Error)?.message ?? String(err)}`,
          ),
      )
      .finally(() => (this.running = undefined));
    return this.running;
  }

  /** Stop pruning; resolves once a prune under way has stopped between slices (before the store closes). */
  async stop(): Promise<void> {
    clearTimeout(this.first);
    clearInterval(this.timer);
    this.abort.abort();
    await this.running;
  }
}
