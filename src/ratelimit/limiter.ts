/**
 * Sliding-window rate limiters. The rule they keep: in EVERY window of
 * `windowMs`, at most `limit` units are granted for a key (SPEC §8 counts
 * requests; callers acquire before every attempt, retries included).
 *
 * MemoryRateLimiter keeps, per key, the grant times of the last `limit` units
 * in a ring buffer: a unit may be granted at time t only if the unit granted
 * `limit` units earlier is at least `windowMs` old. That is exact (no
 * fixed-window burst at the edges), allocates nothing per call, and lets a
 * waiting caller sleep exactly until the oldest grant leaves the window, so
 * a busy client runs at the full limit.
 */
import { sleep } from "../internal/sleep.js";

export type TryResult =
  { ok: true; remaining: number; resetMs: number } | { ok: false; remaining: 0; retryAfterMs: number; resetMs: number };

/** Who shares a limiter's counts: this process alone, or every process using the same backend (Redis). */
export type LimiterScope = "process" | "shared";

export interface RateLimiter {
  /** Whose counts it keeps (undefined: this process's). */
  readonly scope?: LimiterScope;
  /** Wait until `cost` units may be taken for `key`, then take them. */
  acquire(key: string, cost: number, limit: number, windowMs: number, signal?: AbortSignal): Promise<void>;
  /** Take `cost` units now if allowed; otherwise say how long to wait. Never waits. */
  tryAcquire(key: string, cost: number, limit: number, windowMs: number): TryResult | Promise<TryResult>;
}

/** Grants a window holds before its buffer first grows: most keys of a busy table are seen a few times. */
const FIRST_CAPACITY = 8;

class Window {
  /** Ring buffer of grant times; grows by doubling up to `limit`, so a key seen once holds a few bytes, not `limit` slots. */
  times: Float64Array;
  /** Index of the oldest grant. */
  head = 0;
  count = 0;
  /** The window it was last counted in, ms, and the time of its newest grant: when that has left, the key holds nothing. */
  windowMs = 0;
  newest = -Infinity;
  constructor(readonly limit: number) {
    this.times = new Float64Array(Math.min(limit, FIRST_CAPACITY));
  }

  /** Drop grants older than the window. */
  expire(now: number, windowMs: number): void {
    while (this.count > 0 && now - this.times[this.head]! >= windowMs) {
      this.head = (this.head + 1) % this.times.length;
      this.count--;
    }
  }

  /** When the unit `k` places from the oldest leaves the window. */
  freeAt(k: number, windowMs: number): number {
    return this.times[(this.head + k) % this.times.length]! + windowMs;
  }

  push(now: number): void {
    if (this.count === this.times.length) this.grow();
    this.times[(this.head + this.count) % this.times.length] = now;
    this.count++;
    this.newest = now;
  }

  private grow(): void {
    const next = new Float64Array(Math.min(this.limit, this.times.length * 2));
    for (let i = 0; i < this.count; i++) next[i] = this.times[(this.head + i) % this.times.length]!;
    this.times = next;
    this.head = 0;
  }
}

export interface MemoryRateLimiterOptions {
  /** Clock in milliseconds; performance.now() by default (monotonic). */
  now?: () => number;
}

/** Keys held before the first sweep for idle ones; each sweep sets the next at twice the keys it kept. */
const FIRST_SWEEP_AT = 1024;

export class MemoryRateLimiter implements RateLimiter {
  readonly scope = "process";
  private readonly windows = new Map<string, Window>();
  private readonly now: () => number;
  private sweepAt = FIRST_SWEEP_AT;

  constructor(opts: MemoryRateLimiterOptions = {}) {
    this.now = opts.now ?? (() => performance.now());
  }

  private window(key: string, limit: number): Window {
    let w = this.windows.get(key);
    if (!w || w.limit !== limit) {
      const next = new Window(limit);
      // A changed limit keeps the grants that still fit, so the rule is not broken by reconfiguration.
      if (w) for (let i = Math.max(0, w.count - limit); i < w.count; i++) next.push(w.times[(w.head + i) % w.times.length]!);
      if (!w && this.windows.size >= this.sweepAt) this.sweep();
      w = next;
      this.windows.set(key, w);
    }
    return w;
  }

  /**
   * Forget keys whose every grant has left their window: they would be
   * granted exactly as a new key is. Without it every API key, user and IP
   * ever seen is held for the collector's life, and callers that send a new
   * key each time grow it without bound.
   */
  private sweep(): void {
    const now = this.now();
    for (const [key, w] of this.windows) if (now - w.newest >= w.windowMs) this.windows.delete(key);
    this.sweepAt = Math.max(FIRST_SWEEP_AT, this.windows.size * 2);
  }

  /** Keys it holds grants for (idle ones are forgotten as new keys come). */
  get size(): number {
    return this.windows.size;
  }

  tryAcquire(key: string, cost: number, limit: number, windowMs: number): TryResult {
    if (cost > limit) throw new RangeError(`cost ${cost} exceeds the limit ${limit}; it could never be granted`);
    const now = this.now();
    const w = this.window(key, limit);
    w.windowMs = windowMs;
    w.expire(now, windowMs);
    const resetMs = w.count > 0 ? Math.max(0, w.freeAt(0, windowMs) - now) : 0;
    if (w.count + cost <= limit) {
      for (let i = 0; i < cost; i++) w.push(now);
      return { ok: true, remaining: limit - w.count, resetMs: w.count > 0 ? Math.max(0, w.freeAt(0, windowMs) - now) : windowMs };
    }
    // Enough room appears when the (count + cost - limit)-th oldest grant expires.
    const retryAfterMs = Math.max(0, w.freeAt(w.count + cost - limit - 1, windowMs) - now);
    return { ok: false, remaining: 0, retryAfterMs, resetMs };
  }

  acquire(key: string, cost: number, limit: number, windowMs: number, signal?: AbortSignal): Promise<void> {
    return acquireBy(() => this.tryAcquire(key, cost, limit, windowMs), signal);
  }
}

/** acquire() for any limiter: try, and sleep exactly until the limiter says room appears. */
export async function acquireBy(attempt: () => TryResult | Promise<TryResult>, signal?: AbortSignal): Promise<void> {
  for (;;) {
    signal?.throwIfAborted();
    const r = await attempt();
    if (r.ok) return;
    // +1 ms: timers may fire a hair early relative to the limiter's clock.
    await sleep(Math.ceil(r.retryAfterMs) + 1, signal);
  }
}

/**
 * The window a client should keep, for a server that counts `windowMs`. The
 * server counts arrivals, which lag our grants by a varying delay: a few
 * milliseconds in steady state, but up to ~200 ms while a process starts (new
 * connections, a busy event loop), and processes sharing a Redis window see
 * each other's lag. 250 ms longer (a quarter for windows under a second)
 * absorbs that and still uses 97.6% of a 6000 / 10 s row.
 */
export function arrivalWindowMs(windowMs: number): number {
  return windowMs + Math.min(250, windowMs * 0.25);
}
