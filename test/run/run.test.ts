import { describe, expect, it } from "vitest";
import { uuidv7, nowMicros, isoMicros, dottedSegment } from "../../src/run/ids.js";
import { serialize } from "../../src/run/serialize.js";
import { RunTree } from "../../src/run/tree.js";
import { Run } from "../../src/run/schema.js";

describe("ids and times", () => {
  it("makes RFC 9562 version-7 ids that sort in creation order", () => {
    const ids = Array.from({ length: 5000 }, () => uuidv7());
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    const ms = parseInt(ids[0]!.replace(/-/g, "").slice(0, 12), 16);
    expect(Math.abs(ms - Date.now())).toBeLessThan(5000);
  });

  it("writes the given millisecond into an id's first 48 bits, and ids of one millisecond still sort by creation", () => {
    const ms = Date.now() + 1000;
    const ids = Array.from({ length: 50 }, () => uuidv7(ms));
    for (const id of ids) expect(id.replace(/-/g, "").slice(0, 12)).toBe(ms.toString(16).padStart(12, "0"));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("gives strictly increasing microsecond times in a fixed-width format", () => {
    const a = nowMicros();
    const b = nowMicros();
    expect(b).toBeGreaterThan(a);
    expect(isoMicros(1_763_805_300_123_456)).toBe("2025-11-22T09:55:00.123456Z");
    expect(dottedSegment(1_763_805_300_000_007, "x")).toBe("20251122T095500000007Zx");
  });

  it("builds a valid Run with trace_id from the root and dotted_order from root to leaf", () => {
    const root = new RunTree({ name: "root", session_name: "p" });
    const child = root.createChild({ name: "child", run_type: "llm" });
    const grand = child.createChild({ name: "tool", run_type: "tool" });
    grand.addEvent("new_token");
    grand.end({ ok: true });
    for (const r of [root, child, grand]) expect(Run.safeParse(r.toRun()).success).toBe(true);
    expect(grand.toRun()).toMatchObject({ trace_id: root.id, parent_run_id: child.id, session_name: "p", outputs: { ok: true } });
    expect(grand.dotted_order.split(".")).toHaveLength(3);
    expect(grand.dotted_order.startsWith(child.dotted_order)).toBe(true);
  });
});

describe("serialize", () => {
  it("never throws and gives each awkward value its documented form", () => {
    const circ: Record<string, unknown> = { a: 1 };
    circ.self = circ;
    const err = new TypeError("bad", { cause: new Error("root") });
    const hostile = {
      get boom() {
        throw new Error("getter");
      },
    };
    const out = serialize({
      circ,
      big: 12345678901234567890n,
      err,
      date: new Date("2026-01-02T03:04:05.678Z"),
      bad: new Date("nope"),
      map: new Map<unknown, unknown>([
        ["k", 1],
        [{ o: 1 }, "obj"],
      ]),
      set: new Set([1, "two"]),
      buf: Buffer.from("hi"),
      f32: new Float32Array([1.5]),
      ab: new Uint8Array([1, 2]).buffer,
      fn: function named() {},
      sym: Symbol("s"),
      undef: undefined,
      arr: [undefined, NaN, Infinity],
      hostile,
      json: { toJSON: () => ({ x: 1 }) },
    }) as Record<string, any>;
    expect(out.circ).toEqual({ a: 1, self: "[Circular]" });
    expect(out.big).toBe("12345678901234567890");
    expect(out.err).toMatchObject({
      name: "TypeError",
      message: "bad",
      stack: expect.any(String),
      cause: { name: "Error", message: "root" },
    });
    expect(out.date).toBe("2026-01-02T03:04:05.678Z");
    expect(out.bad).toBeNull();
    expect(out.map).toEqual({
      __type: "Map",
      entries: [
        ["k", 1],
        [{ o: 1 }, "obj"],
      ],
    });
    expect(out.set).toEqual({ __type: "Set", values: [1, "two"] });
    expect(out.buf).toEqual({ __type: "Buffer", base64: "aGk=" });
    expect(out.f32).toEqual({ __type: "Float32Array", length: 1, base64: expect.any(String) });
    expect(out.ab).toEqual({ __type: "ArrayBuffer", base64: "AQI=" });
    expect(out.fn).toBe("[Function named]");
    expect(out.sym).toBe("Symbol(s)");
    expect("undef" in out).toBe(false);
    expect(out.arr).toEqual([null, null, null]);
    expect(out.hostile).toEqual({ boom: "[Thrown: getter]" });
    expect(out.json).toEqual({ x: 1 });
    expect(() => JSON.stringify(out)).not.toThrow();
  });

  it("writes a shared (non-circular) object each time it appears", () => {
    const shared = { v: 1 };
    expect(serialize([shared, shared])).toEqual([{ v: 1 }, { v: 1 }]);
  });
});
