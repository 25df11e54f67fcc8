import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { dottedSegment, isoMicros, stableUuid } from "../../src/run/ids.js";

/** The id scheme as first written (a Hash object, hex, slices): ids already stored must keep being made the same. */
function reference(parts: string[], timeMs?: number): string {
  const h = createHash("sha256").update(parts.join("\u0000")).digest();
  if (timeMs !== undefined && Number.isFinite(timeMs) && timeMs >= 0 && timeMs < 2 ** 48) {
    h.writeUIntBE(Math.floor(timeMs), 0, 6);
    h[6] = (h[6]! & 0x0f) | 0x70;
  } else h[6] = (h[6]! & 0x0f) | 0x80;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString("hex");
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

describe("stableUuid", () => {
  it("makes the same ids as the original scheme (v7 with a time, v8 without)", () => {
    for (let i = 0; i < 500; i++) {
      const parts = ["otel", Math.random().toString(16).slice(2).padEnd(32, "0"), `span-${i}`, "ünïcode ✓"];
      const t = i % 5 === 0 ? undefined : 1_700_000_000_000 + i * 1234.5;
      expect(stableUuid(parts, t)).toBe(reference(parts, t));
    }
    expect(stableUuid(["tracepipe-local-tenant"])).toBe(reference(["tracepipe-local-tenant"]));
    expect(stableUuid(["x"], -1)).toBe(reference(["x"], -1));
    // The ends of the 48-bit time field, and times past it (then version 8).
    for (const t of [0, 0.9, 1, 255, 2 ** 32, 2 ** 48 - 1, 2 ** 48 - 0.5, 2 ** 48, NaN, Infinity])
      expect(stableUuid(["edge", String(t)], t)).toBe(reference(["edge", String(t)], t));
  });
});

/** The time formats as first written (a Date per call): the per-second cache must not change a character. */
const pad = (n: number, w: number) => String(n).padStart(w, "0");
function isoReference(us: number): string {
  const d = new Date(Math.floor(us / 1000));
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}T${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}.${pad(us % 1_000_000, 6)}Z`;
}
function dottedReference(us: number, id: string): string {
  const d = new Date(Math.floor(us / 1000));
  return `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1, 2)}${pad(d.getUTCDate(), 2)}T${pad(d.getUTCHours(), 2)}${pad(d.getUTCMinutes(), 2)}${pad(d.getUTCSeconds(), 2)}${pad(us % 1_000_000, 6)}Z${id}`;
}

describe("isoMicros and dottedSegment", () => {
  it("format every microsecond as before, across second, day and year boundaries and back and forth", () => {
    const times = [
      0, 999_999, 1_000_000, 1_763_805_299_999_999, 1_763_805_300_000_000, 1_767_225_599_999_999, 1_767_225_600_000_000,
      951_782_400_000_001,
    ];
    for (let i = 0; i < 2000; i++) times.push(1_700_000_000_000_000 + Math.floor(Math.random() * 5_000_000) * (i % 3 === 0 ? 997 : 1));
    for (const us of times) {
      expect(isoMicros(us)).toBe(isoReference(us));
      expect(dottedSegment(us, "id")).toBe(dottedReference(us, "id"));
    }
  });
});
