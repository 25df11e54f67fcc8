/**
 * Delivery throughput: tracepipe's Client vs the `langsmith` package's Client,
 * both into the same local collector (its own process, rate limits off so the
 * clients are what is measured). Each measurement runs in a fresh process so
 * its peak RSS is its own; runs are generated lazily, so a client that keeps
 * memory flat in N shows it.
 *
 *   npx tsx benchmarks/ingest.ts            # N = 10k and 100k, ~2 KB and ~50 KB runs
 *   npx tsx benchmarks/ingest.ts --full     # adds N = 1M (~2 KB runs)
 *   npx tsx benchmarks/ingest.ts --quick    # N = 10k only
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { openStore } from "../src/store/index.js";

const root = fileURLToPath(new URL("../", import.meta.url));
const full = process.argv.includes("--full");
const quick = process.argv.includes("--quick");
const plan: { n: number; bytes: number; peers: string[] }[] = [
  { n: 10_000, bytes: 2_000, peers: ["tracepipe", "langsmith"] },
  ...(quick ? [] : [{ n: 100_000, bytes: 2_000, peers: ["tracepipe", "langsmith"] }, { n: 10_000, bytes: 50_000, peers: ["tracepipe", "langsmith"] }]),
  ...(full ? [{ n: 1_000_000, bytes: 2_000, peers: ["tracepipe", "langsmith"] }] : []),
];

const dbPath = join(mkdtempSync(join(tmpdir(), "tp-bench-ingest-db-")), "traces.db");
const server: ChildProcess = spawn(process.execPath, ["--import", "tsx", join(root, "src/cli/run.ts"), "serve", "--port", "0", "--db", dbPath, "--no-rate-limit"], { stdio: ["ignore", "pipe", "inherit"] });
const url = await new Promise<string>((resolve, reject) => {
  server.stdout!.setEncoding("utf8").on("data", (d: string) => {
    const m = /listening on (http:\/\/\S+)/.exec(d);
    if (m) resolve(m[1]!);
  });
  server.on("exit", (code) => reject(new Error(`collector exited ${code}`)));
});

function worker(which: string, n: number, bytes: number): Promise<Record<string, number | string | null>> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ["--import", "tsx", join(root, "benchmarks/ingest-worker.ts"), which, url, String(n), String(bytes)], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    p.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d));
    p.on("exit", (code) => {
      const line = out.trim().split("\n").pop() ?? "";
      try {
        resolve(JSON.parse(line));
      } catch {
        reject(new Error(`${which} worker exited ${code}: ${out}`));
      }
    });
  });
}

console.log(`ingest benchmark: clients -> local collector ${url} (separate process, SQLite file, no rate limits)`);
const store = openStore(dbPath);
for (const { n, bytes, peers } of plan) {
  const results: Record<string, Record<string, number | string | null>> = {};
  for (const which of peers) {
    const r = await worker(which, n, bytes);
    const stored = store.countRuns(String(r.project));
    results[which] = { ...r, stored };
    console.log(
      `  ${which.padEnd(9)} N=${String(n).padStart(7)} ~${bytes / 1000} KB  ${Math.round(Number(r.runsPerSec)).toString().padStart(7)} runs/s` +
        `${r.requests != null ? `  ${(Number(r.requests) / Number(r.seconds)).toFixed(0).padStart(5)} requests/s` : "                  "}` +
        `  peak RSS ${Number(r.peakRssMiB).toFixed(0).padStart(5)} MiB  stored ${stored}/${n}`,
    );
  }
  if (results.tracepipe && results.langsmith) {
    console.log(`  -> ratio tracepipe/langsmith runs/s: ${(Number(results.tracepipe.runsPerSec) / Number(results.langsmith.runsPerSec)).toFixed(2)}x (target >= 2x)`);
  }
}
store.close();
server.kill("SIGTERM");
