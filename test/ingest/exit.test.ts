import { afterEach, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "../../src/ingest/index.js";
import { startCollector, type Running, sql } from "../helpers/collector.js";
import { tempDir } from "../helpers/runs.js";

const CHILD = fileURLToPath(new URL("../fixtures/scripts/exit-child.ts", import.meta.url));
let col: Running | undefined;
afterEach(async () => {
  await col?.close();
});

/** Async, so the collector in this process keeps answering while the child runs. */
async function runChild(
  endpoint: string,
  spoolDir: string,
  count: number,
  mode: "exit" | "natural" | "complete",
  exitTimeoutMs?: number,
): Promise<void> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", CHILD, endpoint, spoolDir, String(count), mode, ...(exitTimeoutMs !== undefined ? [String(exitTimeoutMs)] : [])],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
  // A child that never leaves is killed, and its null exit code fails the test.
  const killer = setTimeout(() => child.kill("SIGKILL"), 45_000);
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  clearTimeout(killer);
  expect(code, stderr).toBe(0);
}

/** Runs whose deferred `prepare` step ran before they left the child. */
async function preparedCount(c: Running, project: string): Promise<number> {
  return (await c.collector.store.queryRuns({ project, limit: 1000 })).runs.filter(
    (r) => (r.outputs as { prepared?: boolean } | undefined)?.prepared === true,
  ).length;
}

describe("process exit", () => {
  it("delivers runs created just before the event loop empties (beforeExit)", async () => {
    col = await startCollector();
    const spool = join(tempDir("tp-exit-"), "spool");
    await runChild(col.url, spool, 500, "natural");
    expect(await col.collector.store.countRuns("exit-natural")).toBe(500);
    expect(await preparedCount(col, "exit-natural")).toBe(500);
  });

  it("spools runs on process.exit() and the next client start delivers each exactly once", async () => {
    col = await startCollector();
    const spool = join(tempDir("tp-exit-"), "spool");
    await runChild(col.url, spool, 700, "exit");
    expect(await col.collector.store.countRuns("exit-exit")).toBeLessThanOrEqual(700);
    const next = new Client({ endpoint: col.url, apiKey: "k", spoolDir: spool, warn: () => {} });
    await next.flush();
    await next.shutdown();
    expect(await col.collector.store.countRuns("exit-exit")).toBe(700);
    const dup = sql(col.collector.store)
      .prepare("SELECT COUNT(DISTINCT id) AS d, COUNT(*) AS n FROM runs WHERE session_name = 'exit-exit'")
      .get() as { d: number; n: number };
    expect(dup.d).toBe(dup.n);
    expect(await preparedCount(col, "exit-exit")).toBe(700);
  });

  it("spools complete runs held as bytes on process.exit(), and the next client delivers each whole, exactly once", async () => {
    col = await startCollector();
    const spool = join(tempDir("tp-exit-complete-"), "spool");
    await runChild(col.url, spool, 600, "complete");
    const next = new Client({ endpoint: col.url, apiKey: "k", spoolDir: spool, warn: () => {} });
    await next.flush();
    await next.shutdown();
    const runs = (await col.collector.store.queryRuns({ project: "exit-complete", limit: 1000 })).runs;
    expect(runs).toHaveLength(600);
    expect(new Set(runs.map((r) => (r.inputs as { i: number }).i)).size).toBe(600);
    for (const r of runs) {
      expect(r.inputs).toMatchObject({ text: "é ✓ ".repeat(50) });
      expect(r.outputs).toEqual({ i: (r.inputs as { i: number }).i });
      expect(r.end_time).toMatch(/^2026-11-22T10:15:01/);
    }
  });

  it("does not hold the host's exit while the endpoint is down: spools what is left, and the next client delivers it", async () => {
    const spool = join(tempDir("tp-exit-down-"), "spool");
    // Nothing listens on port 9: every attempt fails, and the child awaits no flush.
    await runChild("http://127.0.0.1:9", spool, 200, "natural", 500);
    col = await startCollector();
    const next = new Client({ endpoint: col.url, apiKey: "k", spoolDir: spool, exitHooks: false, warn: () => {} });
    await next.flush();
    await next.shutdown();
    expect(await col.collector.store.countRuns("exit-natural")).toBe(200);
    expect(await preparedCount(col, "exit-natural")).toBe(200);
  }, 60_000);
});
