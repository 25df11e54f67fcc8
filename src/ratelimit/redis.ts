/**
 * A sliding-window limiter shared by every process that uses the same Redis
 * and key: several backfill shards (or app replicas) on one API key stay, all
 * together, under that key's SPEC §8 limit.
 *
 * One Lua script does the whole decision atomically on the server, with the
 * server's clock (`TIME`), so the processes' clocks never matter: drop grants
 * that have left the window, count the rest, and either record `cost` new
 * grants or answer how long until enough of the oldest ones leave. Grants are
 * members of a sorted set scored by their time in microseconds, the same
 * exact rule as MemoryRateLimiter (no fixed-window bursts at the edges).
 */
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { acquireBy, type RateLimiter, type TryResult } from "./limiter.js";

const SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local limit = tonumber(ARGV[1])
local win = tonumber(ARGV[2]) * 1000
local cost = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - win)
local n = redis.call('ZCARD', KEYS[1])
if n + cost <= limit then
  for i = 1, cost do redis.call('ZADD', KEYS[1], now, ARGV[4] .. ':' .. i) end
  redis.call('PEXPIRE', KEYS[1], math.ceil(win / 1000) + 1000)
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {1, limit - n - cost, math.max(0, tonumber(oldest[2]) + win - now)}
end
local k = n + cost - limit - 1
local nth = redis.call('ZRANGE', KEYS[1], k, k, 'WITHSCORES')
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {0, math.max(1, tonumber(nth[2]) + win - now), math.max(0, tonumber(first[2]) + win - now)}
`;

type Limited = Redis & {
  tracepipeAcquire(key: string, limit: number, windowMs: number, cost: number, token: string): Promise<[number, number, number]>;
};

export interface RedisRateLimiterOptions {
  /** Prefix of the keys it writes. Default `tracepipe:ratelimit:`. */
  prefix?: string;
  /**
   * How long one decision may take before it fails, ms (only with a URL; a
   * client passed in keeps its own settings). Default 2000.
   */
  commandTimeoutMs?: number;
  /**
   * Told once when Redis becomes unreachable and once when it is back (only
   * with a URL). Without a listener of its own, ioredis prints every failed
   * reconnect, with a stack, to stderr, many times a second while Redis is away.
   */
  log?: (line: string) => void;
}

/**
 * A Redis that is connected but does not answer (stopped, swapping, a network
 * that drops packets without a reset) would otherwise hold every caller
 * forever: the collector's requests, GET /info included, would hang instead
 * of being answered 503 as while Redis is away.
 */
const COMMAND_TIMEOUT_MS = 2000;

/** One line when Redis goes away (with the first error's reason), one when it answers again. */
function watchReachability(redis: Redis, log: (line: string) => void): void {
  let away = false;
  redis.on("error", (err: Error) => {
    if (away) return;
    away = true;
    log(`rate limiter: Redis is unreachable (${err.message}); its decisions fail until it answers again`);
  });
  redis.on("ready", () => {
    if (!away) return;
    away = false;
    log("rate limiter: Redis is reachable again");
  });
}

export class RedisRateLimiter implements RateLimiter {
  readonly scope = "shared";
  private readonly redis: Limited;
  private readonly owned: boolean;
  private readonly prefix: string;

  /** `url` such as `redis://127.0.0.1:6379/0`, or an ioredis client the caller keeps owning. */
  constructor(url: string | Redis, opts: RedisRateLimiterOptions = {}) {
    this.owned = typeof url === "string";
    const redis =
      typeof url === "string"
        ? new Redis(url, {
            lazyConnect: false,
            maxRetriesPerRequest: 3,
            enableOfflineQueue: true,
            commandTimeout: opts.commandTimeoutMs ?? COMMAND_TIMEOUT_MS,
          })
        : url;
    if (typeof url === "string") watchReachability(redis, opts.log ?? (() => undefined));
    redis.defineCommand("tracepipeAcquire", { numberOfKeys: 1, lua: SCRIPT });
    this.redis = redis as Limited;
    this.prefix = opts.prefix ?? "tracepipe:ratelimit:";
  }

  async tryAcquire(key: string, cost: number, limit: number, windowMs: number): Promise<TryResult> {
    if (cost > limit) throw new RangeError(`cost ${cost} exceeds the limit ${limit}; it could never be granted`);
    const [ok, a, resetUs] = await this.redis.tracepipeAcquire(this.prefix + key, limit, Math.ceil(windowMs), cost, randomUUID());
    if (ok === 1) return { ok: true, remaining: a, resetMs: resetUs / 1000 };
    return { ok: false, remaining: 0, retryAfterMs: a / 1000, resetMs: resetUs / 1000 };
  }

  acquire(key: string, cost: number, limit: number, windowMs: number, signal?: AbortSignal): Promise<void> {
    return acquireBy(() => this.tryAcquire(key, cost, limit, windowMs), signal);
  }

  async close(): Promise<void> {
    if (this.owned) await this.redis.quit();
  }
}
