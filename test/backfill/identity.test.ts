import { afterEach, describe, expect, it } from "vitest";
import { appendFileSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { backfill, type BackfillOptions } from "../../src/backfill/pipeline.js";
import { Client } from "../../src/ingest/index.js";
import { genericLine, storedLines } from "../helpers/logs.js";
import { tempDir } from "../helpers/runs.js";

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

const lines = (from: number, to: number, salt = "") =>
  Array.from({ length: to - from }, (_, i) => genericLine(from + i, salt) + "\n").join("");

/** Backfill into one embedded store per test; returns the result (its `delivered` counts this run only). */
function setup() {
  const dir = tempDir("tp-bf-id-");
  const dbPath = join(dir, "traces.db");
  const client = new Client({ dbPath, spoolDir: join(dir, "spool"), exitHooks: false, warn: () => {} });
  cleanup.push(async () => void (await client.shutdown()));
  const run = async (files: string[], o: Partial<BackfillOptions> = {}) => {
    const r = await backfill({ files, client, project: "id", deadLetterPath: join(dir, "dead.jsonl"), ...o });
    await client.flush();
    return r;
  };
  return { dir, run, stored: () => storedLines(dbPath, "id") };
}

describe("backfill file identity", () => {
  it("goes on after appends to a small file (under 64 KiB): a rerun sends only the new lines", async () => {
    const { dir, run, stored } = setup();
    const p = join(dir, "small.jsonl");
    writeFileSync(p, lines(0, 50));
    const cp = join(dir, "cp.json");
    expect((await run([p], { checkpointPath: cp })).delivered).toBe(50);
    appendFileSync(p, lines(50, 70));
    const again = await run([p], { checkpointPath: cp });
    expect(again).toMatchObject({ delivered: 20, sent: 70, records: 70 });
    expect(await stored()).toMatchObject({ n: 70, d: 70 });
    // Without a checkpoint every line is sent again, onto the same ids.
    expect((await run([p])).delivered).toBe(70);
    expect((await stored()).n).toBe(70);
  });

  it("reads lines appended to a large file that a checkpoint marked done", async () => {
    const { dir, run, stored } = setup();
    const p = join(dir, "large.jsonl");
    writeFileSync(p, lines(0, 400));
    expect(readFileSync(p).length).toBeGreaterThan(64 * 1024);
    const cp = join(dir, "cp.json");
    await run([p], { checkpointPath: cp });
    appendFileSync(p, lines(400, 420));
    expect((await run([p], { checkpointPath: cp })).delivered).toBe(20);
    expect((await stored()).lines).toEqual(Array.from({ length: 420 }, (_, i) => i + 1));
  });

  it("keeps two files that share their first 64 KiB apart: every record of each is stored", async () => {
    const { dir, run, stored } = setup();
    const a = join(dir, "a.jsonl");
    const b = join(dir, "b.jsonl");
    const shared = lines(0, 200);
    expect(Buffer.byteLength(shared)).toBeGreaterThan(64 * 1024);
    writeFileSync(a, shared + lines(200, 600, "a"));
    writeFileSync(b, shared + lines(200, 500, "b"));
    const cp = join(dir, "cp.json");
    await run([a], { checkpointPath: cp });
    // b is not taken for a (a's checkpoint covers more than b's common part): all of it is read.
    expect((await run([b], { checkpointPath: cp })).delivered).toBe(500);
    // The common lines are the same records (same content, same place); the rest are 400 + 300 different ones.
    expect(await stored()).toMatchObject({ n: 200 + 400 + 300, d: 200 + 400 + 300 });
  });

  it("knows a renamed, re-gzipped file: nothing is sent again, and its ids do not change", async () => {
    const { dir, run, stored } = setup();
    const p = join(dir, "log.jsonl");
    writeFileSync(p, lines(0, 120));
    const cp = join(dir, "cp.json");
    await run([p], { checkpointPath: cp });
    const gz = join(dir, "renamed.jsonl.gz");
    writeFileSync(gz, gzipSync(readFileSync(p), { level: 1 }));
    const gz2 = join(dir, "again.jsonl.gz");
    writeFileSync(gz2, gzipSync(readFileSync(p), { level: 9 }));
    renameSync(p, join(dir, "moved.jsonl"));
    expect((await run([gz], { checkpointPath: cp })).delivered).toBe(0);
    expect((await run([gz2])).delivered).toBe(120); // no checkpoint: sent again, onto the same runs
    expect(await stored()).toMatchObject({ n: 120, d: 120 });
  });
});
