/**
 * The rootless sweep. A trace with no root stored is converted as it is once
 * no span of it has come for `quietMs`: its parent is in a process whose
 * exporter did not flag it remote (SDKs before OTLP 1.1), or the process that
 * held its root died. Its topmost spans are roots until the root comes (see
 * trace.ts).
 */
import { convertHeld, type OtlpStore } from "./trace.js";

/** Trace ids read from the store at a time. */
const SWEEP_BATCH = 100;
/** The sweep yields to the event loop once it has converted for this long, so requests interleave with a backlog. */
const SWEEP_SLICE_MS = 20;

/**
 * Converts the traces that have waited `quietMs` for a root without a new
 * span. Checks every quietMs / 4 (at least 50 ms, at
 * most 5 s). A backlog (a store from before this sweep existed holds every
 * rootless trace it ever got) is converted in slices of SWEEP_SLICE_MS, the
 * event loop served in between. A trace that fails to convert is left out,
 * with a warning, rather than tried forever. Each trace is claimed in the
 * store (sweepRootless), so collectors sharing a store sweep it together,
 * each trace by one of them, and a collector that dies mid-conversion leaves
 * its trace to the next sweep.
 */
export class RootlessSweep {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly store: OtlpStore,
    private readonly quietMs: number,
    private readonly warn: (msg: string) => void = (m) => process.emitWarning(m, "TracepipeWarning"),
  ) {
    this.timer = setInterval(() => void this.sweep(), Math.min(5000, Math.max(50, quietMs / 4)));
    this.timer.unref();
  }

  /** One sweep (at most one at a time); resolves when the traces quiet by now are converted. Never rejects. */
  sweep(): Promise<void> {
    this.running ??= this.drain()
      // The store failing under it (busy, closed, a full disk) waits for the next sweep; it must not
      // become an unhandled rejection in a timer, which ends the process.
      .catch((err: unknown) => {
        this.warn(`tracepipe collector: the sweep of OTLP traces without a root failed: ${(err as Error)?.message ?? String(err)}`);
      })
      .finally(() => (this.running = undefined));
    return this.running;
  }

  private async drain(): Promise<void> {
    const quietSince = new Date(Date.now() - this.quietMs).toISOString();
    let sliceStart = performance.now();
    for (;;) {
      if (this.stopped) return;
      const ids = await this.store.quietRootlessTraces(quietSince, SWEEP_BATCH);
      let claimed = 0;
      for (const id of ids) {
        if (this.stopped) return;
        const r = await this.store.sweepRootless(id, quietSince, () => convertHeld(this.store, id));
        if (r.claimed) claimed++;
        const error = r.error;
        if (error !== undefined)
          this.warn(
            `tracepipe collector: OTLP trace ${id} (no root span) was not converted: ${(error as Error)?.message ?? String(error)}`,
          );
        if (performance.now() - sliceStart >= SWEEP_SLICE_MS) {
          await new Promise((r) => setImmediate(r));
          sliceStart = performance.now();
        }
      }
      // A batch wholly held by other collectors' sweeps is theirs: reading it again would spin.
      if (ids.length < SWEEP_BATCH || claimed === 0) return;
    }
  }

  /** Stop sweeping; resolves once a sweep under way has stopped (before the store closes). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }
}
