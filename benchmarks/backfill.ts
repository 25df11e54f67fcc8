/**
 * Backfill end to end: a generated generic log (1% corrupted lines) through
 * `backfill()` and the Client into the local collector, each measurement in
 * its own process (peak RSS is its own), the collector in another.
 *
 *   unlimited  collector without rate limits, client limit lifted: where the CPU bound is
 *   table      collector enforcing SPEC §8, client on the real 6000 / 10 s row
 *   langsmith  peer: the same lines and converter, delivered by the `langsmith` Client (N <= 100k)
 *   limit      one run per request against the enforcing collector, so the 6000 / 10 s row
 *              is the bound: the busiest 10 s window, as the collector's proxy saw it
 *
 * Each tracepipe row also checks the outcome at that scale (what the test suite
 * checks on a small file): every good line stored exactly once, every corrupted
 * line dead-lettered.
 *
 * First, one long line read at 16, 32 and 64 MiB: the time ratio shows the
 * line reader is linear (the quadratic one took 3.3 s at 50 MiB, 26-50 s at 200 MiB).
 *
 *   npx tsx benchmarks/backfill.ts            # 100k and 1M lines (the 1M file is generated, then deleted)
 *   npx tsx benchmarks/backfill.ts --quick    # 100k only
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startServeProcess, type ServeProcess } from "../test/helpers/collector.js";
import { writeGenericLog } from "../test/helpers/logs.js";
import { maxInWindow, startProxy } from "../test/helpers/proxy.js";

const root = fileURLToPath(new URL("../", import.meta.url));
const quick = process.argv.includes("--quick");
const sizes = quick ? [100_000] : [100_000, 1_000_000];
const LIMIT_LINES = 20_000;
const work = mkdtempSync(join(tmpdir(), "tp-bench-backfill-"));

type Result = Record<string, number | string | null>;
function worker(peer: string, url: string, log: string, project: string, opts: object = {}): Promise<Result> {
  return new Promise((resolve, reject) => {
    const p = spawn(
      process.execPath,
      ["--import", "tsx", join(root, "benchmarks/backfill-worker.ts"), peer, url, log, project, JSON.stringify(opts)],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    let out = "";
    p.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d));
    p.on("exit", (code) => {
      try {
        resolve(JSON.parse(out.trim().split("\n").pop() ?? "") as Result);
      } catch {
        reject(new Error(`${peer} worker exited ${code}: ${out}`));
      }
    });
  });
}

{
  const { readLines } = await import("../src/backfill/lines.js");
  const times: number[] = [];
  for (const mib of [16, 32, 64]) {
    const p = join(work, `long-${mib}.jsonl`);
    writeFileSync(p, `{"a":1}\n"${"x".repeat((mib << 20) - 16)}"\n{"b":2}\n`);
    const t = performance.now();
    let chars = 0;
    for await (const l of readLines(p, { maxLineBytes: 65 << 20 })) chars += l.text.length;
    times.push(performance.now() - t);
    console.log(`one ${mib} MiB line: read in ${(times.at(-1)! / 1000).toFixed(2)} s (${chars} chars)`);
    rmSync(p);
  }
  console.log(`  -> 64 MiB / 16 MiB read time: ${(times[2]! / times[0]!).toFixed(1)}x (linear: about 4x; quadratic: about 16x)`);
}

const open = await startServeProcess(["--no-rate-limit"]);
const table = await startServeProcess([]);
const stored = (c: ServeProcess) => (project: string) => c.count(project).n;
const stores = { open: { countRuns: stored(open) }, table: { countRuns: stored(table) } };
console.log(`backfill benchmark (${work}); collectors: ${open.url} (no limits), ${table.url} (SPEC §8 enforced)`);

const row = (label: string, n: number, r: Result, stored: number) =>
  console.log(
    `  ${label.padEnd(10)} N=${String(n).padStart(8)}  ${Math.round(Number(r.recordsPerSec)).toString().padStart(6)} records/s` +
      `${r.requests != null ? `  ${(Number(r.requests) / Number(r.seconds)).toFixed(0).padStart(4)} req/s` : "            "}` +
      `  peak RSS ${Number(r.peakRssMiB).toFixed(0).padStart(4)} MiB  stored ${stored}/${r.delivered}${r.retried ? `  retried ${r.retried}` : ""}`,
  );

for (const n of sizes) {
  const log = join(work, `generic-${n}.jsonl`);
  const t = performance.now();
  const bad = await writeGenericLog(log, n, 0.01, n, `n${n}`);
  console.log(
    `N=${n}: generated ${(statSync(log).size / 2 ** 20).toFixed(0)} MiB in ${((performance.now() - t) / 1000).toFixed(1)} s (${bad.length} corrupted lines)`,
  );
  const results: Record<string, Result> = {};
  const runs: [string, string, { countRuns(p: string): number }, object][] = [
    ["unlimited", open.url, stores.open, { rateLimit: { limit: 1e9, windowMs: 1000 } }],
    ["table", table.url, stores.table, {}],
  ];
  for (const [label, url, store, opts] of runs) {
    const project = `${label}-${n}`;
    const r = await worker("tracepipe", url, log, project, opts);
    results[label] = r;
    const stored = store.countRuns(project);
    row(label, n, r, stored);
    const exact = stored === n - bad.length && Number(r.dead) === bad.length;
    console.log(
      `  -> ${exact ? "exactly once" : "MISMATCH"}: stored ${stored} of ${n - bad.length} good lines, dead-lettered ${r.dead} of ${bad.length} corrupted`,
    );
  }
  if (n <= 100_000) {
    const project = `langsmith-${n}`;
    const r = await worker("langsmith", open.url, log, project);
    results.langsmith = r;
    row("langsmith", n, r, stores.open.countRuns(project));
    console.log(
      `  -> tracepipe (unlimited) / langsmith records/s: ${(Number(results.unlimited!.recordsPerSec) / Number(r.recordsPerSec)).toFixed(2)}x`,
    );
  }
  console.log(
    `  -> table-limited / unlimited records/s: ${(Number(results.table!.recordsPerSec) / Number(results.unlimited!.recordsPerSec)).toFixed(2)} (the row allows 6000 requests x 100 runs per 10 s; the CPU binds first)`,
  );
  rmSync(log, { force: true });
}

// The limit as the bound: one run per request, so 6000 / 10 s is 600 runs/s.
{
  const log = join(work, "limit.jsonl");
  await writeGenericLog(log, LIMIT_LINES, 0, 5, "limit-bound"); // its own lines, so its own run ids
  const proxy = await startProxy(table.url);
  const project = "limit-bound";
  const r = await worker("tracepipe", proxy.url, log, project, { batchSize: 1 });
  row("limit", LIMIT_LINES, r, stores.table.countRuns(project));
  const peak = maxInWindow(proxy.times, 10_000);
  const statuses = proxy.statuses.filter((s) => s === 429).length;
  console.log(
    `  -> busiest 10 s window at the collector: ${peak} of 6000 requests (${((peak / 6000) * 100).toFixed(1)}% of the limit; target >= 95%, never above); 429s: ${statuses}`,
  );
  await proxy.close();
}

await open.close();
await table.close();
rmSync(work, { recursive: true, force: true });
