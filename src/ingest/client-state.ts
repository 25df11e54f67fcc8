/**
 * What every part of a Client shares: its resolved options, its counters, how
 * it warns, and where it stands in its life. The queue, the spool replay, the
 * pump and the delivery of a batch are separate modules; they meet here rather
 * than reaching into each other, so each can say what it guarantees on its own.
 */
import type { ResolvedOptions } from "./config.js";

export interface ClientStats {
  /** HTTP (or store) send attempts, retries included. */
  requests: number;
  queued: number;
  inFlight: number;
  delivered: number;
  retried: number;
  /** Ops written to the spool so far (for lack of memory, after `maxAttempts`, or on exit). */
  spooled: number;
  /** Ops waiting in the spool now: not delivered yet. Refreshed by flush() and shutdown(). */
  inSpool: number;
  deadLettered: number;
  /** Ops lost: neither the spool nor the dead-letter file could be written, or handed over after shutdown(). */
  dropped: number;
  /** Runs (creates and updates) not sent because their trace was sampled out (`samplingRate`). */
  sampledOut: number;
}

// Per process, not per client: a host with several clients (or one rebuilt per request)
// hears about a broken endpoint or spool once, not once per client.
let warnedOnce = new Set<string>();

/** For tests: forget which warnings were already printed. */
export function resetWarnings(): void {
  warnedOnce = new Set();
}

export class ClientState {
  readonly stats: ClientStats = {
    requests: 0,
    queued: 0,
    inFlight: 0,
    delivered: 0,
    retried: 0,
    spooled: 0,
    inSpool: 0,
    deadLettered: 0,
    dropped: 0,
    sampledOut: 0,
  };
  /** shutdown() has begun: runs handed over from now on are dropped (counted), and no replay timer is armed. */
  closed = false;
  /** Everything in memory was spooled (exit, or shutdown after its timeout): batches still in flight must not spool again. */
  abandoned = false;
  /** Aborted when the client gives up waiting (exit, or shutdown past its timeout): cuts limiter waits, backoff sleeps and requests short. */
  readonly stopper = new AbortController();

  constructor(
    readonly options: ResolvedOptions,
    private readonly warn: (msg: string) => void,
  ) {}

  warnOnce(msg: string): void {
    if (warnedOnce.has(msg)) return;
    warnedOnce.add(msg);
    try {
      this.warn(msg);
    } catch {
      // a throwing warn callback is the host's; it must not stop delivery
    }
  }

  /** Ops lost for good: counted in stats.dropped and said once, never silent. */
  drop(n: number, msg: string): void {
    this.stats.dropped += n;
    this.warnOnce(msg);
  }
}
