/**
 * The collector's ingest with each store behind it: SQLite (one file, WAL) and
 * PostgreSQL (a throwaway local cluster, fsync off as the tests run it; a real
 * deployment's disk settings differ), one collector in this process, rate
 * limits off, the load from benchmarks/collector-load.ts in its own process
 * (fresh run ids, ~2 KB runs).
 *
 * Measured per store: runs/s at batch 100 and requests/s at batch 10, CPU per
 * 1,000 runs in the collector and (PostgreSQL) in the database's processes.
 * Each figure REPS times, stores and batch sizes alternating, each repetition
 * on a fresh file or database; reported as median (min–max), with the ratio
 * PostgreSQL / SQLite.
 *
 *   npx tsx benchmarks/store.ts [--seconds 8] [--clients 4] [--reps 3] [--pg postgres://...]
 *
 * Without --pg, a cluster of Debian's PostgreSQL 15 is started for the run and
 * removed after (test/helpers/postgres.ts); with it, a database is created there.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { loadBuilt } from "./load.js";
import { cpuMs, median, spread } from "./stats.js";
import { startPostgres, type RunningPostgres } from "../test/helpers/postgres.js";

const root = fileURLToPath(new URL("../", import.meta.url));
// The collector and the stores from one build: dist/ when it has the PostgreSQL store, else the sources.
const built = existsSync(fileURLToPath(new URL("../dist/src/store/postgres/store.js", import.meta.url)));
if (!built)
  console.log("(dist/ has no PostgreSQL store: measuring the TypeScript sources through tsx; run `npm run build` for compiled numbers)");
const { createCollector } = built
  ? await loadBuilt<typeof import("../src/server/app.js")>("src/server/app.js")
  : await import("../src/server/app.js");
const { openStore } = built
  ? await loadBuilt<typeof import("../src/store/open.js")>("src/store/open.js")
  : await import("../src/store/open.js");

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : dflt;
}
const SECONDS = Number(arg("seconds", "8"));
const CLIENTS = Number(arg("clients", "4"));
const REPS = Number(arg("reps", "3"));
const PG_URL = arg("pg", "");
const BATCHES = [100, 10];
type Kind = "sqlite" | "postgres";

interface Load {
  requests: number;
  failures: number;
  runs: number;
  seconds: number;
  /** The load generator's own CPU per request, µs. */
  cpuUsPerRequest: number;
}
function load(url: string, batch: number): Promise<Load> {
  return new Promise((resolve, reject) => {
    const p = spawn(
      process.execPath,
      ["--import", "tsx", join(root, "benchmarks/collector-load.ts"), url, String(SECONDS), String(CLIENTS), String(batch)],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    let out = "";
    p.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d));
    p.on("exit", (code) => {
      try {
        resolve(JSON.parse(out.trim().split("\n").pop() ?? ""));
      } catch {
        reject(new Error(`load generator exited ${code}: ${out}`));
      }
    });
  });
}

/** CPU time (ms) of the PostgreSQL server: the postmaster and every process it runs now (the collector's connections among them). */
function serverCpuMs(postmasterPid: number): number {
  const tick = 100; // USER_HZ on Linux
  const one = (pid: number) => {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
      return ((Number(fields[11]) + Number(fields[12])) * 1000) / tick;
    } catch {
      return 0; // exited meanwhile
    }
  };
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${postmasterPid}/task/${postmasterPid}/children`, "utf8")
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    // not Linux, or not ours to read
  }
  return one(postmasterPid) + children.reduce((n, p) => n + one(p), 0);
}

let cluster: RunningPostgres | undefined;
let dbCounter = 0;
async function postgresDatabase(): Promise<string> {
  if (!PG_URL) return (cluster ??= await startPostgres()).database();
  const name = `tracepipe_bench_${process.pid}_${++dbCounter}`;
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
  const u = new URL(PG_URL);
  u.pathname = `/${name}`;
  return u.toString();
}

async function postmasterPid(url: string): Promise<number | undefined> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const backend = (await c.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
    const ppid = Number(/PPid:\s+(\d+)/.exec(readFileSync(`/proc/${backend}/status`, "utf8"))?.[1]);
    return ppid > 0 ? ppid : undefined;
  } catch {
    return undefined; // a server on another machine: its CPU is not ours to see
  } finally {
    await c.end();
  }
}

interface Figures {
  runsps: number[];
  rps: number[];
  collectorCpuPer1k: number[];
  serverCpuPer1k: number[];
  loadgenUsPerRequest: number[];
  missing: number;
  failures: number;
}
const results = new Map<string, Figures>();
const key = (kind: Kind, batch: number) => `${kind}/${batch}`;
for (const kind of ["sqlite", "postgres"] as const)
  for (const b of BATCHES)
    results.set(key(kind, b), {
      runsps: [],
      rps: [],
      collectorCpuPer1k: [],
      serverCpuPer1k: [],
      loadgenUsPerRequest: [],
      missing: 0,
      failures: 0,
    });

console.log(
  `store benchmark: load generator (own process, ${CLIENTS} connections, fresh ids, ~2 KB runs) -> one collector in this process, no rate limits; ${SECONDS} s per measurement, ${REPS} repetitions, stores and batch sizes alternating`,
);
try {
  for (let rep = 0; rep < REPS; rep++) {
    const kinds: Kind[] = rep % 2 === 0 ? ["sqlite", "postgres"] : ["postgres", "sqlite"];
    for (const kind of kinds) {
      for (const batch of rep % 2 === 0 ? BATCHES : [...BATCHES].reverse()) {
        const dir = mkdtempSync(join(tmpdir(), "tp-bench-store-"));
        const target = kind === "sqlite" ? join(dir, "traces.db") : await postgresDatabase();
        const pmPid = kind === "postgres" ? await postmasterPid(target) : undefined;
        const store = await openStore(target);
        const collector = await createCollector({ db: store, rateLimits: false });
        const { url } = await collector.listen(0);
        const c0 = cpuMs();
        const s0 = pmPid ? serverCpuMs(pmPid) : 0;
        const r = await load(url, batch);
        const cpu = cpuMs() - c0;
        const serverCpu = pmPid ? serverCpuMs(pmPid) - s0 : NaN;
        await collector.close();
        const stored = await store.countRuns("bench");
        await store.close();
        rmSync(dir, { recursive: true, force: true });
        const g = results.get(key(kind, batch))!;
        g.runsps.push(r.runs / r.seconds);
        g.rps.push(r.requests / r.seconds);
        g.collectorCpuPer1k.push((cpu * 1000) / Math.max(1, r.runs));
        if (pmPid) g.serverCpuPer1k.push((serverCpu * 1000) / Math.max(1, r.runs));
        g.loadgenUsPerRequest.push(r.cpuUsPerRequest);
        g.missing += r.runs - stored;
        g.failures += r.failures;
      }
    }
  }
} finally {
  await cluster?.close();
}

const ratio = (a: number[], b: number[]) => (median(a) / median(b)).toFixed(2);
for (const batch of BATCHES) {
  const s = results.get(key("sqlite", batch))!;
  const p = results.get(key("postgres", batch))!;
  const [figure, label] = batch === 100 ? (["runsps", "runs/s"] as const) : (["rps", "requests/s"] as const);
  console.log(`  batch ${batch}: ${label}`);
  console.log(`    SQLite      ${spread(s[figure], 0)}`);
  console.log(`    PostgreSQL  ${spread(p[figure], 0)}   -> ${ratio(p[figure], s[figure])}x SQLite (target >= 0.8x)`);
  console.log(
    `    CPU per 1,000 runs: collector SQLite ${spread(s.collectorCpuPer1k, 0, " ms")}, PostgreSQL ${spread(p.collectorCpuPer1k, 0, " ms")}; PostgreSQL server ${p.serverCpuPer1k.length ? spread(p.serverCpuPer1k, 0, " ms") : "not measured (remote server)"}`,
  );
  console.log(
    `    load generator's own CPU per request (not in the figures above): SQLite ${spread(s.loadgenUsPerRequest, 0, " µs")}, PostgreSQL ${spread(p.loadgenUsPerRequest, 0, " µs")}`,
  );
  console.log(`    accepted runs not stored: SQLite ${s.missing}, PostgreSQL ${p.missing}; failed requests: ${s.failures}, ${p.failures}`);
}
