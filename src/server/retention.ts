/**
 * `serve --retention 30d`: the collector prunes its store every hour (and soon
 * after it starts), removing whole traces older than the retention period
 * (store contract: RetentionStore). The store prunes in slices with the event
 * loop served in between, so requests interleave with a large prune. A prune
 * that fails (the database away) waits for the next hour, with a warning.
 * Collectors sharing a PostgreSQL store prune one at a time: the store skips a
 * prune while another collector's is under way, and each prune says on the
 * log which collector did the work.
 */
import type { PruneResult, RetentionStore } from "../store/contract/retention.js";

/** How often the store is pruned by default. */
export const RETENTION_INTERVAL_MS = 3_600_000;
/** Prunes this close together would only query an empty backlog. */
const MIN_INTERVAL_MS = 1000;
/** The first prune, this long after start-up (not during it). */
const FIRST_PRUNE_MS = 10_000;

export interface RetentionSweepOptions {
  /** Between prunes, ms (default RETENTION_INTERVAL_MS, at least MIN_INTERVAL_MS). */
  intervalMs?: number;
  /** A prune that failed. */
  warn?: (msg: string) => void;
  /** A prune done, or skipped while another collector's was under way (one line each). */
  log?: (line: string) => void;
}

export class RetentionSweep {
  private readonly first: NodeJS.Timeout;
  private readonly timer: NodeJS.Timeout;
  private running: Promise<void> | undefined;
  private readonly abort = new AbortController();
  private readonly warn: (msg: string) => void;
  private readonly log: (line: string) => void;

  constructor(
    private readonly store: RetentionStore,
    private readonly retentionMs: number,
    opts: RetentionSweepOptions = {},
  ) {
    const intervalMs = Math.max(MIN_INTERVAL_MS, opts.intervalMs ?? RETENTION_INTERVAL_MS);
    this.warn = opts.warn ?? ((m) => process.emitWarning(m, "TracepipeWarning"));
    this.log = opts.log ?? (() => undefined);
    this.first = setTimeout(() => void this.prune(), Math.min(FIRST_PRUNE_MS, intervalMs));
    this.first.unref();
    this.timer = setInterval(() => void this.prune(), intervalMs);
    this.timer.unref();
  }

  /** One prune (at most one at a time); resolves when it is done. Never rejects. */
  prune(): Promise<void> {
    const cutoff = new Date(Date.now() - this.retentionMs);
    this.running ??= this.store
      .pruneTraces(cutoff, { signal: this.abort.signal })
      .then(
        (r) => this.log(describe(r, cutoff)),
        (err: unknown) =>
          this.warn(
            `tracepipe collector: pruning traces older than the retention period failed (tried again at the next prune): ${(err as Error)?.message ?? String(err)}`,
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

function describe(r: PruneResult, cutoff: Date): string {
  if (r.skipped) return "tracepipe collector: retention skipped: another collector is pruning the store now";
  const parts = r.partitionsDropped.length ? `, ${r.partitionsDropped.length} whole partitions dropped` : "";
  return `tracepipe collector: retention removed ${r.runs} runs and ${r.attachments} attachments of traces that started before ${cutoff.toISOString()}${parts}`;
}
