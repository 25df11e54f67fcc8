/**
 * A flush while the endpoint is down: each batch is tried (maxAttempts), then
 * kept in the spool for its retry, and the flush ends. Batches that failed
 * under the flush are not read back and tried again until it has (they used
 * to be, every few milliseconds with a short backoff, so the client never went
 * idle: a backfill test made 19,000 connection attempts for 300 runs and its
 * flushes took 1 to 60 s). Counted: connections, and every run kept.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { Client } from "../../src/ingest/index.js";
import { startCollector } from "../helpers/collector.js";
import { makeRun, tempDir } from "../helpers/runs.js";

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0)) await f();
});

/** A TCP server that counts connections and drops each at once (the client sees a failed request). */
async function dropping(): Promise<{ url: string; connections: () => number; server: Server }> {
  let n = 0;
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    n++;
    sockets.add(s);
    s.destroy();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  cleanup.push(() => new Promise((r) => server.close(r)));
  return { url: `http://127.0.0.1:${port}`, connections: () => n, server };
}

describe("flush while the endpoint is down", () => {
  it("tries each batch its attempts, keeps every run in the spool, and ends, without trying them again under the flush", async () => {
    const down = await dropping();
    const dir = tempDir("tp-flush-down-");
    const c = new Client({ endpoint: down.url, apiKey: "k", spoolDir: join(dir, "spool"), deadLetterPath: join(dir, "dead.jsonl"), batchSize: 100, maxAttempts: 2, backoff: { baseMs: 1, maxMs: 5 }, exitHooks: false, warn: () => {} });
    const runs = Array.from({ length: 300 }, () => makeRun("flush-down", 200));
    for (const r of runs) c.createRun(r);
    const before = down.connections();
    const flushed = await c.flush();
    // 3 batches x 2 attempts, and the GET /info tries; not a retry loop.
    expect(down.connections() - before).toBeLessThanOrEqual(3 * 2 + 4);
    expect(flushed).toMatchObject({ ok: false, pending: 0, spooled: 300, dropped: 0 });
    // Flushing again under the outage: at most one more round of attempts for what came due.
    await c.flush();
    expect(down.connections() - before).toBeLessThanOrEqual(2 * (3 * 2) + 4);
    const result = await c.shutdown({ timeoutMs: 2000 });
    expect(result.dropped).toBe(0);

    // The endpoint is back: a later client delivers every run exactly once.
    const col = await startCollector();
    cleanup.push(() => col.close());
    const later = new Client({ endpoint: col.url, apiKey: "k", spoolDir: join(dir, "spool"), exitHooks: false, warn: () => {} });
    await new Promise((r) => setTimeout(r, 50)); // past the retry due time (maxMs 5)
    const done = await later.shutdown({ timeoutMs: 20_000 });
    expect(done).toMatchObject({ ok: true, spooled: 0 });
    expect(col.collector.store.countRuns("flush-down")).toBe(300);
  });
});
