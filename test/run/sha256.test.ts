import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { sha256 } from "../../src/run/sha256.js";
import { stableUuid } from "../../src/run/ids.js";

const hex = (w: Int32Array) => Array.from(w, (x) => (x >>> 0).toString(16).padStart(8, "0")).join("");

describe("sha256", () => {
  it("matches node:crypto for every length across the padding boundaries, ASCII and not", () => {
    for (let len = 0; len <= 300; len++) {
      const ascii = Array.from({ length: len }, (_, i) => String.fromCharCode(32 + ((i * 37 + len) % 95))).join("");
      expect(hex(sha256(ascii)), `ascii ${len}`).toBe(createHash("sha256").update(ascii, "utf8").digest("hex"));
      const mixed = ascii.replace(/[aeiou]/g, "é").replace(/[xyz]/g, "✓").replace(/q/g, "😀");
      expect(hex(sha256(mixed)), `mixed ${len}`).toBe(createHash("sha256").update(mixed, "utf8").digest("hex"));
    }
    const long = "otel\u0000".repeat(5000);
    expect(hex(sha256(long))).toBe(createHash("sha256").update(long).digest("hex"));
    expect(hex(sha256("a"))).toBe(createHash("sha256").update("a").digest("hex")); // after a long one: the buffer is reused
  });

  it("gives stableUuid the ids the node:crypto version gave (SHA-256 laid out as UUIDv7 or v8)", () => {
    const byCrypto = (parts: string[], timeMs?: number) => {
      const h = createHash("sha256").update(parts.join("\u0000")).digest();
      if (timeMs !== undefined && Number.isFinite(timeMs) && timeMs >= 0 && timeMs < 2 ** 48) {
        h.writeUIntBE(Math.floor(timeMs), 0, 6);
        h[6] = (h[6]! & 0x0f) | 0x70;
      } else h[6] = (h[6]! & 0x0f) | 0x80;
      h[8] = (h[8]! & 0x3f) | 0x80;
      const x = h.subarray(0, 16).toString("hex");
      return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
    };
    const cases: [string[], number | undefined][] = [
      [["otel", "5e485d67b3e8fd18ae3baa87eab8a9ee", "8c1d574461cdd13e"], 1763900000123.456],
      [["backfill", "file.jsonl", "17"], undefined],
      [["x"], 0],
      [["x"], 2 ** 48 - 1],
      [["x"], 2 ** 48],
      [["x"], -1],
      [["x"], NaN],
      [["ünïcode", "✓"], 1e12],
    ];
    for (const [parts, t] of cases) expect(stableUuid(parts, t)).toBe(byCrypto(parts, t));
  });
});
