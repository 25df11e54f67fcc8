import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { join } from "node:path";
import { readFileSync } from "node:fs";
import { RedisRateLimiter } from "../../src/ratelimit/redis.js";
import { skipWithoutRedis, startRedis, type RunningRedis } from "../helpers/redis.js";
import { startServeProcess, type ServeProcess } from "../helpers/collector.js";
import { maxInWindow, startProxy } from "../helpers/proxy.js";
import { runCli, jsonLines } from "../helpers/cli.js";
import { writeGenericLog } from "../helpers/logs.js";
import { tempDir } from "../helpers/runs.js";

// Without redis-server (and not under CI) every test here is skipped with a notice.
describe.skipIf(skipWithoutRedis())("with a real redis-server", () => {
  let redis: RunningRedis;
  beforeAll(async () => {
    redis = await startRedis();
  }, 20_000);
  afterAll(async () => {
    await redis?.close();
  });

  describe("RedisRateLimiter", () => {
    it("grants exactly the limit across processes' connections racing for one key, then says when room appears", async () => {
      const a = new RedisRateLimiter(redis.url);
      const b = new RedisRateLimiter(redis.url);
      try {
        const key = `race-${Date.now()}`;
        const results = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 ? a : b).tryAcquire(key, 1, 20, 60_000)));
        expect(results.filter((r) => r.ok)).toHaveLength(20);
        const refused = results.find((r) => !r.ok)!;
        expect(refused.ok).toBe(false);
        if (!refused.ok) {
          expect(refused.retryAfterMs).toBeGreaterThan(50_000);
          expect(refused.retryAfterMs).toBeLessThanOrEqual(60_000);
        }
        // Another key counts separately; a cost above the limit can never be granted.
        expect((await a.tryAcquire(`${key}-other`, 5, 20, 60_000)).ok).toBe(true);
        await expect(a.tryAcquire(key, 21, 20, 1000)).rejects.toThrow(RangeError);
      } finally {
        await a.close();
        await b.close();
      }
    });

    it("acquire() waits for the window to slide instead of failing", async () => {
      const lim = new RedisRateLimiter(redis.url);
      try {
        const key = `wait-${Date.now()}`;
        const t0 = performance.now();
        for (let i = 0; i < 6; i++) await lim.acquire(key, 1, 3, 300);
        // Grants 4..6 had to wait for grants 1..3 to leave the 300 ms window.
        expect(performance.now() - t0).toBeGreaterThanOrEqual(290);
      } finally {
        await lim.close();
      }
    });
  });

  describe("a collector whose Redis stops answering", () => {
    let col: ServeProcess;
    beforeAll(async () => {
      col = await startServeProcess(["--rate-limiter", redis.url]);
    }, 30_000);
    afterAll(async () => {
      redis.resume();
      await col?.close();
    });

    it("answers 503 with Retry-After instead of holding the request, and counts again once Redis is back", async () => {
      expect((await fetch(`${col.url}/info`)).status).toBe(200);
      redis.pause();
      try {
        // The request's own deadline is far beyond the limiter's, so a hang shows as this fetch failing.
        const res = await fetch(`${col.url}/info`, { signal: AbortSignal.timeout(20_000) });
        expect(res.status).toBe(503);
        expect(res.headers.get("retry-after")).toBe("1");
        expect(((await res.json()) as { detail: string }).detail).toMatch(/rate limiter is unavailable/);
      } finally {
        redis.resume();
      }
      const back = await fetch(`${col.url}/info`, { signal: AbortSignal.timeout(20_000) });
      expect(back.status).toBe(200);
      expect(back.headers.get("x-ratelimit-limit")).toBe("2000");
    }, 60_000);
  });

  describe("a collector whose Redis goes away", () => {
    let gone: RunningRedis;
    let col: ServeProcess;
    beforeAll(async () => {
      gone = await startRedis();
      col = await startServeProcess(["--rate-limiter", gone.url]);
    }, 30_000);
    afterAll(async () => {
      await col?.close();
      await gone?.close();
    });

    it("says so once, naming the reason, instead of a stack per reconnect attempt", async () => {
      expect((await fetch(`${col.url}/info`)).status).toBe(200);
      await gone.close();
      const res = await fetch(`${col.url}/info`, { signal: AbortSignal.timeout(20_000) });
      expect(res.status).toBe(503);
      // Reconnect attempts go on meanwhile (ioredis retries at growing intervals, the first within a second).
      await new Promise((r) => setTimeout(r, 1500));
      const lines = col.output().split("\n");
      expect(lines.filter((l) => l.includes("Redis is unreachable"))).toEqual([
        expect.stringMatching(/^tracepipe serve: rate limiter: Redis is unreachable \(.+\); its decisions fail/),
      ]);
      expect(col.output()).not.toMatch(/Unhandled error event/);
    }, 60_000);
  });

  describe("two sharded backfill processes sharing one Redis limiter", () => {
    let col: ServeProcess;
    beforeAll(async () => {
      col = await startServeProcess();
    }, 30_000);
    afterAll(async () => {
      await col?.close();
    });

    it("never exceed the lowered limit in any window together, and deliver every record exactly once", async () => {
      const proxy = await startProxy(col.url);
      // The grants, as the limiter recorded them: each is a ZADD its script makes, scored with the Redis
      // server's clock in microseconds. MONITOR reports them with that score, however late this process reads them.
      const grants = new Map<string, number[]>();
      const watcher = new Redis(redis.url);
      const monitor = await watcher.monitor();
      monitor.on("monitor", (_time: string, args: string[], source: string) => {
        if (!source.includes("lua") || args[0]?.toUpperCase() !== "ZADD") return;
        const list = grants.get(args[1]!) ?? [];
        list.push(Number(args[2]) / 1000);
        grants.set(args[1]!, list);
      });
      try {
        const dir = tempDir("tp-bf-redis-");
        const log = join(dir, "shared.jsonl");
        const bad = await writeGenericLog(log, 400, 0.01, 11);
        const common = [
          "--endpoint",
          proxy.url,
          "--api-key",
          "shared-key",
          "--project",
          "sharded",
          "--rate-limiter",
          redis.url,
          "--rate-limit",
          "10/1s",
          "--batch-size",
          "5",
          "--progress",
          "none",
        ];
        const [r0, r1] = await Promise.all(
          [0, 1].map((i) =>
            runCli(
              [
                "backfill",
                log,
                "--shard",
                `${i}/2`,
                "--dead-letter",
                join(dir, `dead-${i}.jsonl`),
                "--spool-dir",
                join(dir, `spool-${i}`),
                ...common,
              ],
              { timeoutMs: 90_000 },
            ),
          ),
        );
        for (const r of [r0!, r1!]) expect(r.code, r.stderr.slice(-1500)).toBe(bad.length ? 1 : 0);
        const s = [r0!, r1!].map(
          (r) => (jsonLines(r.stdout).at(-1) as { summary: { records: number; delivered: number; skipped_other_shards: number } }).summary,
        );
        expect(s[0]!.records + s[1]!.records).toBe(400);
        expect(s[0]!.skipped_other_shards).toBe(s[1]!.records);
        expect(s[0]!.delivered + s[1]!.delivered).toBe(400 - bad.length);
        expect(col.count("sharded")).toEqual({ n: 400 - bad.length, d: 400 - bad.length });
        const deadLines = [0, 1].flatMap((i) =>
          readFileSync(join(dir, `dead-${i}.jsonl`), "utf8")
            .trim()
            .split("\n")
            .filter(Boolean)
            .map((l) => (JSON.parse(l) as { line: number }).line),
        );
        expect(deadLines.sort((x, y) => x - y)).toEqual(bad);
        // Measured where the processes decide together: the shared limiter's grants, on its own clock. Two
        // processes with their own in-memory limiters would grant 20 in a window here; the shared window
        // holds both to 10. Arrival stamps at the proxy are not the limiter's to control (a starved proxy
        // stamps a queue of requests at once); they are checked only for coming after their grants.
        await new Promise((r) => setTimeout(r, 200)); // MONITOR's last lines
        expect([...grants.keys()]).toHaveLength(1);
        const granted = [...grants.values()][0]!.sort((a, b) => a - b);
        const arrivals = proxy.times.map((t) => performance.timeOrigin + t).sort((a, b) => a - b);
        expect(arrivals.length).toBeGreaterThanOrEqual(80);
        expect(granted.length).toBeGreaterThanOrEqual(arrivals.length);
        expect(maxInWindow(granted, 1000)).toBeLessThanOrEqual(10);
        expect(maxInWindow(granted, 1000)).toBeGreaterThanOrEqual(8);
        // Each request left only once granted: the i-th arrival is no earlier than the i-th grant (two clocks
        // read from one system clock, to within a couple of milliseconds).
        for (const [i, t] of arrivals.entries()) expect(t + 2).toBeGreaterThanOrEqual(granted[i]!);
      } finally {
        monitor.disconnect();
        watcher.disconnect();
        await proxy.close();
      }
    }, 120_000);
  });
});
