/**
 * The bound on requests in flight: past it a request is refused with 503 and
 * Retry-After, which clients still sending large bodies at once receive as an
 * answer (not a reset connection); the place is given back when the held
 * request's answer is sent.
 */
import { afterEach, describe, expect, it } from "vitest";
import { connect } from "node:net";
import { errors } from "../../../src/server/middleware/errors.js";
import { InFlightBudget, REFUSED_DRAIN_IDLE_MS, inFlight } from "../../../src/server/middleware/in-flight.js";
import { serveChain, type Served } from "../../helpers/middleware.js";

let served: Served | undefined;
afterEach(async () => {
  await served?.close();
  served = undefined;
});

/** A chain with a budget of one, whose handler holds every request on /hold until `release()`. */
async function heldChain(refusedDrainMs?: number): Promise<{ url: string; budget: InFlightBudget; release: () => void }> {
  const budget = new InFlightBudget(1);
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  served = await serveChain([errors({ maxListedIssues: 10, log: () => undefined }), inFlight({ budget, refusedDrainMs })], async (x) => {
    if (x.url.pathname === "/hold") await held;
    return { status: 200, body: { ok: true } };
  });
  return { url: served.url, budget, release };
}

describe("in-flight bound", () => {
  it("refuses past the bound with 503 and Retry-After, which clients uploading large bodies at once receive, and gives the place back", async () => {
    const { url, budget, release } = await heldChain();
    const holding = fetch(`${url}/hold`, { method: "POST", body: "x" });
    while (budget.inFlight < 1) await new Promise((r) => setTimeout(r, 5));
    // 2 MiB bodies: far more than the socket buffers take, so the refusal is sent while the client is still writing.
    const body = new Uint8Array(2 << 20).fill(97);
    const answers = await Promise.all(
      Array.from({ length: 40 }, async () => {
        const res = await fetch(`${url}/runs`, { method: "POST", body });
        return {
          status: res.status,
          retryAfter: res.headers.get("retry-after"),
          detail: ((await res.json()) as { detail: string }).detail,
        };
      }),
    );
    for (const a of answers) {
      expect(a).toMatchObject({ status: 503, retryAfter: "1" });
      expect(a.detail).toMatch(/the collector is busy: 1 requests in flight/);
    }
    expect(budget.refused).toBe(40);
    release();
    expect((await holding).status).toBe(200);
    expect(budget.inFlight).toBe(0);
    // The place is back: the next request is served.
    expect((await fetch(`${url}/runs`, { method: "POST", body })).status).toBe(200);
  });

  it("answers a client still uploading slowly with the 503, not a broken pipe", async () => {
    const { url, budget, release } = await heldChain();
    const holding = fetch(`${url}/hold`, { method: "POST", body: "x" });
    while (budget.inFlight < 1) await new Promise((r) => setTimeout(r, 5));
    // Bodies that go on arriving well after the refusal: a connection closed under them is reset, and
    // the client's next write fails (EPIPE) before it reads the answer.
    const chunk = new Uint8Array(256 << 10).fill(97);
    const outcomes = await Promise.all(
      Array.from({ length: 10 }, async () => {
        let sent = 0;
        const body = new ReadableStream<Uint8Array>({
          async pull(c) {
            if (sent++ >= 24) return c.close();
            await new Promise((r) => setTimeout(r, 10));
            c.enqueue(chunk);
          },
        });
        try {
          const res = await fetch(`${url}/runs`, { method: "POST", body, duplex: "half" } as RequestInit);
          await res.arrayBuffer();
          return res.status;
        } catch (err) {
          return String((err as Error).cause ?? err);
        }
      }),
    );
    expect(outcomes).toEqual(Array(10).fill(503));
    release();
    await holding;
  });

  /** A raw request announcing a gibibyte, refused (the budget is held); `write(sock)` is called every 50 ms. */
  async function refusedUpload(url: string, write: (sock: ReturnType<typeof connect>) => void) {
    const { port } = new URL(url);
    const sock = connect(Number(port), "127.0.0.1");
    let answer = "";
    sock.on("data", (d: Buffer) => (answer += d.toString()));
    sock.on("error", () => undefined);
    sock.write(`POST /runs HTTP/1.1\r\nhost: x\r\ncontent-length: ${1 << 30}\r\n\r\n`);
    const writer = setInterval(() => sock.writable && write(sock), 50);
    const closedAfter = await new Promise<number>((resolve) => {
      const start = Date.now();
      sock.on("close", () => resolve(Date.now() - start));
    });
    clearInterval(writer);
    return { answer, closedAfter };
  }

  it("drops the connection of a refused body that keeps arriving, after the drain's whole time", async () => {
    const drainMs = REFUSED_DRAIN_IDLE_MS + 1500;
    const { url, budget, release } = await heldChain(drainMs);
    const holding = fetch(`${url}/hold`, { method: "POST", body: "x" });
    while (budget.inFlight < 1) await new Promise((r) => setTimeout(r, 5));
    // 64 KiB every 50 ms, never a pause as long as the idle bound: without the whole-time bound this would hold the connection for hours.
    const { answer, closedAfter } = await refusedUpload(url, (sock) => sock.write(Buffer.alloc(64 << 10, 97)));
    expect(answer).toMatch(/^HTTP\/1\.1 503 /);
    expect(answer).toMatch(/retry-after: 1/i);
    // Still draining past the idle bound (the body kept arriving), then dropped by the whole-time bound.
    expect(closedAfter).toBeGreaterThan(REFUSED_DRAIN_IDLE_MS + 500);
    expect(closedAfter).toBeLessThan(drainMs + 5000);
    release();
    await holding;
  });

  it("drops the connection of a refused body that stops arriving, after the idle bound", async () => {
    const { url, budget, release } = await heldChain(60_000);
    const holding = fetch(`${url}/hold`, { method: "POST", body: "x" });
    while (budget.inFlight < 1) await new Promise((r) => setTimeout(r, 5));
    let writes = 0;
    // A few chunks, then silence with the body far from complete: dropped after the idle bound, not after the minute.
    const { answer, closedAfter } = await refusedUpload(url, (sock) => writes++ < 4 && sock.write(Buffer.alloc(64 << 10, 97)));
    expect(answer).toMatch(/^HTTP\/1\.1 503 /);
    expect(closedAfter).toBeGreaterThanOrEqual(REFUSED_DRAIN_IDLE_MS / 2);
    expect(closedAfter).toBeLessThan(30_000);
    release();
    await holding;
  });
});
