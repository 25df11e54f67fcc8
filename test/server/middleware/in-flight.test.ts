/**
 * The bound on requests in flight: past it a request is refused with 503 and
 * Retry-After, which clients still sending large bodies at once receive as an
 * answer (not a reset connection); the place is given back when the held
 * request's answer is sent.
 */
import { afterEach, describe, expect, it } from "vitest";
import { errors } from "../../../src/server/middleware/errors.js";
import { InFlightBudget, inFlight } from "../../../src/server/middleware/in-flight.js";
import { serveChain, type Served } from "../../helpers/middleware.js";

let served: Served | undefined;
afterEach(async () => {
  await served?.close();
  served = undefined;
});

/** A chain with a budget of one, whose handler holds every request on /hold until `release()`. */
async function heldChain(): Promise<{ url: string; budget: InFlightBudget; release: () => void }> {
  const budget = new InFlightBudget(1);
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  served = await serveChain([errors({ maxListedIssues: 10, log: () => undefined }), inFlight({ budget })], async (x) => {
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
});
