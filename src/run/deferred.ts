/**
 * Work that builds runs and hands them to their writer, taken off a traced
 * call's path. A wrapper records at call time only what must be taken then (a
 * copy of what the call had, its times, its parent) and leaves normalizing,
 * building the run, usage and cost, sampling, masking and queueing to this
 * queue, which runs after the caller's code has its result.
 *
 * The queue runs in batches, once per DEFER_WINDOW_MS after the first piece of
 * work of a batch was handed over (or at once when MAX_PENDING pieces wait),
 * in the order the work was handed over: a run's create always comes before
 * its update, and runs keep the order of their calls. Why batches rather than
 * a turn per call: building a run touches a few hundred functions (adapters,
 * the run builder, prices, checks, the queue) that the host's own work between
 * two calls pushes out of the processor's caches: built one call at a time,
 * every build runs cold and costs the host much more than the same build in
 * a batch, where all but the first run warm. The window is short next to the
 * Client's flush interval, so runs reach the sink about as soon as they would
 * a turn after their call.
 *
 * The timer keeps the process alive until the batch has run (a few ms), so
 * the work reaches its writer before the process goes idle and a Client's
 * beforeExit flush sees it. Whatever reads or delivers runs (a Client's
 * flush, shutdown and exit, MemoryWriter's reads) runs the pending work
 * first, so no run is lost or reordered by waiting here. A piece of work that
 * throws is dropped alone: tracing never throws into the host, and one
 * failure never sinks the others.
 */
/** How long the first piece of work of a batch waits for company (ms). */
export const DEFER_WINDOW_MS = 10;
/** Pieces of work that make a batch run at once (the next turn) rather than at the end of its window: bounds the copies held. */
export const MAX_PENDING = 256;

let pending: (() => void)[] = [];
/** A timer is armed and will run the queue. */
let armed = false;
/** A setImmediate is armed (the queue is full) and will run the queue. */
let soon = false;
/** The queue is being run now (work handed over meanwhile joins the same run). */
let running = false;

/** Run `work` after the current turn (within DEFER_WINDOW_MS), after any work handed over before it. */
export function later(work: () => void): void {
  pending.push(work);
  if (!armed) {
    armed = true;
    setTimeout(onTimer, DEFER_WINDOW_MS);
  }
  if (pending.length >= MAX_PENDING && !soon) {
    soon = true;
    setImmediate(onImmediate);
  }
}

function onTimer(): void {
  armed = false;
  runDeferred();
}

function onImmediate(): void {
  soon = false;
  runDeferred();
}

/** Run every piece of pending work now, in order. Never throws. */
export function runDeferred(): void {
  // Called again from inside a piece of work (a writer that flushes, say): the running loop reaches what was added.
  if (running || pending.length === 0) return;
  running = true;
  try {
    for (let i = 0; i < pending.length; i++) {
      try {
        pending[i]!();
      } catch {
        // Each piece guards its own writer; anything left is one run's loss, never the host's.
      }
    }
  } finally {
    pending = [];
    running = false;
  }
}

/** How many pieces of work wait (for tests and stats). */
export function deferredCount(): number {
  return pending.length;
}
