/**
 * Which SPEC §8 limit applies to a request.
 *
 * Precedence: the specific rows, in table order, then the fallbacks (the API-key
 * default, the user default, the IP catch-all). A row counts against an
 * identity, so a row whose identity header is absent does not apply and the
 * search goes on. One request is counted against one row: the first that applies.
 * Specific rows listed after the defaults in SPEC (/public/download, /runs/stats)
 * still win over them, since a default would otherwise shadow them.
 */
import { RATE_LIMITS, type LimitRule, type PathMatch } from "./table.js";

export type Region = "us" | "eu";

export interface LimitRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  ip?: string;
}

export interface MatchedLimit {
  rule: LimitRule;
  /** The limiter key: row id plus identity, so rows and callers count separately. */
  key: string;
  limit: number;
  windowMs: number;
}

function header(h: LimitRequest["headers"], name: string): string | undefined {
  const v = h[name] ?? h[name.toLowerCase()];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s === "" ? undefined : s;
}

function pathMatches(path: string, m: PathMatch): boolean {
  if ("exact" in m) return path === m.exact || path === m.exact + "/";
  if ("prefix" in m) return path === m.prefix || path.startsWith(m.prefix.endsWith("/") ? m.prefix : m.prefix + "/");
  if ("contains" in m) return path.includes(m.contains);
  if ("suffix" in m) return path.endsWith(m.suffix);
  return m.regex.test(path);
}

function ruleMatches(rule: LimitRule, method: string, path: string): boolean {
  if (rule.match.length === 0) return true;
  return rule.match.some((m) => (!m.methods || m.methods.includes(method)) && (!m.path || pathMatches(path, m.path)));
}

function identityKey(rule: LimitRule, req: LimitRequest): string | undefined {
  const ip = req.ip ?? "unknown";
  switch (rule.identity) {
    case "ip":
      return `ip:${ip}`;
    case "x-api-key": {
      const k = header(req.headers, "x-api-key");
      return k === undefined ? undefined : `key:${k}`;
    }
    case "x-user-id+ip": {
      const u = header(req.headers, "x-user-id");
      return u === undefined ? undefined : `user:${u}|ip:${ip}`;
    }
  }
}

function toMatched(rule: LimitRule, id: string, region: Region): MatchedLimit {
  return { rule, key: `${rule.id}|${id}`, limit: rule.limit[region], windowMs: rule.intervalSeconds * 1000 };
}

function* candidates(req: LimitRequest, region: Region, table: readonly LimitRule[]): Generator<MatchedLimit> {
  const method = req.method.toUpperCase();
  const q = req.path.indexOf("?");
  const path = q < 0 ? req.path : req.path.slice(0, q);
  for (const fallbacks of [false, true]) {
    for (const rule of table) {
      if ((rule.fallback === true) !== fallbacks || !ruleMatches(rule, method, path)) continue;
      const id = identityKey(rule, req);
      if (id !== undefined) yield toMatched(rule, id, region);
    }
  }
}

/** Every row that would apply, in precedence order (the first is the one enforced). */
export function matchLimits(req: LimitRequest, region: Region = "us", table: readonly LimitRule[] = RATE_LIMITS): MatchedLimit[] {
  return [...candidates(req, region, table)];
}

/** The one limit enforced for this request. With the IP catch-all in the table there always is one. */
export function matchLimit(req: LimitRequest, region: Region = "us", table: readonly LimitRule[] = RATE_LIMITS): MatchedLimit | undefined {
  for (const m of candidates(req, region, table)) return m;
  return undefined;
}
