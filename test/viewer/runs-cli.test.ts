/** `tracepipe runs list|show|tail` over a real SQLite file and over a real collector. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { startCollector, type Running } from "../helpers/collector.js";
import { CLI, jsonLines, type CliResult } from "../helpers/cli.js";
import { bulkTrace, XSS } from "./traces.js";

const KEY = "k-runs";
let col: Running;
const deep = bulkTrace(7, { name: "deep-7", project: "cli" });

function runs(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...CLI, "runs", ...args], {
      env: { ...process.env, TRACEPIPE_ENDPOINT: "", TRACEPIPE_DB: "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

beforeAll(async () => {
  col = await startCollector({ apiKey: KEY });
  await col.collector.store.ingest({ post: [...deep, { ...XSS.run, name: "bell\u0007\u001b[31mred", error: "bad\nthing" }] });
});
afterAll(async () => {
  await col.close();
});

describe("tracepipe runs", () => {
  it("lists recent traces as a table from the file, with escapes for control characters", async () => {
    const r = await runs(["list", "--db", col.dbPath]);
    expect(r.stderr).toBe("");
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^START \(UTC\)\s+NAME\s+STATUS\s+LATENCY\s+TOKENS\s+RUNS\s+MODEL\s+TRACE ID$/);
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatch(/deep-7\s+ok\s+2\.50s\s+-\s+7\s+-\s+/);
    expect(lines[1]).toContain(String(deep[0]!.id));
    expect(lines[2]).toContain("bell\\x07\\x1b[31mred");
    expect(lines[2]).toMatch(/error\s+1\.00s\s+18\s+1\s+gpt-4o/);
  });

  it("shows one trace as an indented tree, from a collector with the key", async () => {
    const r = await runs(["show", String(deep[0]!.id), "--endpoint", col.url, "--api-key", KEY]);
    expect(r.stderr).toBe("");
    expect(r.stdout.trimEnd().split("\n")).toEqual([
      "deep-7 (chain)  2.50s",
      "  step-1 (tool)  3ms",
      "    step-2 (chain)  3ms",
      "      step-3 (tool)  3ms",
      "  step-4 (chain)  3ms",
      "    step-5 (tool)  3ms",
      "      step-6 (chain)  3ms",
    ]);
  });

  it("prints JSON lines with --json and filters like the viewer", async () => {
    const r = await runs(["list", "--json", "--errors"], { TRACEPIPE_ENDPOINT: col.url, TRACEPIPE_API_KEY: KEY });
    const rows = jsonLines(r.stdout) as { trace_id: string; total_tokens: number }[];
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ trace_id: XSS.run.id, total_tokens: 18 });
  });

  it("filters by --metadata key=value and --tag, from the file and from a collector alike", async () => {
    for (const source of [
      ["--db", col.dbPath],
      ["--endpoint", col.url, "--api-key", KEY],
    ]) {
      const r = await runs(["list", "--json", "--metadata", "trace_model_name=gpt-4o", "--metadata", "trace_provider=openai", ...source]);
      expect((jsonLines(r.stdout) as { trace_id: string }[]).map((t) => t.trace_id)).toEqual([XSS.run.id]);
      const tagged = await runs(["list", "--tag", "nowhere", ...source]);
      expect(tagged.stdout).toBe("no traces\n");
    }
    const bad = await runs(["list", "--metadata", "novalue", "--db", col.dbPath]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--metadata expects key=value");
  });

  it("exits 2 naming the problem: refused key, unknown trace, no store", async () => {
    const refused = await runs(["list", "--endpoint", col.url, "--api-key", "nope"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("refused the API key (401)");
    const missing = await runs(["show", "0192b3c4-0000-7000-8000-000000000000", "--db", col.dbPath]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("trace 0192b3c4-0000-7000-8000-000000000000 not found");
    const none = await runs(["list", "--db", "/nonexistent/dir/traces.db"]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("no trace store at /nonexistent/dir/traces.db");
  });

  it("tails: prints a trace that arrives while it follows, once", async () => {
    const child = spawn(
      process.execPath,
      [...CLI, "runs", "tail", "--json", "--interval", "100", "--endpoint", col.url, "--api-key", KEY],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (out += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (err += d));
    const late = bulkTrace(2, { name: "late-arrival", project: "cli", startMs: Date.parse("2026-11-23T00:00:00Z") });
    // The first poll records what is already stored: its readiness line says it is done.
    await expect.poll(() => err, { timeout: 45_000, interval: 50 }).toContain("following new traces");
    await col.collector.store.ingest({ post: late });
    await expect.poll(() => out, { timeout: 45_000, interval: 50 }).toContain("late-arrival");
    // A few more polls: the trace must not be printed again.
    const polls = (n: number) => new Promise((r) => setTimeout(r, n * 100));
    await polls(4);
    child.kill("SIGTERM");
    await new Promise((r) => child.once("close", r));
    const rows = jsonLines(out) as { name: string; run_count: number }[];
    expect(rows.map((x) => x.name)).toEqual(["late-arrival"]);
    expect(rows[0]!.run_count).toBe(2);
  }, 120_000);
});
