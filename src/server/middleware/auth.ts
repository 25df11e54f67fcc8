/**
 * API-key auth: with a key configured, every request needs `X-Api-Key` equal to
 * it (401 otherwise), except the paths the caller exempts (routes that
 * authenticate another way, and pages that carry no run data).
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { HttpError } from "../http-error.js";
import type { Middleware } from "./compose.js";

export interface AuthOptions {
  /** The expected key; undefined lets every request through. */
  apiKey: string | undefined;
  /** Requests that need no key. */
  exempt?: (method: string, path: string) => boolean;
}

export function apiKeyAuth(o: AuthOptions): Middleware {
  return (x, next) => {
    if (o.apiKey === undefined || o.exempt?.(x.method, x.url.pathname)) return next();
    const given = x.req.headers["x-api-key"];
    if (!secretMatches(typeof given === "string" ? given : undefined, o.apiKey)) {
      throw new HttpError(401, given === undefined ? "missing X-Api-Key header" : "invalid API key");
    }
    return next();
  };
}

/**
 * Whether a presented secret (API key, webhook token) equals the expected one,
 * in constant time: both are hashed to equal-length digests first, so neither
 * the comparison nor a length check leaks anything about the secret.
 */
export function secretMatches(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}
