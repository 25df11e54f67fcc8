/**
 * The large-body semaphore's byte budget (item 13): a body waits while the
 * bytes the others hold leave no room for it, growth never waits, waiters
 * are admitted in arrival order as bytes come back, and one alone always runs.
 */
import { describe, expect, it } from "vitest";
import { Slots } from "../../src/server/body.js";

describe("Slots with a byte budget", () => {
  it("admits by bytes as well as by count, in arrival order", async () => {
    const s = new Slots(4, 100);
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
    const s = new Slots(1, 100);
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
