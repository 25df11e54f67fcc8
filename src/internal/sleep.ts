/**
 * The longest delay a Node timer holds: a longer one (a server's Retry-After may say anything)
 * fires after 1 ms instead, with a TimeoutOverflowWarning printed in the host's output.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Wait `ms` (at most MAX_TIMER_MS), or until `signal` aborts (rejecting). `unref`: the wait alone does not keep the process alive. */
export function sleep(ms: number, signal?: AbortSignal, unref = false): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(
      () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      },
      Math.min(ms, MAX_TIMER_MS),
    );
    if (unref) t.unref();
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
