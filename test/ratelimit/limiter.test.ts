import { describe, expect, it } from "vitest";
import { MemoryRateLimiter } from "../../src/ratelimit/index.js";
import { recordingLimiter } from "../helpers/recording-limiter.js";

/** The rule itself: at most `limit` grants in any window of `windowMs`. */
function maxInAnyWindow(times: number[], windowMs: number): number {
  const t = [...times].sort((a, b) => a - b);
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < t.length; hi++) {
    while (t[hi]! - t[lo]! >= windowMs) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}

describe("MemoryRateLimiter", () => {
  it("never grants more than the limit in any sliding window, with a controlled clock", () => {
    let now = 0;
    const lim = new MemoryRateLimiter({ now: () => now });
    const granted: number[] = [];
    // Bursty arrivals: sometimes many at once, sometimes gaps.
    let seed = 7;
    for (let step = 0; step < 5000; step++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      now += seed % 7 === 0 ? 37 : seed % 3;
      const burst = 1 + (seed % 5);
      for (let i = 0; i < burst; i++) if (lim.tryAcquire("k", 1, 50, 1000).ok) granted.push(now);
    }
    expect(maxInAnyWindow(granted, 1000)).toBe(50);
  });

  it("says exactly when room appears", () => {
    let now = 0;
    const lim = new MemoryRateLimiter({ now: () => now });
    for (let i = 0; i < 3; i++) {
      expect(lim.tryAcquire("k", 1, 3, 100).ok).toBe(true);
      now += 10;
    }
    const r = lim.tryAcquire("k", 1, 3, 100);
    expect(r).toMatchObject({ ok: false, retryAfterMs: 70 });
    now += 70;
    expect(lim.tryAcquire("k", 1, 3, 100).ok).toBe(true);
  });

  it("holds a few bytes for a key seen once, and forgets keys whose grants have all left the window", () => {
    let now = 0;
    const lim = new MemoryRateLimiter({ now: () => now });
    const before = process.memoryUsage().arrayBuffers;
    // Callers each sending a new API key to the multipart row (6000 / 10 s): each was given 6000 slots, held forever.
    for (let i = 0; i < 20_000; i++) expect(lim.tryAcquire(`multipart|key:${i}`, 1, 6000, 10_000).ok).toBe(true);
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(50 * 1024 * 1024);
    expect(lim.size).toBe(20_000); // all still inside their window
    now += 10_000;
    // Sweeps come as the keys held double, so the idle ones are gone by the time as many new ones came.
    for (let i = 0; i < 20_000; i++) lim.tryAcquire(`multipart|key:new-${i}`, 1, 6000, 10_000);
    expect(lim.size).toBeLessThanOrEqual(20_000);
    // A key that keeps its grants is kept, and its window still holds the limit exactly.
    for (let i = 0; i < 100; i++) expect(lim.tryAcquire("busy", 1, 100, 60_000).ok).toBe(true);
    for (let i = 0; i < 5000; i++) lim.tryAcquire(`other-${i}`, 1, 10, 1);
    now += 1;
    for (let i = 0; i < 5000; i++) lim.tryAcquire(`late-${i}`, 1, 10, 1);
    expect(lim.tryAcquire("busy", 1, 100, 60_000)).toMatchObject({ ok: false, retryAfterMs: 59_999 });
  });

  it("counts keys separately and rejects a cost above the limit", () => {
    const lim = new MemoryRateLimiter({ now: () => 0 });
    expect(lim.tryAcquire("a", 2, 2, 100).ok).toBe(true);
    expect(lim.tryAcquire("b", 2, 2, 100).ok).toBe(true);
    expect(lim.tryAcquire("a", 1, 2, 100).ok).toBe(false);
    expect(() => lim.tryAcquire("a", 3, 2, 100)).toThrow(RangeError);
  });

  it("acquire() waits for room and keeps waiting callers near the limit in real time", async () => {
    // Record each grant at the instant the limiter decided it (on its own clock): a time
    // taken after `await acquire()` returns can lag by whatever else the loop ran first.
    const { limiter: lim, granted } = recordingLimiter();
    const t0 = performance.now();
    // 4 concurrent workers wanting 120 grants against 40 / 200 ms: needs 3 windows.
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let i = 0; i < 30; i++) await lim.acquire("k", 1, 40, 200);
      }),
    );
    expect(granted).toHaveLength(120);
    expect(maxInAnyWindow(granted, 200)).toBeLessThanOrEqual(40);
    // Used, not wasted: 120 grants cannot take less than two full windows, and waiting
    // exactly until the oldest grant expires means it takes little more than that.
    expect(performance.now() - t0).toBeGreaterThanOrEqual(400);
  });

  it("aborts a waiting acquire", async () => {
    const lim = new MemoryRateLimiter();
    await lim.acquire("k", 1, 1, 10_000);
    const ac = new AbortController();
    const p = lim.acquire("k", 1, 1, 10_000, ac.signal);
    ac.abort(new Error("stop"));
    await expect(p).rejects.toThrow("stop");
  });
});
