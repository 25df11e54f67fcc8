/**
 * Work that builds runs and hands them to their writer, taken off a traced
 * call's path. A wrapper records at call time only what must be taken then (a
 * copy of what the call had, its times, its parent) and leaves normalizing,
 * building the run, usage and cost, sampling, masking and queueing to this
 * queue, which runs after the caller's code has its result.
 *
 * One batch per turn of the event loop (setImmediate, so no microtask of the
 * caller's waits behind it), in the order the work was handed over: a run's
 * create always comes before its update, and runs keep the order of their
 * calls. Whatever reads or delivers runs (a Client's flush, shutdown and exit,
 * MemoryWriter's reads) runs the pending work first, so no run is lost or
 * reordered by waiting here. A piece of work that throws is dropped alone:
 * tracing never throws into the host, and one failure never sinks the others.
 */
let pending: (() => void)[] = [];
/** A setImmediate is armed and will run the queue. */
let armed = false;
/** The queue is being run now (work handed over meanwhile joins the same run). */
let running = false;

/** Run `work` after the current turn, after any work handed over before it. */
export function later(work: () => void): void {
  pending.push(work);
  if (armed) return;
  armed = true;
  setImmediate(onImmediate);
}

function onImmediate(): void {
  armed = false;
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
