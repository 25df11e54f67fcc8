/** Which failures are worth retrying, and how long to wait (exponential backoff, full jitter, Retry-After). */

export const RETRYABLE_STATUS = new Set([408, 425, 429, 500, 502, 503, 504]);

export function isRetryableStatus(status: number): boolean {
  return RETRYABLE_STATUS.has(status) || status >= 500;
}

/** Retry-After as delta-seconds or an HTTP date, in milliseconds; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const secs = Number(value);
  if (Number.isFinite(secs)) return Math.max(0, secs * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export interface BackoffOptions {
  /** First delay ceiling. Default 200 ms. */
  baseMs?: number;
  /** Largest delay ceiling. Default 30 s. */
  maxMs?: number;
}

/** Full jitter: uniform in [0, min(max, base·2^attempt)]; never below the server's Retry-After. */
export function backoffMs(attempt: number, opts: BackoffOptions = {}, serverMs?: number, random = Math.random): number {
  const base = opts.baseMs ?? 200;
  const max = opts.maxMs ?? 30_000;
  const ceiling = Math.min(max, base * 2 ** Math.min(attempt, 20));
  const jittered = random() * ceiling;
  return serverMs === undefined ? jittered : Math.max(serverMs, jittered);
}
