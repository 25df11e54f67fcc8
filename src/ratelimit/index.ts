export { RATE_LIMITS, type LimitRule, type Identity, type PathMatch } from "./table.js";
export { matchLimit, matchLimits, type LimitRequest, type MatchedLimit, type Region } from "./match.js";
export { MemoryRateLimiter, type RateLimiter, type TryResult, type MemoryRateLimiterOptions } from "./limiter.js";
export { RedisRateLimiter, type RedisRateLimiterOptions } from "./redis.js";
