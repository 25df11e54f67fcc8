import { describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { join } from "node:path";
import { readLines } from "../../src/backfill/lines.js";
import { deterministicUuid } from "../../src/backfill/identity.js";
import { tempDir } from "../helpers/runs.js";

async function all(path: string, opts = {}) {
  const out = [];
  for await (const l of readLines(path, opts)) out.push(l);
  return out;
}

describe("line reader", () => {
  it("gives each line its number and byte offsets, handles CRLF, UTF-8 and a last line without a newline", async () => {
    const dir = tempDir("tp-lines-");
    const p = join(dir, "a.jsonl");
    writeFileSync(p, "first\r\n\nzweite “ü”\nlast");
    const lines = await all(p);
    expect(lines.map((l) => [l.line, l.text])).toEqual([
      [1, "first"],
      [2, ""],
      [3, "zweite “ü”"],
      [4, "last"],
    ]);
    expect(lines[0]).toMatchObject({ offset: 0, end: 7 });
    expect(lines[2]!.end - lines[2]!.offset).toBe(Buffer.byteLength("zweite “ü”\n"));
    expect(lines[3]!.end).toBe(Buffer.byteLength("first\r\n\nzweite “ü”\nlast"));
  });

  it("resumes at a recorded offset with the right line numbers, plain and gzip", async () => {
    const dir = tempDir("tp-lines-");
    const text = Array.from({ length: 5000 }, (_, i) => `{"i":${i},"pad":"${"x".repeat(i % 300)}"}`).join("\n") + "\n";
    for (const [name, data] of [
      ["p.jsonl", Buffer.from(text)],
      ["p.jsonl.gz", gzipSync(text)],
    ] as const) {
      const p = join(dir, name);
      writeFileSync(p, data);
      const full = await all(p);
      expect(full).toHaveLength(5000);
      const cut = full[3141]!;
      const rest = await all(p, { offset: cut.end, line: cut.line });
      expect(rest.map((l) => l.line)).toEqual(full.slice(3142).map((l) => l.line));
      expect(rest.map((l) => l.text)).toEqual(full.slice(3142).map((l) => l.text));
      expect(rest[0]!.offset).toBe(cut.end);
    }
  });

  it("skips a line over the maximum size without holding it, numbers the lines after it, and still hashes every byte", async () => {
    const dir = tempDir("tp-lines-");
    const text = `short\n${"y".repeat(3 << 20)}\nafter\n${"z".repeat(5000)}`;
    for (const [name, data] of [
      ["l.txt", Buffer.from(text)],
      ["l.txt.gz", gzipSync(text)],
    ] as const) {
      const p = join(dir, name);
      writeFileSync(p, data);
      const hash = createHash("sha256");
      const lines = await all(p, { maxLineBytes: 4096, hash });
      expect(lines.map((l) => [l.line, l.text, l.tooLong ?? false])).toEqual([
        [1, "short", false],
        [2, "", true],
        [3, "after", false],
        [4, "", true],
      ]);
      expect(lines[1]!.end - lines[1]!.offset).toBe((3 << 20) + 1);
      expect(hash.digest("hex")).toBe(createHash("sha256").update(text).digest("hex"));
      // Resumed after the long line: the hash state carried over covers the rest exactly.
      const carried = createHash("sha256").update(text.slice(0, lines[1]!.end));
      await all(p, { maxLineBytes: 4096, offset: lines[1]!.end, line: 2, hash: carried });
      expect(carried.digest("hex")).toBe(createHash("sha256").update(text).digest("hex"));
    }
  });

  it("derives the same UUID for the same record identity and key", () => {
    const id = deterministicUuid(["f", "line:1"]);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(deterministicUuid(["f", "line:1"])).toBe(id);
    expect(deterministicUuid(["f", "line:2"])).not.toBe(id);
    // With the record's own time: a UUIDv7 whose timestamp is that time, still deterministic.
    const t = Date.UTC(2026, 0, 1, 12, 0, 0, 123);
    const v7 = deterministicUuid(["f", "line:1"], t);
    expect(v7).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(parseInt(v7.replace(/-/g, "").slice(0, 12), 16)).toBe(t);
    expect(deterministicUuid(["f", "line:1"], t)).toBe(v7);
    expect(deterministicUuid(["f", "line:2"], t)).not.toBe(v7);
    expect(v7.slice(15)).toBe(id.slice(15)); // the same hash bits after the version nibble
  });
});
