import { afterEach, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startCollector, type Running } from "../helpers/collector.js";
import { CLI, runCli, jsonLines } from "../helpers/cli.js";
import { storedLines, writeGenericLog } from "../helpers/logs.js";
import { tempDir } from "../helpers/runs.js";
import { skipWithout } from "../helpers/services.js";
import { openStore } from "../../src/store/index.js";

let col: Running | undefined;
afterEach(async () => {
  await col?.close();
  col = undefined;
});

/** Rows and distinct ids in a project, read from the collector's SQLite file. */
const counts = async (c: Running, project: string) => {
  const { n, d } = await storedLines(c.dbPath, project);
  return { n, d };
};
const deadLines = (path: string) =>
  readFileSync(path, "utf8")
    .trim()
    .split("\n")
    .map((l) => (JSON.parse(l) as { line: number }).line);

describe("tracepipe backfill", () => {
  it("backfills a log into the collector: every good record exactly once, every corrupted line dead-lettered with its number (scale: benchmarks/backfill.ts)", async () => {
    col = await startCollector({ rateLimits: false });
    const dir = tempDir("tp-bf-cli-");
    const log = join(dir, "big.jsonl");
    const N = 5000;
    const bad = await writeGenericLog(log, N, 0.01, 42);
    const dead = join(dir, "dead.jsonl");
    const r = await runCli(
      [
        "backfill",
        log,
        "--endpoint",
        col.url,
        "--api-key",
        "test-key",
        "--project",
        "big",
        "--dead-letter",
        dead,
        "--progress",
        "json",
        "--progress-every",
        "1",
        "--spool-dir",
        join(dir, "spool"),
      ],
      { timeoutMs: 60_000 },
    );
    expect(r.code, r.stderr.slice(-2000)).toBe(1); // some lines were bad
    const summary = (jsonLines(r.stdout).at(-1) as { summary: Record<string, number> }).summary;
    expect(summary).toMatchObject({ lines: N, records: N, sent: N - bad.length, dead_lettered: bad.length, delivered: N - bad.length });
    expect(bad.length).toBeGreaterThan(20);
    expect(await counts(col, "big")).toEqual({ n: N - bad.length, d: N - bad.length });
    expect(deadLines(dead)).toEqual(bad);
    expect(r.stderr).toMatch(/\{"progress":\{"phase":"sending"/);
    expect(r.stderr).toContain("backfill summary");
  }, 90_000);

  it("runs the README's first command: the bundled example into the embedded store by default", async () => {
    const cwd = tempDir("tp-bf-readme-");
    const example = fileURLToPath(new URL("../../examples/backfill/generic.jsonl", import.meta.url));
    const r = await runCli(["backfill", example], { cwd, env: { TRACEPIPE_ENDPOINT: "", TRACEPIPE_DB: "" } });
    expect(r.code, r.stderr).toBe(0);
    expect((jsonLines(r.stdout).at(-1) as { summary: Record<string, unknown> }).summary).toMatchObject({
      records: 3,
      sent: 3,
      delivered: 3,
      dead_lettered: 0,
      estimated_usage: 1,
    });
    const store = await openStore(join(cwd, ".tracepipe", "traces.db"));
    try {
      const runs = (await store.queryRuns({ limit: 10 })).runs;
      expect(runs).toHaveLength(3);
      const openai = runs.find(
        (x) => (x.extra as { metadata: { trace_model_name?: string } }).metadata.trace_model_name === "gpt-4o-mini-2024-07-18",
      )!;
      expect(openai.first_token_time).toBe("2026-01-01T12:00:00.120000Z");
    } finally {
      store.close();
    }
  });

  // script(1) (util-linux, Debian's bsdutils) gives the CLI a real terminal; without it the test is skipped with a notice.
  it.skipIf(skipWithout("script", "apt-get install bsdutils"))(
    "draws a progress bar on a terminal (a real pty through script(1))",
    async () => {
      const dir = tempDir("tp-bf-tty-");
      const log = join(dir, "tty.jsonl");
      await writeGenericLog(log, 3000, 0, 5);
      const cmd = [process.execPath, ...CLI, "backfill", log, "--dry-run", "--dead-letter", join(dir, "dead.jsonl")]
        .map((a) => `'${a}'`)
        .join(" ");
      const out = await new Promise<{ code: number | null; text: string }>((resolve) => {
        const child = spawn("script", ["-qec", cmd, "/dev/null"], {
          stdio: ["pipe", "pipe", "pipe"],
          env: { ...process.env, COLUMNS: "200" },
        });
        let text = "";
        child.stdout.setEncoding("utf8").on("data", (d: string) => (text += d));
        child.stderr.setEncoding("utf8").on("data", (d: string) => (text += d));
        child.on("close", (code) => resolve({ code, text }));
        // Not started (no script(1) under CI=true): fail at once, saying why, rather than time out.
        child.on("error", (err) => resolve({ code: -1, text: `${text}\n${err.message}` }));
        child.stdin.end();
      });
      expect(out.code, out.text.slice(-1500)).toBe(0);
      expect(out.text).toMatch(/dry run \|.*\| \d+% .*rec\/s \| ETA/);
      expect(out.text).toContain("backfill summary");
      expect(out.text).not.toContain('{"progress"'); // JSON lines are for logs, not terminals
    },
    60_000,
  );

  it("checks everything and sends nothing in a dry run; --help documents the command", async () => {
    col = await startCollector({ rateLimits: false });
    const dir = tempDir("tp-bf-dry-");
    const log = join(dir, "dry.jsonl");
    const bad = await writeGenericLog(log, 500, 0.02, 3);
    const r = await runCli([
      "backfill",
      log,
      "--dry-run",
      "--endpoint",
      col.url,
      "--api-key",
      "test-key",
      "--project",
      "dry",
      "--dead-letter",
      join(dir, "dead.jsonl"),
      "--progress",
      "none",
    ]);
    expect(r.code).toBe(bad.length ? 1 : 0);
    expect((jsonLines(r.stdout).at(-1) as { summary: Record<string, unknown> }).summary).toMatchObject({
      dry_run: true,
      sent: 500 - bad.length,
      dead_lettered: bad.length,
    });
    expect((await counts(col, "dry")).n).toBe(0);
    const help = await runCli(["backfill", "--help"]);
    expect(help.code).toBe(0);
    for (const flag of [
      "--checkpoint",
      "--dead-letter",
      "--dry-run",
      "--shard",
      "--rate-limiter",
      "--format",
      "openai-batch",
      "anthropic-batch",
    ])
      expect(help.stdout).toContain(flag);
    const missing = await runCli(["backfill", join(dir, "nope.jsonl"), "--dry-run", "--progress", "none"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('"loc":["files",0]');
  });
});

describe("where data goes", () => {
  it("names the destination and the dead-letter file, kept beside the store under dead-letters/", async () => {
    const dir = tempDir("tp-bf-where-");
    const log = join(dir, "log.jsonl");
    const bad = await writeGenericLog(log, 40, 0.1);
    expect(bad.length).toBeGreaterThan(0);
    const db = join(dir, "store", "traces.db");
    const r = await runCli(["backfill", log, "--db", db, "--progress", "none", "--spool-dir", join(dir, "spool")], {
      env: { TRACEPIPE_ENDPOINT: "" },
    });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`runs went to ${db}`);
    const dead = join(dir, "store", "dead-letters", "backfill-lines.jsonl");
    expect(r.stderr).toContain(`bad lines are in ${dead}`);
    expect(readFileSync(dead, "utf8").trim().split("\n")).toHaveLength(bad.length);
  });
});
