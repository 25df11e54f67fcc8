/**
 * The large-body semaphore's byte budget: a body waits while the bytes the
 * others hold leave no room for it, growth never waits, waiters are admitted
 * in arrival order as bytes come back, and one alone always runs.
 */
import { describe, expect, it } from "vitest";
import { bodyAdmission, LargeBodySlots } from "../../../src/server/middleware/body-admission.js";
import { serveChain } from "../../helpers/middleware.js";

describe("LargeBodySlots with a byte budget", () => {
  it("admits by bytes as well as by count, in arrival order", async () => {
    const s = new LargeBodySlots(4, 100);
    const admitted: string[] = [];
    await s.acquire(60).then(() => admitted.push("a"));
    const b = s.acquire(60).then(() => admitted.push("b"));
    const c = s.acquire(10).then(() => admitted.push("c"));
    await Promise.resolve();
    // c would fit (70 <= 100) but arrived after b: it waits behind it.
    expect(admitted).toEqual(["a"]);
    expect(s.waiting).toBe(2);
    s.grow(30); // a's decoded bytes past its declared length: charged, never waited for
    expect(s.bytesCharged).toBe(90);
    s.release(90);
    await Promise.all([b, c]);
    expect(admitted).toEqual(["a", "b", "c"]);
    expect(s.inUse).toBe(2);
    expect(s.bytesCharged).toBe(70);
    s.release(60);
    s.release(10);
    expect(s.bytesCharged).toBe(0);
    expect(s.inUse).toBe(0);
  });

  it("runs one body alone past the budget, and still bounds the count", async () => {
    const s = new LargeBodySlots(1, 100);
    await s.acquire(500);
    expect(s.inUse).toBe(1);
    let second = false;
    const p = s.acquire(0).then(() => (second = true));
    await Promise.resolve();
    expect(second).toBe(false);
    s.release(500);
    await p;
    expect(second).toBe(true);
  });
});

describe("body admission over HTTP", () => {
  it("reads a second large body only once the first one's answer is sent", async () => {
    const slots = new LargeBodySlots(1);
    let releaseFirst: () => void = () => undefined;
    const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
    const order: string[] = [];
    const served = await serveChain(
      [bodyAdmission({ slots, maxBodyBytes: 1 << 20, largeBodyBytes: 1000, idleSocketMs: 5000 })],
      async (x) => {
        const name = x.url.pathname.slice(1);
        const chunks: Buffer[] = [];
        for await (const c of x.openBody!()) chunks.push(c as Buffer);
        order.push(`${name} read`);
        if (name === "first") await firstHeld;
        return { status: 200, body: { bytes: Buffer.concat(chunks).length } };
      },
    );
    try {
      const first = fetch(`${served.url}/first`, { method: "POST", body: "a".repeat(5000) });
      while (slots.inUse === 0) await new Promise((r) => setTimeout(r, 5));
      const second = fetch(`${served.url}/second`, { method: "POST", body: "b".repeat(5000) });
      while (slots.waiting === 0) await new Promise((r) => setTimeout(r, 5));
      expect(order).toEqual(["first read"]);
      releaseFirst();
      expect(await (await first).json()).toEqual({ bytes: 5000 });
      expect(await (await second).json()).toEqual({ bytes: 5000 });
      expect(order).toEqual(["first read", "second read"]);
      expect(slots.inUse).toBe(0);
    } finally {
      await served.close();
    }
  });
});
