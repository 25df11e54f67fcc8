/**
 * A Retry-After longer than a Node timer can hold (about 24.8 days: a CDN or proxy in front of
 * the endpoint may say anything) must still mean "not now": a timer given more wraps to 1 ms,
 * which turned the server's "wait" into an immediate retry and printed Node's
 * TimeoutOverflowWarning into the host's output.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { readdirSync, rmSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { Client } from "../../src/ingest/index.js";
import { makeRun, tempDir } from "../helpers/runs.js";

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

/** An endpoint that answers its first POST 429 with `retryAfter`, and every later one 200. */
async function throttling(retryAfter: string): Promise<{ url: string; posts: () => number }> {
  let posts = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (req.method === "GET") {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ batch_ingest_config: { size_limit: 100 } }));
        return;
      }
      posts++;
      if (posts === 1) res.writeHead(429, { "retry-after": retryAfter }).end();
      else res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  cleanup.push(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, posts: () => posts };
}

/** A Client of `url` with a spool of its own (removed after the test) and a 200 ms backoff ceiling. */
function throttledClient(url: string): { c: Client; dir: string } {
  const dir = tempDir("tp-retry-after-");
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  const c = new Client({
    endpoint: url,
    apiKey: "test-key",
    spoolDir: join(dir, "spool"),
    backoff: { baseMs: 20, maxMs: 200 },
    maxAttempts: 5,
    exitHooks: false,
    warn: () => {},
  });
  return { c, dir };
}

describe("Retry-After beyond a timer's range", () => {
  it.each([
    ["delta-seconds", "99999999"],
    ["an HTTP date", new Date(Date.now() + 40 * 86_400_000).toUTCString()],
  ])("is not retried at once, and no timer warning reaches the host (%s)", async (_kind, retryAfter) => {
    const endpoint = await throttling(retryAfter);
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on("warning", onWarning);
    cleanup.push(() => void process.off("warning", onWarning));
    const { c } = throttledClient(endpoint.url);
    c.createRun(makeRun("retry-after"));
    // A flush that waits far longer than the backoff's ceiling: an attempt made in it is a retry the server forbade.
    const flushed = await c.flush({ timeoutMs: 600 });
    await new Promise((r) => setTimeout(r, 300));
    expect(endpoint.posts()).toBe(1);
    // The run waits in the spool, not in memory, and the flush says so at once.
    expect(flushed).toMatchObject({ timedOut: false, pending: 0, spooled: 1, ok: false });
    expect(warnings).not.toContain("TimeoutOverflowWarning");
    // Nothing is lost: shutting down keeps the run in the spool for a later client.
    const closed = await c.shutdown({ timeoutMs: 50 });
    expect(closed.spooled).toBe(1);
  });
});

describe("Retry-After past what is waited in memory", () => {
  it("is waited out in the spool: flush() returns at once counting the run spooled, due when the server said", async () => {
    const endpoint = await throttling("45");
    const { c, dir } = throttledClient(endpoint.url);
    c.createRun(makeRun("retry-after"));
    const started = Date.now();
    // No timeout: this flush used to wait the server's 45 seconds, and would have waited an hour for an hour.
    const flushed = await c.flush();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(flushed).toMatchObject({ timedOut: false, spooled: 1, ok: false });
    expect(endpoint.posts()).toBe(1);
    // On disk, due no earlier than the server said (the due time leads a segment's name).
    const segments = readdirSync(join(dir, "spool")).filter((f) => f.startsWith("segment-"));
    expect(segments).toHaveLength(1);
    const due = Number(/^segment-(\d+)-/.exec(segments[0]!)![1]);
    expect(due).toBeGreaterThanOrEqual(started + 45_000);
    expect(due).toBeLessThan(Date.now() + 46_000);
    await c.shutdown({ timeoutMs: 100 });
    expect(endpoint.posts()).toBe(1);
  });

  it("a shorter Retry-After is waited out in memory within the flush, even past a small backoff ceiling", async () => {
    const endpoint = await throttling("1");
    const { c } = throttledClient(endpoint.url);
    cleanup.push(async () => void (await c.shutdown({ timeoutMs: 100 })));
    c.createRun(makeRun("retry-after"));
    const started = Date.now();
    expect(await c.flush()).toMatchObject({ ok: true, spooled: 0, timedOut: false });
    expect(endpoint.posts()).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  });

  it("is waited out in memory when no spool directory can be written, rather than dropped", async () => {
    const endpoint = await throttling("45");
    // Neither the spool nor its fallback under the temporary directory can be made (a path under a file).
    const tmp = process.env.TMPDIR;
    process.env.TMPDIR = "/dev/null/tmp";
    let c: Client;
    try {
      c = new Client({
        endpoint: endpoint.url,
        apiKey: "test-key",
        spoolDir: "/dev/null/spool",
        backoff: { baseMs: 20, maxMs: 200 },
        exitHooks: false,
        warn: () => {},
      });
    } finally {
      if (tmp === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = tmp;
    }
    cleanup.push(async () => void (await c.shutdown({ timeoutMs: 50 })));
    // Find out the spool is unusable first, as a client does when it first needs it.
    c.createRun(makeRun("retry-after"));
    const flushed = await c.flush({ timeoutMs: 500 });
    expect(endpoint.posts()).toBe(1);
    expect(flushed).toMatchObject({ timedOut: true, pending: 1, dropped: 0, spooled: 0 });
  });
});
