/**
 * SPEC §8 rate limits: the request's row of the limits table, one token from the
 * limiter per request, `X-RateLimit-*` on every answer and 429 with
 * `Retry-After` past the limit. A shared limiter that cannot answer (Redis
 * away) makes the request a 503 with `Retry-After`: without its count the
 * limit cannot be kept, and the client retries once it is back.
 */
import { HttpError } from "../http-error.js";
import type { RateLimiter } from "../../ratelimit/limiter.js";
import { matchLimit, type Region } from "../../ratelimit/match.js";
import type { Middleware } from "./compose.js";

/** Retry-After (s) while the limiter is away: a Redis restart or failover takes seconds. */
const LIMITER_RETRY_AFTER_S = 1;

export interface RateLimitOptions {
  limiter: RateLimiter;
  /** Which column of the table applies where US and EU differ. */
  region: Region;
  /** A row's limit replaced, by its id (src/ratelimit/table.ts). */
  overrides?: Record<string, { limit: number; windowMs: number }>;
  /** Paths outside the table's scope. */
  skip?: (path: string) => boolean;
}

export function rateLimit(o: RateLimitOptions): Middleware {
  const overrides = o.overrides ?? {};
  return async (x, next) => {
    if (o.skip?.(x.url.pathname)) return next();
    const m = matchLimit({ method: x.method, path: x.url.pathname, headers: x.req.headers, ip: x.ip }, o.region);
    if (!m) return next();
    const override = overrides[m.rule.id];
    const limit = override?.limit ?? m.limit;
    const windowMs = override?.windowMs ?? m.windowMs;
    let r: Awaited<ReturnType<RateLimiter["tryAcquire"]>>;
    try {
      r = await o.limiter.tryAcquire(m.key, 1, limit, windowMs);
    } catch (err) {
      throw new HttpError(503, `the shared rate limiter is unavailable: ${(err as Error)?.message ?? String(err)}`, {
        "retry-after": String(LIMITER_RETRY_AFTER_S),
      });
    }
    const headers = {
      "x-ratelimit-limit": String(limit),
      "x-ratelimit-remaining": String(r.remaining),
      "x-ratelimit-reset": String(Math.ceil(r.resetMs / 1000)),
    };
    if (!r.ok) {
      throw new HttpError(
        429,
        `rate limit exceeded: ${limit} requests per ${windowMs / 1000} s for ${m.rule.category} (${m.rule.id}); retry after ${Math.ceil(r.retryAfterMs)} ms`,
        {
          ...headers,
          "retry-after": String(Math.max(1, Math.ceil(r.retryAfterMs / 1000))),
        },
      );
    }
    Object.assign(x.replyHeaders, headers);
    return next();
  };
}
