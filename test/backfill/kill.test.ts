import { afterEach, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { startServeProcess, type ServeProcess } from "../helpers/collector.js";
import { CLI, jsonLines, runCli } from "../helpers/cli.js";
import { deadLetterLines, storedLines, writeGenericLog } from "../helpers/logs.js";
import { tempDir } from "../helpers/runs.js";
import { waitFor } from "../helpers/wait.js";

let col: ServeProcess | undefined;
afterEach(async () => {
  await col?.close();
  col = undefined;
});

describe("backfill under SIGKILL", () => {
  it("is killed five times (the first before any periodic checkpoint) and still stores every good record exactly once and dead-letters every bad line once", async () => {
    col = await startServeProcess(["--no-rate-limit"]);
    const dir = tempDir("tp-bf-kills-");
    const log = join(dir, "log.jsonl.gz");
    const N = 3000;
    const bad = await writeGenericLog(log, N, 0.02, 11);
    const good = N - bad.length;
    const goodLines = Array.from({ length: N }, (_, i) => i + 1).filter((l) => !bad.includes(l));
    const dead = join(dir, "dead.jsonl");
    const project = "kills";
    // Slow enough (about 2000 runs/s) that every kill lands mid-file.
    const args = [
      "backfill",
      log,
      "--endpoint",
      col.url,
      "--api-key",
      "k",
      "--project",
      project,
      "--checkpoint",
      join(dir, "cp.json"),
      "--dead-letter",
      dead,
      "--progress",
      "none",
      "--spool-dir",
      join(dir, "spool"),
      "--batch-size",
      "10",
      "--rate-limit",
      "20/100ms",
    ];
    const stored = async () => col!.count(project).n;

    for (let k = 0; k < 5; k++) {
      const before = await stored();
      const target = Math.min(good - 200, before + 300 + Math.floor(Math.random() * 400));
      // The first process never reaches a periodic checkpoint: only the one written at its start.
      const child = spawn(process.execPath, [...CLI, ...args, "--checkpoint-every", k === 0 ? "600000" : "50"], { stdio: "ignore" });
      const exited = new Promise((r) => child.on("close", r));
      await waitFor(async () => (await stored()) >= target && (k > 0 || deadLetterLines(dead).length > 0), `${target} runs stored`);
      child.kill("SIGKILL");
      await exited;
      expect(await stored()).toBeLessThan(good); // killed mid-file, not after the end
    }

    const r = await runCli([...args, "--checkpoint-every", "50"], { timeoutMs: 120_000 });
    expect(r.code, r.stderr.slice(-2000)).toBe(1); // some lines were bad
    expect((jsonLines(r.stdout).at(-1) as { summary: Record<string, unknown> }).summary).toMatchObject({
      resumed: true,
      lines: N,
      records: N,
      sent: good,
      dead_lettered: bad.length,
    });
    const runs = await storedLines(col.dbPath, project);
    expect(runs.n).toBe(good);
    expect(runs.d).toBe(good);
    expect(runs.lines).toEqual(goodLines);
    expect(deadLetterLines(dead)).toEqual(bad); // each bad line once, in order, though several were met before a kill
  }, 240_000);
});
