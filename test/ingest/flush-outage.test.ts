/**
 * A flush while the endpoint is down: each batch is tried (maxAttempts), then
 * kept in the spool for its retry, and the flush ends. Batches that failed
 * under the flush are not read back and tried again until it has (they used
 * to be, every few milliseconds with a short backoff, so the client never went
 * idle: a backfill test made 19,000 connection attempts for 300 runs and its
 * flushes took 1 to 60 s). Counted: the batches posted, and every run kept.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createServer } from "node:http";
import { join } from "node:path";
import { Client } from "../../src/ingest/index.js";
import { startCollector } from "../helpers/collector.js";
import { makeRun, tempDir } from "../helpers/runs.js";

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0)) await f();
});

/** An endpoint that answers every request 503 (a service down behind its proxy), counting the batches posted. */
async function unavailable(): Promise<{ url: string; posts: () => number }> {
  let n = 0;
  const server = createServer((req, res) => {
    if (req.method === "POST") n++;
    req.resume();
    req.on("end", () => res.writeHead(503, { "content-type": "application/json" }).end('{"detail":"unavailable"}'));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  cleanup.push(() => new Promise((r) => server.close(r)));
  return { url: `http://127.0.0.1:${port}`, posts: () => n };
}

describe("flush while the endpoint is down", () => {
  it("tries each batch its attempts, keeps every run in the spool, and ends, without trying them again under the flush", async () => {
    const down = await unavailable();
    const dir = tempDir("tp-flush-down-");
    const c = new Client({
      endpoint: down.url,
      apiKey: "k",
      spoolDir: join(dir, "spool"),
      deadLetterPath: join(dir, "dead.jsonl"),
      batchSize: 100,
      maxAttempts: 2,
      backoff: { baseMs: 1, maxMs: 5 },
      exitHooks: false,
      warn: () => {},
    });
    const runs = Array.from({ length: 300 }, () => makeRun("flush-down", 200));
    for (const r of runs) c.createRun(r);
    const flushed = await c.flush();
    // At most 3 batches x 2 attempts; not a retry loop.
    expect(down.posts()).toBeGreaterThanOrEqual(2);
    expect(down.posts()).toBeLessThanOrEqual(3 * 2);
    expect(flushed).toMatchObject({ ok: false, pending: 0, spooled: 300, dropped: 0 });
    // Flushing again under the outage: at most one more round of attempts for what came due.
    await c.flush();
    expect(down.posts()).toBeLessThanOrEqual(2 * (3 * 2));
    const result = await c.shutdown({ timeoutMs: 2000 });
    expect(result.dropped).toBe(0);

    // The endpoint is back: a later client delivers every run exactly once.
    const col = await startCollector();
    cleanup.push(() => col.close());
    const later = new Client({ endpoint: col.url, apiKey: "k", spoolDir: join(dir, "spool"), exitHooks: false, warn: () => {} });
    await new Promise((r) => setTimeout(r, 50)); // past the retry due time (maxMs 5)
    const done = await later.shutdown({ timeoutMs: 20_000 });
    expect(done).toMatchObject({ ok: true, spooled: 0 });
    expect(await col.collector.store.countRuns("flush-down")).toBe(300);
  });
});
