/**
 * Delivery throughput: tracepipe's Client vs the `langsmith` package's Client,
 * both into the same local collector (its own process, compiled when dist/ is
 * built, rate limits off so the clients are what is measured). Each
 * measurement runs in a fresh process so its peak RSS is its own; runs are
 * generated lazily, so a client that keeps memory flat in N shows it.
 *
 * Each size is measured REPS times per client, the two clients alternating
 * (tracepipe first in odd repetitions, langsmith first in even ones), so a
 * slow spell of the shared machine does not fall on one client only.
 * Reported per size: runs/s median (min–max) per client, the ratio of the
 * medians with the range of the per-pair ratios, requests/s, peak RSS, and
 * runs stored (a client that drops runs cannot look fast).
 *
 *   npx tsx benchmarks/ingest.ts            # 10k x ~2 KB and 1k x ~50 KB; 3 repetitions
 *   npx tsx benchmarks/ingest.ts --reps 5
 *   npx tsx benchmarks/ingest.ts --full     # adds 100k and 1M x ~2 KB
 *   npx tsx benchmarks/ingest.ts --quick    # 10k only
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { openStore } from "../src/store/index.js";
import { median, spread } from "./stats.js";

const root = fileURLToPath(new URL("../", import.meta.url));
const full = process.argv.includes("--full");
const quick = process.argv.includes("--quick");
const repsAt = process.argv.indexOf("--reps");
const REPS = repsAt > 0 ? Number(process.argv[repsAt + 1]) : 3;
const plan: { n: number; bytes: number }[] = [
  { n: 10_000, bytes: 2_000 },
  ...(quick ? [] : [{ n: 1_000, bytes: 50_000 }]),
  ...(full
    ? [
        { n: 100_000, bytes: 2_000 },
        { n: 1_000_000, bytes: 2_000 },
      ]
    : []),
];
const peers = ["tracepipe", "langsmith"] as const;

const dbPath = join(mkdtempSync(join(tmpdir(), "tp-bench-ingest-db-")), "traces.db");
const builtCli = join(root, "dist/src/cli/run.js");
const cli = existsSync(builtCli) ? [builtCli] : ["--import", "tsx", join(root, "src/cli/run.ts")];
const server: ChildProcess = spawn(process.execPath, [...cli, "serve", "--port", "0", "--db", dbPath, "--no-rate-limit"], {
  stdio: ["ignore", "pipe", "inherit"],
});
const url = await new Promise<string>((resolve, reject) => {
  server.stdout!.setEncoding("utf8").on("data", (d: string) => {
    const m = /listening on (http:\/\/\S+)/.exec(d);
    if (m) resolve(m[1]!);
  });
  server.on("exit", (code) => reject(new Error(`collector exited ${code}`)));
});

function worker(which: string, n: number, bytes: number): Promise<Record<string, number | string | null>> {
  return new Promise((resolve, reject) => {
    const p = spawn(
      process.execPath,
      ["--import", "tsx", join(root, "benchmarks/ingest-worker.ts"), which, url, String(n), String(bytes)],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
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

console.log(
  `ingest benchmark: clients -> local collector ${url} (separate process${cli.length === 1 ? ", compiled" : ", TypeScript via tsx"}, SQLite file, no rate limits); ${REPS} repetitions per size, clients alternating`,
);
const store = await openStore(dbPath);
for (const { n, bytes } of plan) {
  const got: Record<string, { rps: number[]; reqps: number[]; rss: number[]; stored: number[] }> = {};
  for (const p of peers) got[p] = { rps: [], reqps: [], rss: [], stored: [] };
  for (let rep = 0; rep < REPS; rep++) {
    for (const which of rep % 2 === 0 ? peers : [...peers].reverse()) {
      const r = await worker(which, n, bytes);
      const g = got[which]!;
      g.rps.push(Number(r.runsPerSec));
      if (r.requests != null) g.reqps.push(Number(r.requests) / Number(r.seconds));
      g.rss.push(Number(r.peakRssMiB));
      g.stored.push(await store.countRuns(String(r.project)));
    }
  }
  for (const which of peers) {
    const g = got[which]!;
    console.log(
      `  ${which.padEnd(9)} N=${String(n).padStart(7)} ~${bytes / 1000} KB  runs/s ${spread(g.rps, 0)}` +
        (g.reqps.length ? `  requests/s ${median(g.reqps).toFixed(0)}` : "") +
        `  peak RSS ${spread(g.rss, 0, " MiB")}  stored ${Math.min(...g.stored)}/${n} (worst repetition)`,
    );
  }
  const pairRatios = got.tracepipe!.rps.map((r, i) => r / got.langsmith!.rps[i]!);
  console.log(
    `  -> ratio tracepipe/langsmith runs/s: ${(median(got.tracepipe!.rps) / median(got.langsmith!.rps)).toFixed(2)}x (per pair ${Math.min(...pairRatios).toFixed(2)}–${Math.max(...pairRatios).toFixed(2)}x; target >= 2x)`,
  );
}
store.close();
server.kill("SIGTERM");
