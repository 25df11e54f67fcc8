import { afterEach, describe, expect, it } from "vitest";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { backfill } from "../../src/backfill/pipeline.js";
import { loadCheckpoint } from "../../src/backfill/checkpoint.js";
import { Client } from "../../src/ingest/index.js";
import { startServeProcess, type ServeProcess } from "../helpers/collector.js";
import { runCli } from "../helpers/cli.js";
import { deadLetterLines, genericLine, storedLines } from "../helpers/logs.js";
import { tempDir } from "../helpers/runs.js";

const cleanup: (() => Promise<void>)[] = [];
let col: ServeProcess | undefined;
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
  await col?.close();
  col = undefined;
});

const deadLetters = (path: string) =>
  readFileSync(path, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { line: number; errors: { type: string; msg: string }[] });

function nested(depth: number): string {
  return '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
}

describe("backfill under bad input and faults", () => {
  it("dead-letters a line nested 6,000 deep and stores the 99 around it", async () => {
    const dir = tempDir("tp-bf-deep-");
    const p = join(dir, "deep.jsonl");
    const rows = Array.from({ length: 100 }, (_, i) => genericLine(i));
    rows[49] = `{"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "deep"}]}, "metadata": {"d": ${nested(6000)}}}`;
    writeFileSync(p, rows.join("\n") + "\n");
    const dbPath = join(dir, "t.db");
    const client = new Client({ dbPath, spoolDir: join(dir, "spool"), exitHooks: false, warn: () => {} });
    cleanup.push(async () => void (await client.shutdown()));
    const dead = join(dir, "dead.jsonl");
    const r = await backfill({ files: [p], client, project: "deep", deadLetterPath: dead, checkpointPath: join(dir, "cp.json") });
    expect(r).toMatchObject({ records: 100, sent: 99, delivered: 99, dead_lettered: 1, unacknowledged: 0 });
    expect(deadLetters(dead)).toEqual([expect.objectContaining({ line: 50, errors: [expect.objectContaining({ type: "too_deep" })] })]);
    expect((await storedLines(dbPath, "deep")).lines).toEqual(Array.from({ length: 100 }, (_, i) => i + 1).filter((l) => l !== 50));
  });

  it("dead-letters a line over the maximum line size with its number, and reads on", async () => {
    const dir = tempDir("tp-bf-long-");
    const p = join(dir, "long.jsonl");
    const rows = Array.from({ length: 10 }, (_, i) => genericLine(i));
    rows[6] = JSON.stringify({ request: { model: "gpt-4o", messages: [{ role: "user", content: "x".repeat(50_000) }] } });
    writeFileSync(p, rows.join("\n") + "\n");
    const dbPath = join(dir, "t.db");
    const client = new Client({ dbPath, spoolDir: join(dir, "spool"), exitHooks: false, warn: () => {} });
    cleanup.push(async () => void (await client.shutdown()));
    const dead = join(dir, "dead.jsonl");
    const r = await backfill({ files: [p], client, project: "long", deadLetterPath: dead, maxLineBytes: 4096 });
    expect(r).toMatchObject({ records: 10, sent: 9, dead_lettered: 1 });
    const [entry] = deadLetters(dead);
    expect(entry).toMatchObject({ line: 7, errors: [{ type: "line_too_long" }] });
    expect(entry!.errors[0]!.msg).toContain("4096");
    expect((await storedLines(dbPath, "long")).n).toBe(9);
  });

  it("never moves the checkpoint past runs the endpoint did not acknowledge; a rerun after the outage stores each once", async () => {
    const dir = tempDir("tp-bf-outage-");
    const p = join(dir, "log.jsonl");
    writeFileSync(p, Array.from({ length: 300 }, (_, i) => genericLine(i)).join("\n") + "\n");
    const cp = join(dir, "cp.json");
    const spoolDir = join(dir, "spool");
    const down = new Client({
      endpoint: "http://127.0.0.1:1",
      apiKey: "k",
      spoolDir,
      deadLetterPath: join(dir, "client-dead.jsonl"),
      maxAttempts: 2,
      backoff: { baseMs: 1, maxMs: 5 },
      exitHooks: false,
      warn: () => {},
    });
    const r = await backfill({
      files: [p],
      client: down,
      project: "outage",
      deadLetterPath: join(dir, "dead.jsonl"),
      checkpointPath: cp,
      checkpointEveryMs: 1,
    });
    await down.shutdown();
    expect(r.delivered).toBe(0);
    expect(r.unacknowledged).toBe(300);
    expect(loadCheckpoint(cp)!.files.every((f) => f.offset === 0)).toBe(true);
    expect(existsSync(join(dir, "client-dead.jsonl"))).toBe(false);

    col = await startServeProcess(["--no-rate-limit"]);
    const up = new Client({ endpoint: col.url, apiKey: "k", spoolDir, exitHooks: false, warn: () => {} });
    const again = await backfill({
      files: [p],
      client: up,
      project: "outage",
      deadLetterPath: join(dir, "dead.jsonl"),
      checkpointPath: cp,
    });
    await up.shutdown();
    expect(again).toMatchObject({ unacknowledged: 0, records: 300 });
    expect(await storedLines(col.dbPath, "outage")).toMatchObject({ n: 300, d: 300 });
    expect(loadCheckpoint(cp)!.files[0]).toMatchObject({ offset: readFileSync(p).length, line: 300 });
  });

  it("stops before sending anything when the endpoint refuses the API key: exit 2, a clear message, nothing dead-lettered", async () => {
    col = await startServeProcess(["--no-rate-limit", "--api-key", "right-key"]);
    const dir = tempDir("tp-bf-auth-");
    const p = join(dir, "log.jsonl");
    writeFileSync(p, Array.from({ length: 50 }, (_, i) => genericLine(i)).join("\n") + "\n");
    for (const key of [[], ["--api-key", "wrong-key"]]) {
      const dead = join(dir, "dead.jsonl");
      const r = await runCli(
        [
          "backfill",
          p,
          "--endpoint",
          col.url,
          ...key,
          "--project",
          "auth",
          "--dead-letter",
          dead,
          "--progress",
          "none",
          "--spool-dir",
          join(dir, "spool"),
          "--db",
          join(dir, "client", "t.db"),
        ],
        { env: { TRACEPIPE_API_KEY: "" } },
      );
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/HTTP 401.*--api-key or TRACEPIPE_API_KEY/);
      expect(deadLetterLines(dead)).toEqual([]);
      expect(existsSync(join(dir, "client", "dead-letters", "runs.jsonl"))).toBe(false);
    }
    expect(col.count("auth").n).toBe(0);
    const ok = await runCli([
      "backfill",
      p,
      "--endpoint",
      col.url,
      "--api-key",
      "right-key",
      "--project",
      "auth",
      "--dead-letter",
      join(dir, "dead.jsonl"),
      "--progress",
      "none",
      "--spool-dir",
      join(dir, "spool"),
    ]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(col.count("auth").n).toBe(50);
  });

  it("names a directory argument and a corrupt .gz file for what they are (exit 2)", async () => {
    const dir = tempDir("tp-bf-args-");
    mkdirSync(join(dir, "logs"));
    const d = await runCli(["backfill", join(dir, "logs"), "--dry-run", "--progress", "none", "--dead-letter", join(dir, "dead.jsonl")]);
    expect(d.code).toBe(2);
    expect(d.stderr).toContain("is a directory");
    const gz = join(dir, "broken.jsonl.gz");
    writeFileSync(gz, genericLine(1) + "\n"); // not gzip at all
    const g = await runCli(["backfill", gz, "--dry-run", "--progress", "none", "--dead-letter", join(dir, "dead.jsonl")]);
    expect(g.code).toBe(2);
    const issue = (JSON.parse(g.stderr.split("\n")[0]!) as { error: { loc: unknown[]; msg: string } }).error;
    expect(issue.loc).toEqual(["files", 0]);
    expect(issue.msg).toContain(gz);
    expect(issue.msg).toMatch(/not valid gzip/);
  });
});
