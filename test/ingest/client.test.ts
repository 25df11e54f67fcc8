import { afterEach, describe, expect, it } from "vitest";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import busboy from "busboy";
import { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { Client } from "../../src/ingest/index.js";
import { encodeMultipart, INLINE_MAX } from "../../src/ingest/multipart.js";
import { isLoopback } from "../../src/ingest/http-sink.js";
import { countTextTokens, loadedEncodings } from "../../src/tokens/index.js";
import { postOp, patchOp } from "../../src/ingest/ops.js";
import { openStore } from "../../src/store/index.js";
import { startCollector, startServeProcess, type Running, sql } from "../helpers/collector.js";
import { maxInWindow, startProxy } from "../helpers/proxy.js";
import { recordingLimiter } from "../helpers/recording-limiter.js";
import { makeRun, tempDir } from "../helpers/runs.js";

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

async function collector(opts: Parameters<typeof startCollector>[0] = {}): Promise<Running> {
  const c = await startCollector(opts);
  cleanup.push(() => c.close());
  return c;
}

function client(endpoint: string | undefined, extra: ConstructorParameters<typeof Client>[0] = {}): Client {
  const dir = tempDir("tp-client-");
  const c = new Client({
    endpoint,
    apiKey: "test-key",
    spoolDir: join(dir, "spool"),
    deadLetterPath: join(dir, "dead.jsonl"),
    dbPath: join(dir, "traces.db"),
    backoff: { baseMs: 20, maxMs: 500 },
    warn: () => {},
    ...extra,
  });
  cleanup.push(async () => void (await c.shutdown()));
  return c;
}

/**
 * flush() resolves once a batch that used its attempts is in the spool for a later retry (and says so in
 * `spooled`); the replay timer sends it when due. Flush again until the result is ok, for at most 10 s.
 */
async function flushUntilOk(c: Client) {
  let res = await c.flush();
  for (let i = 0; i < 200 && !res.ok; i++) {
    await sleep(50);
    res = await c.flush();
  }
  return res;
}

describe("multipart encoding", () => {
  it("gives every part a Content-Type and a Content-Length, and busboy reads it back", async () => {
    const run = makeRun();
    // Large fields of more than INLINE_MAX characters get parts of their own; small ones ride in the run's.
    const big = { text: "x".repeat(INLINE_MAX) };
    const ops = [
      postOp(
        { ...run, inputs: big, outputs: big, events: [{ name: "e", time: "2026-11-22T10:16:00Z", kwargs: big }] },
        { img: ["image/png", new Uint8Array([1, 2, 3])] },
      ),
      patchOp(makeRun().id, { end_time: "2026-11-22T10:16:00Z" }),
    ];
    const { body, contentType } = encodeMultipart(ops);
    const text = body.toString("latin1");
    const parts = text.split(/--tracepipe-[0-9a-f]+(?:--)?\r\n/).filter((p) => p.includes("Content-Disposition"));
    expect(parts.map((p) => /name="([^"]+)"/.exec(p)![1])).toEqual([
      `post.${run.id}`,
      `post.${run.id}.inputs`,
      `post.${run.id}.outputs`,
      `post.${run.id}.events`,
      `attachment.${run.id}.img`,
      `patch.${ops[1]!.id}`,
    ]);
    for (const p of parts) {
      const [head, data] = p.split("\r\n\r\n") as [string, string];
      expect(head).toMatch(/Content-Type: \S+/);
      expect(Number(/Content-Length: (\d+)/.exec(head)![1])).toBe(Buffer.byteLength(data.replace(/\r\n$/, ""), "latin1"));
    }
    const seen: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const bb = busboy({ headers: { "content-type": contentType } });
      bb.on("field", (name) => seen.push(name));
      bb.on("file", (name, s) => (seen.push(name), s.resume()));
      bb.on("close", resolve);
      bb.on("error", reject);
      Readable.from([body]).pipe(bb);
    });
    expect(seen).toHaveLength(6);
  });
});

describe("Client delivery", () => {
  it("releases the token encoders on shutdown", async () => {
    const c = new Client({
      endpoint: undefined,
      dbPath: ":memory:",
      spoolDir: join(tempDir("tp-enc-"), "spool"),
      exitHooks: false,
      warn: () => {},
    });
    countTextTokens("hello there", "gpt-4o");
    expect(loadedEncodings()).toContain("o200k_base");
    await c.shutdown();
    expect(loadedEncodings()).toEqual([]);
  });

  it("writes runs into the embedded SQLite store when no endpoint is set", async () => {
    const c = client(undefined);
    const runs = Array.from({ length: 250 }, () => makeRun("embedded"));
    for (const r of runs) c.createRun(r);
    for (const r of runs.slice(0, 10)) c.updateRun(r.id, { end_time: "2026-11-22T10:16:00.000000Z", outputs: { ok: true } });
    await c.flush();
    const store = await openStore(c.options.dbPath);
    try {
      expect(await store.countRuns("embedded")).toBe(250);
      expect(await store.getRun(runs[0]!.id)).toMatchObject({ outputs: { ok: true }, end_time: "2026-11-22T10:16:00.000000Z" });
    } finally {
      store.close();
    }
  });

  it("merges a create and an update of one id into one post", async () => {
    const col = await collector();
    const c = client(col.url);
    const r = makeRun("merge");
    c.createRun(r);
    c.updateRun(r.id, { end_time: "2026-11-22T10:16:00.000000Z", outputs: { v: 1 } });
    await c.flush();
    expect(c.stats.delivered).toBe(1);
    const got = (await col.collector.store.getRun(r.id))!;
    expect(got).toMatchObject({ name: "work", outputs: { v: 1 } });
  });

  it("fills session_name from the project", async () => {
    const col = await collector();
    const c = client(col.url, { project: "proj-x" });
    const r = makeRun();
    delete (r as Record<string, unknown>).session_name;
    c.createRun(r);
    await c.flush();
    expect((await col.collector.store.getRun(r.id))?.session_name).toBe("proj-x");
  });

  it("loses and duplicates nothing when the server answers 429 with Retry-After", async () => {
    const col = await collector();
    const proxy = await startProxy(col.url, (n) => (n % 2 === 0 ? { status: 429, headers: { "retry-after": "0" } } : "pass"));
    cleanup.push(() => proxy.close());
    const c = client(proxy.url, { batchSize: 50 });
    const runs = Array.from({ length: 1000 }, () => makeRun("r429"));
    for (const r of runs) c.createRun(r);
    // A batch may meet a 429 on every one of its attempts (each is even-numbered by chance) and wait in the spool.
    expect(await flushUntilOk(c)).toMatchObject({ ok: true, spooled: 0, dropped: 0, deadLettered: 0 });
    expect(proxy.statuses.filter((s) => s === 429).length).toBeGreaterThan(5);
    expect(await col.collector.store.countRuns("r429")).toBe(1000);
    expect(c.stats.deadLettered).toBe(0);
  });

  it("loses and duplicates nothing when every third request fails with 500", async () => {
    const col = await collector();
    const proxy = await startProxy(col.url, (n) => (n % 3 === 0 ? { status: 500 } : "pass"));
    cleanup.push(() => proxy.close());
    const c = client(proxy.url, { batchSize: 40 });
    const runs = Array.from({ length: 2000 }, () => makeRun("r500"));
    for (const r of runs) c.createRun(r);
    for (const r of runs) c.updateRun(r.id, { end_time: "2026-11-22T10:16:00.000000Z" });
    await c.flush();
    expect(await col.collector.store.countRuns("r500")).toBe(2000);
    const ended = sql(col.collector.store)
      .prepare("SELECT COUNT(*) AS n FROM runs WHERE session_name = 'r500' AND end_time IS NOT NULL")
      .get() as { n: number };
    expect(ended.n).toBe(2000);
  });

  it("delivers all of 20k runs when the server is down for 5 s in the middle", async () => {
    const dir = tempDir("tp-down-");
    const db = join(dir, "traces.db");
    let col = await startCollector({ db });
    const port = Number(new URL(col.url).port);
    const c = client(col.url, { batchSize: 200 });
    const runs = Array.from({ length: 20_000 }, () => makeRun("down", 300));
    for (const r of runs.slice(0, 8000)) c.createRun(r);
    await new Promise((r) => setTimeout(r, 50));
    await col.close();
    for (const r of runs.slice(8000)) c.createRun(r);
    await new Promise((r) => setTimeout(r, 5000));
    const { createCollector } = await import("../../src/server/app.js");
    const again = await createCollector({ db, rateLimits: false });
    await again.listen(port);
    col = { ...col, collector: again, close: () => again.close() };
    cleanup.push(() => again.close());
    // A batch that used its attempts during the outage waits in the spool for its retry time.
    expect(await flushUntilOk(c)).toMatchObject({ ok: true, spooled: 0, dropped: 0, deadLettered: 0 });
    expect(c.stats.retried).toBeGreaterThan(0);
    expect(await again.store.countRuns("down")).toBe(20_000);
  }, 60_000);

  it("never exceeds a lowered limit in any sliding window", async () => {
    // Measured where the client decides: its grants, stamped with the clock its limiter reads. Arrival
    // stamps at a proxy are not the client's to control (a starved proxy, in this process or one of its
    // own, stamps a queue of requests at once); they are checked only for coming after their grants.
    const col = await startServeProcess();
    cleanup.push(() => col.close());
    const proxy = await startProxy(col.url);
    cleanup.push(() => proxy.close());
    const { limiter, granted } = recordingLimiter();
    const c = client(proxy.url, { batchSize: 5, rateLimit: { limit: 10, windowMs: 1000 }, concurrency: 8, limiter });
    for (let i = 0; i < 300; i++) c.createRun(makeRun("limited", 200));
    await c.flush();
    expect(col.count("limited")).toEqual({ n: 300, d: 300 });
    const times = [...proxy.times].sort((a, b) => a - b);
    expect(times.length).toBeGreaterThanOrEqual(60);
    expect(granted).toHaveLength(times.length);
    expect(maxInWindow(granted, 1000)).toBeLessThanOrEqual(10);
    // Each request left only once granted: the i-th arrival is no earlier than the i-th grant.
    for (const [i, t] of times.entries()) expect(t).toBeGreaterThanOrEqual(granted[i]!);
  }, 120_000);

  it("gzips batches when asked, and by default not on loopback, where it would only cost CPU", async () => {
    const col = await collector();
    for (const [gzip, expected] of [
      [true, "gzip"],
      ["auto", undefined],
    ] as const) {
      const encodings: (string | undefined)[] = [];
      const proxy = await startProxy(col.url, (_n, req) => {
        if (req.url?.endsWith("/runs/multipart")) encodings.push(req.headers["content-encoding"]);
        return "pass";
      });
      cleanup.push(() => proxy.close());
      const c = client(proxy.url, { gzip, batchSize: 5 });
      for (let i = 0; i < 12; i++) c.createRun(makeRun(`gz-${gzip}`, 500));
      await c.flush();
      expect(await col.collector.store.countRuns(`gz-${gzip}`)).toBe(12);
      expect(encodings.length).toBeGreaterThanOrEqual(3);
      expect(new Set(encodings)).toEqual(new Set([expected]));
    }
    expect(isLoopback("http://127.0.0.1:1984")).toBe(true);
    expect(isLoopback("http://[::1]:1984/api")).toBe(true);
    expect(isLoopback("http://localhost")).toBe(true);
    expect(isLoopback("https://api.tracepipe.example")).toBe(false);
  });

  it("warns that without an API key the per-IP catch-all (100 / 60 s) limits multipart ingest", () => {
    const warnings: string[] = [];
    const keyless = new Client({
      endpoint: "http://127.0.0.1:9",
      spoolDir: join(tempDir("tp-keyless-"), "spool"),
      exitHooks: false,
      warn: (m) => warnings.push(m),
    });
    cleanup.push(async () => void (await keyless.shutdown()));
    expect(warnings.join("\n")).toMatch(/no API key.*100 requests per 60 s per IP/);
    warnings.length = 0;
    const keyed = client("http://127.0.0.1:9", { warn: (m: string) => warnings.push(m) });
    const limited = client("http://127.0.0.1:9", {
      apiKey: undefined,
      rateLimit: { limit: 50, windowMs: 1000 },
      warn: (m: string) => warnings.push(m),
    });
    expect(keyed).toBeDefined();
    expect(limited).toBeDefined();
    expect(warnings).toEqual([]);
  });

  it("splits a batch the server finds too large (413) and delivers the halves", async () => {
    const col = await collector({ maxBodyBytes: 12_000 });
    const c = client(col.url, { batchSize: 40, gzip: false });
    for (let i = 0; i < 40; i++) c.createRun(makeRun("split", 2000));
    await c.flush();
    expect(await col.collector.store.countRuns("split")).toBe(40);
  });

  it("sends a run the server refuses to the dead-letter file, with status and detail, and delivers the rest", async () => {
    const col = await collector();
    const c = client(col.url, { batchSize: 10 });
    const bad = { ...makeRun("dl"), start_time: "not a time" };
    const good = Array.from({ length: 9 }, () => makeRun("dl"));
    c.createRun(good[0]!);
    c.createRun(bad);
    for (const g of good.slice(1)) c.createRun(g);
    await c.flush();
    expect(await col.collector.store.countRuns("dl")).toBe(9);
    const lines = readFileSync(c.options.deadLetterPath, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      status: 422,
      runs: [{ id: bad.id }],
      detail: [expect.objectContaining({ loc: [`post.${bad.id}`, "start_time"] })],
    });
  });

  it("spills to the spool past maxQueueBytes and still delivers everything", async () => {
    const col = await collector();
    const c = client(col.url, { maxQueueBytes: 20_000, batchSize: 10 });
    for (let i = 0; i < 300; i++) c.createRun(makeRun("spill", 1000));
    expect(c.stats.spooled).toBeGreaterThan(0);
    await c.flush();
    expect(await col.collector.store.countRuns("spill")).toBe(300);
    expect(readdirSync(c.options.spoolDir).filter((f) => !f.endsWith(".open"))).toEqual([]);
  });

  it("spools batches when the endpoint stays down, and a later client delivers them", async () => {
    const dir = tempDir("tp-spool-");
    const spoolDir = join(dir, "spool");
    const c1 = new Client({
      endpoint: "http://127.0.0.1:9",
      apiKey: "k",
      spoolDir,
      deadLetterPath: join(dir, "dl.jsonl"),
      maxAttempts: 2,
      backoff: { baseMs: 5, maxMs: 10 },
      warn: () => {},
    });
    for (let i = 0; i < 30; i++) c1.createRun(makeRun("later"));
    await c1.flush();
    // The spool's due-time timer may retry (and spool again) before shutdown: what counts is what is left.
    const left = await c1.shutdown();
    expect(left).toMatchObject({ ok: false, spooled: 30 });
    expect(existsSync(spoolDir)).toBe(true);
    await new Promise((r) => setTimeout(r, 30));
    const col = await collector();
    const c2 = new Client({ endpoint: col.url, apiKey: "k", spoolDir, warn: () => {} });
    cleanup.push(async () => void (await c2.shutdown()));
    await c2.flush();
    expect(await col.collector.store.countRuns("later")).toBe(30);
  });
});
