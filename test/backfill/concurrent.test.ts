import { afterEach, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startServeProcess, type ServeProcess } from "../helpers/collector.js";
import { CLI, runCli } from "../helpers/cli.js";
import { deadLetterLines, storedLines, writeGenericLog } from "../helpers/logs.js";
import { tempDir } from "../helpers/runs.js";
import { waitFor } from "../helpers/wait.js";
import { lockPath } from "../../src/backfill/lock.js";

let col: ServeProcess | undefined;
afterEach(async () => {
  await col?.close();
  col = undefined;
});

describe("two backfills on one checkpoint", () => {
  it("refuses the second while the first runs (exit 2, naming the other process), takes over the lock of a killed one, and stores every record once", async () => {
    col = await startServeProcess(["--no-rate-limit"]);
    const dir = tempDir("tp-bf-two-");
    const log = join(dir, "log.jsonl");
    const N = 5000;
    const bad = await writeGenericLog(log, N, 0.02, 5);
    const good = N - bad.length;
    const dead = join(dir, "dead.jsonl");
    const cp = join(dir, "cp.json");
    const project = "two";
    // Slow enough that the first is still running when the second starts (a cron job started again).
    const args = (spool: string) => [
      "backfill",
      log,
      "--endpoint",
      col!.url,
      "--api-key",
      "k",
      "--project",
      project,
      "--checkpoint",
      cp,
      "--dead-letter",
      dead,
      "--progress",
      "none",
      "--spool-dir",
      join(dir, spool),
      "--batch-size",
      "10",
      "--rate-limit",
      "5/100ms",
      "--checkpoint-every",
      "50",
    ];
    const stored = async () => col!.count(project).n;

    const first = spawn(process.execPath, [...CLI, ...args("spool-a")], { stdio: "ignore" });
    const firstExit = new Promise<number | null>((r) => first.on("close", r));
    await waitFor(async () => (await stored()) > 100, "the first backfill to be sending");
    const second = await runCli(args("spool-b"), { timeoutMs: 60_000 });
    expect(second.code, second.stderr.slice(0, 3000)).toBe(2);
    expect(second.stderr).toContain(`is in use by another backfill (pid ${first.pid})`);
    expect(await stored()).toBeLessThan(good); // the first was still running

    // The first is killed mid-file: its lock is left behind, and the next run takes it over.
    first.kill("SIGKILL");
    await firstExit;
    expect(existsSync(`${cp}.lock`)).toBe(true);
    const third = await runCli(args("spool-a"), { timeoutMs: 120_000 });
    expect(third.code, third.stderr.slice(-2000)).toBe(1); // some lines were bad
    expect(existsSync(`${cp}.lock`)).toBe(false);

    const runs = await storedLines(col.dbPath, project);
    expect(runs).toMatchObject({ n: good, d: good });
    expect(deadLetterLines(dead)).toEqual(bad); // each bad line once, in order
  }, 240_000);
});

describe("a backfill's lock", () => {
  it("takes over a lock holding its own pid that it does not hold (a restarted container runs under the same pid)", () => {
    const path = join(tempDir("tp-bf-lock-"), "cp.json");
    writeFileSync(`${path}.lock`, String(process.pid));
    const release = lockPath(path, "checkpoint");
    expect(readFileSync(`${path}.lock`, "utf8")).toBe(String(process.pid));
    // Held now: a second take in this process is refused, naming the option.
    expect(() => lockPath(path, "checkpoint")).toThrow(/in use by another backfill/);
    release();
    expect(existsSync(`${path}.lock`)).toBe(false);
  });
});
