import { afterEach, describe, expect, it } from "vitest";
import { MemoryRateLimiter } from "../../../src/ratelimit/limiter.js";
import { errors } from "../../../src/server/middleware/errors.js";
import { rateLimit } from "../../../src/server/middleware/rate-limit.js";
import { HttpError } from "../../../src/server/http-error.js";
import { serveChain, type Served } from "../../helpers/middleware.js";

let served: Served | undefined;
afterEach(async () => {
  await served?.close();
  served = undefined;
});

describe("rate limit", () => {
  it("puts X-RateLimit headers on answers, an error's included, and answers 429 with Retry-After past the limit", async () => {
    let fail = false;
    served = await serveChain(
      [
        errors({ maxListedIssues: 100 }),
        rateLimit({ limiter: new MemoryRateLimiter(), region: "us", overrides: { "runs-post": { limit: 2, windowMs: 60_000 } } }),
      ],
      async () => {
        if (fail) throw new HttpError(400, "bad");
        return { status: 202, body: {} };
      },
    );
    const first = await fetch(`${served.url}/runs`, { method: "POST", headers: { "x-api-key": "k" } });
    expect(first.status).toBe(202);
    expect(first.headers.get("x-ratelimit-limit")).toBe("2");
    expect(first.headers.get("x-ratelimit-remaining")).toBe("1");
    fail = true;
    const second = await fetch(`${served.url}/runs`, { method: "POST", headers: { "x-api-key": "k" } });
    expect(second.status).toBe(400);
    expect(second.headers.get("x-ratelimit-remaining")).toBe("0");
    const third = await fetch(`${served.url}/runs`, { method: "POST", headers: { "x-api-key": "k" } });
    expect(third.status).toBe(429);
    expect(Number(third.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(third.headers.get("x-ratelimit-limit")).toBe("2");
    expect(String(((await third.json()) as { detail: string }).detail)).toMatch(/rate limit exceeded: 2 requests per 60 s/);
  });

  it("leaves skipped paths alone", async () => {
    served = await serveChain([
      errors({ maxListedIssues: 100 }),
      rateLimit({ limiter: new MemoryRateLimiter(), region: "us", skip: (p) => p === "/" }),
    ]);
    const page = await fetch(`${served.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("x-ratelimit-limit")).toBeNull();
    // Another path falls to the table's catch-all row.
    expect((await fetch(`${served.url}/elsewhere`)).headers.get("x-ratelimit-limit")).toBe("100");
  });
});
