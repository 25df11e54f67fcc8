import { afterEach, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startCollector, type Running, sql } from "../helpers/collector.js";
import { runCli, jsonLines } from "../helpers/cli.js";
import { writeGenericLog } from "../helpers/logs.js";
import { tempDir } from "../helpers/runs.js";
import { openStore } from "../../src/store/index.js";

const ENTRY = fileURLToPath(new URL("../../src/cli/run.ts", import.meta.url));
let col: Running | undefined;
afterEach(async () => {
  await col?.close();
  col = undefined;
});

const counts = (c: Running, project: string) => sql(c.collector.store).prepare("SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS d FROM runs WHERE session_name = ?").get(project) as { n: number; d: number };
const deadLines = (path: string) => readFileSync(path, "utf8").trim().split("\n").map((l) => (JSON.parse(l) as { line: number }).line);

describe("tracepipe backfill", () => {
  it("backfills a 200k-line log into the collector: every good record exactly once, every corrupted line dead-lettered with its number", async () => {
    col = await startCollector({ rateLimits: false });
    const dir = tempDir("tp-bf-cli-");
    const log = join(dir, "big.jsonl");
    const bad = await writeGenericLog(log, 200_000, 0.01, 42);
    const dead = join(dir, "dead.jsonl");
    const r = await runCli(["backfill", log, "--endpoint", col.url, "--api-key", "test-key", "--project", "big", "--dead-letter", dead, "--progress", "json", "--progress-every", "2000", "--spool-dir", join(dir, "spool")], { timeoutMs: 170_000 });
    expect(r.code, r.stderr.slice(-2000)).toBe(1); // some lines were bad
    const summary = (jsonLines(r.stdout).at(-1) as { summary: Record<string, number> }).summary;
    expect(summary).toMatchObject({ lines: 200_000, records: 200_000, sent: 200_000 - bad.length, dead_lettered: bad.length, delivered: 200_000 - bad.length });
    expect(bad.length).toBeGreaterThan(1500);
    expect(counts(col, "big")).toEqual({ n: 200_000 - bad.length, d: 200_000 - bad.length });
    expect(deadLines(dead)).toEqual(bad);
    expect(r.stderr).toMatch(/\{"progress":\{"phase":"sending"/);
    expect(r.stderr).toContain("backfill summary");
  }, 180_000);

  it("resumes after SIGKILL at a random point and ends with every record exactly once", async () => {
    col = await startCollector({ rateLimits: false });
    const dir = tempDir("tp-bf-kill-");
    const log = join(dir, "log.jsonl.gz");
    const bad = await writeGenericLog(log, 40_000, 0.005, 7);
    const cp = join(dir, "checkpoint.json");
    const dead = join(dir, "dead.jsonl");
    const args = ["backfill", log, "--endpoint", col.url, "--api-key", "test-key", "--project", "kill", "--checkpoint", cp, "--checkpoint-every", "100", "--dead-letter", dead, "--progress", "none", "--spool-dir", join(dir, "spool")];
    const child = spawn(process.execPath, ["--import", "tsx", ENTRY, ...args], { stdio: "ignore" });
    const exited = new Promise((r) => child.on("close", r));
    // Kill somewhere between the first checkpoint and the end.
    const target = 5000 + Math.floor(Math.random() * 20_000);
    const t0 = Date.now();
    while (counts(col, "kill").n < target && Date.now() - t0 < 60_000) await new Promise((r) => setTimeout(r, 20));
    expect(existsSync(cp)).toBe(true);
    child.kill("SIGKILL");
    await exited;
    const before = counts(col, "kill").n;
    expect(before).toBeLessThan(40_000 - bad.length);

    const r = await runCli(args, { timeoutMs: 120_000 });
    expect(r.code, r.stderr.slice(-2000)).toBe(1);
    const summary = (jsonLines(r.stdout).at(-1) as { summary: Record<string, unknown> }).summary;
    expect(summary).toMatchObject({ resumed: true, records: 40_000, dead_lettered: bad.length });
    expect(counts(col, "kill")).toEqual({ n: 40_000 - bad.length, d: 40_000 - bad.length });
    expect(deadLines(dead)).toEqual(bad); // each bad line once, though some were met before the kill
  }, 150_000);

  it("runs the README's first command: the bundled example into the embedded store by default", async () => {
    const cwd = tempDir("tp-bf-readme-");
    const example = fileURLToPath(new URL("../../examples/backfill/generic.jsonl", import.meta.url));
    const r = await runCli(["backfill", example], { cwd, env: { TRACEPIPE_ENDPOINT: "", TRACEPIPE_DB: "" } });
    expect(r.code, r.stderr).toBe(0);
    expect((jsonLines(r.stdout).at(-1) as { summary: Record<string, unknown> }).summary).toMatchObject({ records: 3, sent: 3, delivered: 3, dead_lettered: 0, estimated_usage: 1 });
    const store = openStore(join(cwd, ".tracepipe", "traces.db"));
    try {
      const runs = store.queryRuns({ limit: 10 }).runs;
      expect(runs).toHaveLength(3);
      const openai = runs.find((x) => (x.extra as { metadata: { trace_model_name?: string } }).metadata.trace_model_name === "gpt-4o-mini-2024-07-18")!;
      expect(openai.first_token_time).toBe("2026-01-01T12:00:00.120000Z");
    } finally {
      store.close();
    }
  });

  it("draws a progress bar on a terminal (a real pty through script(1))", async () => {
    const dir = tempDir("tp-bf-tty-");
    const log = join(dir, "tty.jsonl");
    await writeGenericLog(log, 3000, 0, 5);
    const cmd = [process.execPath, "--import", "tsx", ENTRY, "backfill", log, "--dry-run", "--dead-letter", join(dir, "dead.jsonl")].map((a) => `'${a}'`).join(" ");
    const out = await new Promise<{ code: number | null; text: string }>((resolve) => {
      const child = spawn("script", ["-qec", cmd, "/dev/null"], { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, COLUMNS: "200" } });
      let text = "";
      child.stdout.setEncoding("utf8").on("data", (d: string) => (text += d));
      child.stderr.setEncoding("utf8").on("data", (d: string) => (text += d));
      child.on("close", (code) => resolve({ code, text }));
      child.stdin.end();
    });
    expect(out.code, out.text.slice(-1500)).toBe(0);
    expect(out.text).toMatch(/dry run \|.*\| \d+% .*rec\/s \| ETA/);
    expect(out.text).toContain("backfill summary");
    expect(out.text).not.toContain('{"progress"'); // JSON lines are for logs, not terminals
  }, 60_000);

  it("checks everything and sends nothing in a dry run; --help documents the command", async () => {
    col = await startCollector({ rateLimits: false });
    const dir = tempDir("tp-bf-dry-");
    const log = join(dir, "dry.jsonl");
    const bad = await writeGenericLog(log, 500, 0.02, 3);
    const r = await runCli(["backfill", log, "--dry-run", "--endpoint", col.url, "--api-key", "test-key", "--project", "dry", "--dead-letter", join(dir, "dead.jsonl"), "--progress", "none"]);
    expect(r.code).toBe(bad.length ? 1 : 0);
    expect((jsonLines(r.stdout).at(-1) as { summary: Record<string, unknown> }).summary).toMatchObject({ dry_run: true, sent: 500 - bad.length, dead_lettered: bad.length });
    expect(counts(col, "dry").n).toBe(0);
    const help = await runCli(["backfill", "--help"]);
    expect(help.code).toBe(0);
    for (const flag of ["--checkpoint", "--dead-letter", "--dry-run", "--shard", "--rate-limiter", "--format", "openai-batch", "anthropic-batch"]) expect(help.stdout).toContain(flag);
    const missing = await runCli(["backfill", join(dir, "nope.jsonl"), "--dry-run", "--progress", "none"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('"loc":["files",0]');
  });
});
