import { describe, expect, it } from "vitest";
import { matchLimit, RATE_LIMITS } from "../../src/ratelimit/index.js";

const KEY = { "x-api-key": "k1" };
const USER = { "x-user-id": "u1" };
const UUID = "01890a5d-ac96-774b-bcce-b302099a8057";

describe("SPEC §8 table matching", () => {
  it.each([
    ["OPTIONS", "/runs/anything", {}, "info", 2000, 10],
    ["GET", "/info", {}, "info", 2000, 10],
    ["POST", "/api/v1/metadata/submit", KEY, "info", 2000, 10],
    ["POST", "/auth/login", KEY, "auth-key", 2000, 10],
    ["POST", "/auth/login", USER, "auth-user", 2000, 10],
    ["GET", "/v1/beacon", {}, "beacon", 2000, 10],
    ["GET", "/repos/acme/prompt", KEY, "repos-key", 100, 60],
    ["GET", "/repos/acme/prompt", USER, "repos-user", 100, 60],
    ["POST", "/runs/batch", KEY, "runs-batch", 2000, 10],
    ["POST", "/otel/v1/traces", KEY, "otel-traces", 2000, 10],
    ["POST", "/api/charts/section", KEY, "charts-key", 750, 600],
    ["POST", "/api/charts/section", USER, "charts-user", 750, 600],
    ["POST", "/runs/multipart", KEY, "runs-multipart", 6000, 10],
    ["POST", "/runs/query", KEY, "runs-query-key", 15, 10],
    ["POST", "/runs/query", USER, "runs-query-user", 300, 10],
    ["POST", "/generate/x", KEY, "generate-key", 30, 3600],
    ["POST", "/generate/x", USER, "generate-user", 30, 3600],
    ["POST", "/commits/acme/p", KEY, "commits-key", 10000, 60],
    ["GET", "/commits/acme/p", USER, "commits-user", 10000, 60],
    ["DELETE", "/sessions", KEY, "deletion-key", 10, 60],
    ["POST", "/workflows/7/trigger", USER, "deletion-user", 30, 60],
    ["POST", "/runs", KEY, "runs-post", 2000, 10],
    ["PATCH", `/runs/${UUID}`, KEY, "runs-patch", 2000, 10],
    ["POST", "/feedback", KEY, "feedback", 2000, 10],
    ["GET", `/runs/${UUID}`, KEY, "run-lookup", 30, 60],
    ["GET", `/api/v1/runs/${UUID}`, KEY, "run-lookup", 30, 60],
    ["GET", "/datasets/1/examples", KEY, "examples", 5000, 60],
    ["GET", "/sessions", KEY, "default-key", 1000, 10],
    ["GET", "/sessions", USER, "default-user", 1000, 10],
    ["GET", "/public/download/x", {}, "public-download", 5000, 60],
    ["GET", "/runs/stats", KEY, "runs-stats", 1, 10],
    ["GET", "/anything", {}, "catch-all", 100, 60],
  ])("%s %s %j -> %s (%i / %is)", (method, path, headers, id, limit, seconds) => {
    const m = matchLimit({ method, path, headers, ip: "10.0.0.1" });
    expect(m?.rule.id).toBe(id);
    expect(m?.limit).toBe(limit);
    expect(m?.windowMs).toBe(seconds * 1000);
  });

  it("uses the EU column where SPEC gives two values", () => {
    expect(matchLimit({ method: "GET", path: "/commits/a", headers: KEY }, "eu")?.limit).toBe(2000);
    expect(matchLimit({ method: "GET", path: "/runs/stats", headers: KEY }, "eu")?.limit).toBe(20);
    expect(matchLimit({ method: "POST", path: "/runs/multipart", headers: KEY }, "eu")?.limit).toBe(6000);
  });

  it("keys the limit by row and identity, so API keys count separately", () => {
    const a = matchLimit({ method: "POST", path: "/runs/multipart", headers: { "x-api-key": "a" } })!;
    const b = matchLimit({ method: "POST", path: "/runs/multipart", headers: { "x-api-key": "b" } })!;
    expect(a.key).not.toBe(b.key);
    const user = matchLimit({ method: "POST", path: "/runs/query", headers: USER, ip: "1.2.3.4" })!;
    expect(user.key).toBe("runs-query-user|user:u1|ip:1.2.3.4");
  });

  it("falls through a row whose identity header is absent", () => {
    expect(matchLimit({ method: "POST", path: "/runs/multipart", headers: {}, ip: "9.9.9.9" })?.rule.id).toBe("catch-all");
  });

  it("holds every row of the table", () => {
    expect(RATE_LIMITS).toHaveLength(29);
    expect(new Set(RATE_LIMITS.map((r) => r.category)).size).toBe(17);
  });
});
