/**
 * A MemoryRateLimiter that records each grant at the instant it decides it, on the
 * clock it decides by: what a rate-limited sender controls. A time taken after
 * `acquire()` returns, or an arrival stamped at a proxy, lags by whatever else the
 * loop (or a starved process) ran first.
 */
import { MemoryRateLimiter } from "../../src/ratelimit/index.js";

export function recordingLimiter(): { limiter: MemoryRateLimiter; granted: number[] } {
  const granted: number[] = [];
  let clock = 0;
  class Recording extends MemoryRateLimiter {
    override tryAcquire(...args: Parameters<MemoryRateLimiter["tryAcquire"]>) {
      const r = super.tryAcquire(...args);
      if (r.ok) granted.push(clock);
      return r;
    }
  }
  return { limiter: new Recording({ now: () => (clock = performance.now()) }), granted };
}
