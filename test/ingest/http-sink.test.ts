import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Client } from "../../src/ingest/index.js";
import { HttpSink } from "../../src/ingest/http-sink.js";
import { postOp } from "../../src/ingest/ops.js";
import { SinkError } from "../../src/ingest/sink.js";
import { MemoryRateLimiter } from "../../src/ratelimit/limiter.js";
import { startCollector } from "../helpers/collector.js";
import { makeRun, tempDir } from "../helpers/runs.js";

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

/** A front that answers GET /info itself and sends every POST on to `target` with the given status and Location. */
async function redirector(target: string, status: number): Promise<{ url: string; posts: number }> {
  const state = { url: "", posts: 0 };
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (req.method === "GET" && req.url === "/info") {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ batch_ingest_config: { size_limit: 100 } }));
        return;
      }
      state.posts++;
      res.writeHead(status, { location: `${target}${req.url}` }).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  cleanup.push(() => new Promise<void>((r) => server.close(() => r())));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

function client(endpoint: string): Client {
  const dir = tempDir("tp-sink-");
  const c = new Client({
    endpoint,
    apiKey: "test-key",
    spoolDir: join(dir, "spool"),
    deadLetterPath: join(dir, "dead.jsonl"),
    backoff: { baseMs: 20, maxMs: 200 },
    maxAttempts: 2,
    warn: () => {},
    exitHooks: false,
  });
  cleanup.push(async () => void (await c.shutdown({ timeoutMs: 2000 })));
  return c;
}

describe("HttpSink over node:http", () => {
  it.each([307, 308])("follows a %i redirect with the same POST body, as fetch did", async (status) => {
    const col = await startCollector();
    cleanup.push(() => col.close());
    const front = await redirector(col.url, status);
    const c = client(front.url);
    for (let i = 0; i < 5; i++) c.createRun(makeRun(`redirect-${status}`, 300));
    const r = await c.flush();
    expect(r.ok).toBe(true);
    expect(front.posts).toBeGreaterThanOrEqual(1);
    expect(await col.collector.store.countRuns(`redirect-${status}`)).toBe(5);
  });

  it("does not follow a redirect that would turn the POST into a GET: the batch is refused, not lost silently", async () => {
    const col = await startCollector();
    cleanup.push(() => col.close());
    const front = await redirector(col.url, 302);
    const c = client(front.url);
    c.createRun(makeRun("redirect-302", 300));
    const r = await c.flush();
    expect(r.deadLettered).toBe(1);
    expect(await col.collector.store.countRuns("redirect-302")).toBe(0);
  });

  it("gives up on a request that gets no answer within timeoutMs, and on one whose signal aborts, as retryable failures", async () => {
    const hanging = createServer((req) => {
      if (req.url === "/info") return void req.socket.destroy();
      req.resume(); // read the body, never answer
    });
    await new Promise<void>((r) => hanging.listen(0, "127.0.0.1", r));
    cleanup.push(() => new Promise<void>((r) => (hanging.closeAllConnections(), hanging.close(() => r()))));
    const endpoint = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`;
    const sink = new HttpSink({
      endpoint,
      apiKey: "k",
      limiter: new MemoryRateLimiter(),
      defaults: { batchSize: 10, batchBytes: 1e6 },
      warn: () => {},
      timeoutMs: 300,
    });
    cleanup.push(() => sink.close());
    const t0 = performance.now();
    const err = await sink.send([postOp(makeRun("hang", 100))]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SinkError);
    expect((err as SinkError).kind).toBe("retry");
    expect((err as SinkError).message).toMatch(/no answer within 300 ms/);
    expect(performance.now() - t0).toBeLessThan(5000);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const aborted = await new HttpSink({
      endpoint,
      apiKey: "k",
      limiter: new MemoryRateLimiter(),
      defaults: { batchSize: 10, batchBytes: 1e6 },
      warn: () => {},
    })
      .send([postOp(makeRun("hang", 100))], ac.signal)
      .catch((e: unknown) => e);
    expect(aborted).toBeInstanceOf(SinkError);
    expect((aborted as SinkError).kind).toBe("retry");
  });
  it("keeps at most 64 KiB of an error answer's body and does not wait for the rest: an endless error page is a prompt retry, not a host filling its memory", async () => {
    let sent = 0;
    let closed = false;
    const page = Buffer.alloc(64 * 1024, "x");
    const endless = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(503, { "content-type": "text/html", "retry-after": "1" });
        res.on("close", () => (closed = true));
        const more = () => {
          while (!closed && sent < 2 ** 31) {
            sent += page.length;
            if (!res.write(page)) return void res.once("drain", more);
          }
        };
        more();
      });
    });
    await new Promise<void>((r) => endless.listen(0, "127.0.0.1", r));
    cleanup.push(() => new Promise<void>((r) => (endless.closeAllConnections(), endless.close(() => r()))));
    const sink = new HttpSink({
      endpoint: `http://127.0.0.1:${(endless.address() as AddressInfo).port}`,
      apiKey: "k",
      limiter: new MemoryRateLimiter(),
      defaults: { batchSize: 10, batchBytes: 1e6 },
      warn: () => {},
      timeoutMs: 600_000,
    });
    cleanup.push(() => sink.close());
    const err = await sink.send([postOp(makeRun("endless", 100))]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SinkError);
    expect((err as SinkError).kind).toBe("retry");
    expect((err as SinkError).status).toBe(503);
    expect((err as SinkError).retryAfterMs).toBe(1000);
    await expect.poll(() => closed).toBe(true);
    // The server stops when the client drops the connection: far short of the 2 GiB it would send.
    expect(sent).toBeLessThan(256 * 1024 * 1024);
  });
});
