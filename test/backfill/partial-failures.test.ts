/**
 * Two ways a backfill fails part-way, and what must hold after each:
 * - the API key is revoked after some batches were accepted: the run stops
 *   with exit 2 and a clear message, nothing is dead-lettered, the checkpoint
 *   never passes a record the collector did not store, and a rerun with a
 *   good key ends with every record exactly once;
 * - a .gz file is corrupted part-way: its lines before the damage are
 *   processed, the error names the file and the line reached, the other files
 *   are processed whole, and the exit code is 1 (some input failed).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { loadCheckpoint } from "../../src/backfill/checkpoint.js";
import { runCli } from "../helpers/cli.js";
import { startServeProcess, type ServeProcess } from "../helpers/collector.js";
import { deadLetterLines, genericLine, storedLines } from "../helpers/logs.js";
import { tempDir } from "../helpers/runs.js";

let col: ServeProcess | undefined;
let front: Server | undefined;
afterEach(async () => {
  await new Promise((r) => (front ? front.close(r) : r(undefined)));
  front = undefined;
  await col?.close();
  col = undefined;
});

/**
 * An HTTP front for the collector that stands for the key's owner: it passes
 * requests through until `revokeAfter` runs are stored, then answers every
 * request 401 as a collector does for a key it no longer accepts.
 */
async function revokingFront(
  target: ServeProcess,
  project: string,
  revokeAfter: number,
): Promise<{ url: string; revoked: () => boolean; restore: () => void }> {
  let revoked = false;
  let after = revokeAfter;
  front = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (revoked) {
        res.writeHead(401, { "content-type": "application/json" });
        res.end(JSON.stringify({ detail: "invalid API key" }));
        return;
      }
      const headers: Record<string, string> = {};
      for (const h of ["content-type", "content-encoding", "x-api-key"]) if (req.headers[h]) headers[h] = String(req.headers[h]);
      void fetch(target.url + req.url, {
        method: req.method,
        headers,
        body: req.method === "GET" ? undefined : Buffer.concat(chunks),
      }).then(async (r) => {
        const body = Buffer.from(await r.arrayBuffer());
        if (target.count(project).n >= after) revoked = true;
        res.writeHead(r.status, { "content-type": r.headers.get("content-type") ?? "application/json" });
        res.end(body);
      });
    });
  });
  await new Promise<void>((r) => front!.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(front.address() as AddressInfo).port}`,
    revoked: () => revoked,
    restore: () => {
      revoked = false;
      after = Infinity;
    },
  };
}

describe("a key revoked in the middle of a backfill", () => {
  it("stops with exit 2 and nothing dead-lettered; the checkpoint passes no unstored record; a rerun stores each record once", async () => {
    col = await startServeProcess(["--no-rate-limit"]);
    const dir = tempDir("tp-bf-revoked-");
    const p = join(dir, "log.jsonl");
    const total = 2000;
    writeFileSync(p, Array.from({ length: total }, (_, i) => genericLine(i)).join("\n") + "\n");
    const via = await revokingFront(col, "revoked", 300);
    const cp = join(dir, "cp.json");
    const dead = join(dir, "dead.jsonl");
    const args = (url: string) => [
      "backfill",
      p,
      "--endpoint",
      url,
      "--api-key",
      "k",
      "--project",
      "revoked",
      "--checkpoint",
      cp,
      "--checkpoint-every",
      "1",
      "--batch-size",
      "20",
      "--dead-letter",
      dead,
      "--progress",
      "none",
      "--spool-dir",
      join(dir, "spool"),
      "--db",
      join(dir, "client", "t.db"),
    ];

    const r = await runCli(args(via.url), { timeoutMs: 60_000 });
    expect(via.revoked()).toBe(true);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/API key stopped being accepted during the backfill \(HTTP 401/);
    expect(r.stderr).toContain(`checkpoint (${cp}) stands`);
    // Nothing dead-lettered: neither bad lines nor refused runs.
    expect(deadLetterLines(dead)).toEqual([]);
    expect(existsSync(join(dir, "client", "dead-letters", "runs.jsonl"))).toBe(false);
    // Some batches were accepted, the rest were not sent.
    const stored = await storedLines(col.dbPath, "revoked");
    expect(stored.n).toBeGreaterThanOrEqual(300);
    expect(stored.n).toBeLessThan(total);
    // The checkpoint stands at a line every record up to which the collector stored.
    const at = loadCheckpoint(cp)!.files[0]!;
    expect(at.line).toBeGreaterThan(0);
    const have = new Set(stored.lines);
    for (let line = 1; line <= at.line; line++) expect(have.has(line), `line ${line} is before the checkpoint but not stored`).toBe(true);
    expect(r.stderr).toContain(`line ${at.line}`);

    // The key works again: the same command resumes and every record arrives once.
    via.restore();
    const again = await runCli(args(via.url), { timeoutMs: 60_000 });
    expect(again.code, again.stderr).toBe(0);
    expect(col.count("revoked")).toEqual({ n: total, d: total });
    expect(deadLetterLines(dead)).toEqual([]);
  }, 120_000);
});

describe("a .gz file corrupted part-way", () => {
  it("processes its lines before the damage and the other files whole, names the file and line, and exits 1", async () => {
    const dir = tempDir("tp-bf-gz-");
    const lines = (from: number, n: number) => Array.from({ length: n }, (_, i) => genericLine(from + i)).join("\n") + "\n";
    const first = join(dir, "a.jsonl.gz");
    const broken = join(dir, "b.jsonl.gz");
    const last = join(dir, "c.jsonl");
    writeFileSync(first, gzipSync(lines(0, 50)));
    // A gzip stream cut off half-way (a copy that died part-way): what was written before the damage still decodes.
    const whole = gzipSync(lines(1000, 3000), { level: 1 });
    writeFileSync(broken, whole.subarray(0, whole.length >> 1));
    writeFileSync(last, lines(5000, 40));
    const dbPath = join(dir, "store", "t.db");
    const dead = join(dir, "dead.jsonl");
    const r = await runCli(
      [
        "backfill",
        first,
        broken,
        last,
        "--db",
        dbPath,
        "--project",
        "gz",
        "--dead-letter",
        dead,
        "--progress",
        "none",
        "--checkpoint",
        join(dir, "cp.json"),
      ],
      { env: { TRACEPIPE_ENDPOINT: "" }, timeoutMs: 60_000 },
    );
    expect(r.code, r.stderr).toBe(1);
    const issue = (
      JSON.parse(r.stderr.split("\n").find((l) => l.startsWith('{"error"'))!) as { error: { loc: unknown[]; msg: string; type: string } }
    ).error;
    expect(issue).toMatchObject({ loc: ["files", 1], type: "file_unreadable" });
    expect(issue.msg).toContain(broken);
    const reached = Number(/after line (\d+)/.exec(issue.msg)![1]);
    expect(reached).toBeGreaterThan(100);
    expect(reached).toBeLessThan(3000);
    // What arrived: all of a and c, and b's lines 1..reached (the runs record their source line).
    const { default: Database } = await import("better-sqlite3");
    const db = new Database(dbPath, { readonly: true });
    const byFile = (name: string) =>
      (
        db
          .prepare(
            "SELECT json_extract(extra, '$.metadata.backfill.line') AS line FROM runs WHERE session_name = 'gz' AND json_extract(extra, '$.metadata.backfill.file') LIKE ? ORDER BY 1",
          )
          .all(`%${name}`) as { line: number }[]
      ).map((x) => x.line);
    const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);
    try {
      expect(byFile("a.jsonl.gz")).toEqual(range(50));
      expect(byFile("b.jsonl.gz")).toEqual(range(reached));
      expect(byFile("c.jsonl")).toEqual(range(40));
    } finally {
      db.close();
    }
    expect(deadLetterLines(dead)).toEqual([]);
    expect(readFileSync(join(dir, "cp.json"), "utf8")).toContain("b.jsonl.gz");
  }, 90_000);
});
