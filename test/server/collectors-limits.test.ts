/**
 * SPEC §8 limits across collectors: two `serve` processes with an API key and
 * one Redis keep a key's limit together (the run-query row, 15 requests per
 * 10 s per key, the table's own figure); two without Redis each count alone,
 * and GET /info says which. Redis going away makes requests 503 with
 * Retry-After, never a pass without a count.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skipWithoutPostgres, sharedPostgres, type PostgresDatabases } from "../helpers/postgres.js";
import { skipWithoutRedis, startRedis, type RunningRedis } from "../helpers/redis.js";
import { startServeChildren, stopServeChildren, type ServeChild } from "../helpers/serve-processes.js";
import { RATE_LIMITS } from "../../src/ratelimit/table.js";

const KEY = "side-by-side-key";
const QUERY_ROW = RATE_LIMITS.find((r) => r.id === "runs-query-key")!;

/** `n` run queries with the key, alternating between the collectors, all at once; the statuses and how long the burst took. */
async function burst(
  children: readonly ServeChild[],
  n: number,
): Promise<{ statuses: number[]; retryAfter: (string | null)[]; ms: number }> {
  const t0 = performance.now();
  const answers = await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const res = await fetch(`${children[i % children.length]!.url}/runs/query`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": KEY },
        body: JSON.stringify({ limit: 1 }),
      });
      await res.arrayBuffer();
      return { status: res.status, retryAfter: res.headers.get("retry-after") };
    }),
  );
  return {
    statuses: answers.map((a) => a.status),
    retryAfter: answers.filter((a) => a.status === 429).map((a) => a.retryAfter),
    ms: performance.now() - t0,
  };
}

const count = (xs: number[], v: number) => xs.filter((x) => x === v).length;

describe.skipIf(skipWithoutPostgres() || skipWithoutRedis())("rate limits across collectors", () => {
  let cluster: PostgresDatabases;
  let redis: RunningRedis;
  let shared: ServeChild[] = [];
  let alone: ServeChild[] = [];
  beforeAll(async () => {
    [cluster, redis] = await Promise.all([sharedPostgres(), startRedis()]);
    shared = await startServeChildren(2, ["--store", await cluster.database(), "--api-key", KEY, "--rate-limiter", redis.url]);
    alone = await startServeChildren(2, ["--store", await cluster.database(), "--api-key", KEY]);
  }, 90_000);
  afterAll(async () => {
    await stopServeChildren([...shared, ...alone]);
    await redis?.close();
  }, 60_000);

  it("says in GET /info whether the limits are shared or counted by each collector alone", async () => {
    const info = async (c: ServeChild) =>
      ((await (await fetch(`${c.url}/info`, { headers: { "x-api-key": KEY } })).json()) as { rate_limits: unknown }).rate_limits;
    expect(await info(shared[0]!)).toEqual({ enabled: true, scope: "shared", region: "us" });
    expect(await info(alone[0]!)).toEqual({ enabled: true, scope: "process", region: "us" });
  });

  it("grants a key no more than the table's row across two collectors sharing Redis, and 429s the rest with Retry-After", async () => {
    expect(QUERY_ROW.limit.us).toBe(15);
    const n = QUERY_ROW.limit.us * 3;
    const shot = await burst(shared, n);
    // The whole burst inside one window, or the count below would not be the row's.
    expect(shot.ms).toBeLessThan(QUERY_ROW.intervalSeconds * 1000);
    expect(count(shot.statuses, 200)).toBe(QUERY_ROW.limit.us);
    expect(count(shot.statuses, 429)).toBe(n - QUERY_ROW.limit.us);
    for (const r of shot.retryAfter) expect(Number(r)).toBeGreaterThanOrEqual(1);
    // Still inside the window: nothing more for the key, on either collector.
    const again = await burst(shared, 4);
    expect(count(again.statuses, 429)).toBe(4);
  });

  it("counts per collector without Redis: each grants the row once", async () => {
    const n = QUERY_ROW.limit.us * 3;
    const shot = await burst(alone, n);
    expect(shot.ms).toBeLessThan(QUERY_ROW.intervalSeconds * 1000);
    expect(count(shot.statuses, 200)).toBe(QUERY_ROW.limit.us * alone.length);
  });

  it("answers 503 with Retry-After while Redis is away, not an uncounted pass", async () => {
    await redis.close();
    const res = await fetch(`${shared[1]!.url}/runs`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": KEY },
      body: "{}",
    });
    expect(res.status).toBe(503);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/rate limiter is unavailable/);
  }, 30_000);
});
