/**
 * A Client's process hooks. The host should not have to call shutdown() for
 * its runs to survive: when it has nothing left to do (beforeExit) the client
 * delivers what is queued, bounded by `exitTimeoutMs` so an endpoint that is
 * down cannot hold the exit through every retry; on exit itself (no more async
 * work possible) whatever is still in memory is written to the spool for the
 * next process. Neither hook ever throws into the host's exit.
 */
import type { FlushOptions, FlushResult } from "./flush.js";

/** What the hooks need of the client. */
export interface Exiting {
  /** Ops are still in memory, in flight or spilled, and were not spooled on exit already. */
  hasPending(): boolean;
  flush(opts: FlushOptions): Promise<FlushResult>;
  /** Write everything undelivered to the spool; idempotent. */
  spoolEverything(): void;
}

export class ExitHooks {
  private readonly onBeforeExit = () => {
    if (!this.client.hasPending()) return;
    void this.client
      .flush({ timeoutMs: this.timeoutMs })
      .then((r) => {
        if (r.timedOut) this.client.spoolEverything();
      })
      .catch(() => undefined);
  };

  private readonly onExit = () => {
    try {
      this.client.spoolEverything();
    } catch {
      // An exit handler that throws would replace the host's exit code with a crash.
    }
  };

  constructor(
    private readonly client: Exiting,
    private readonly timeoutMs: number,
  ) {}

  install(): void {
    // Two listeners per client: raise the limit so several clients do not trip Node's leak warning.
    process.setMaxListeners(process.getMaxListeners() + 2);
    process.on("beforeExit", this.onBeforeExit);
    process.on("exit", this.onExit);
  }

  remove(): void {
    process.off("beforeExit", this.onBeforeExit);
    process.off("exit", this.onExit);
  }
}
