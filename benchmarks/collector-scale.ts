/**
 * Collectors side by side: 1, 2 and 3 `tracepipe serve` processes on one
 * PostgreSQL, the load from benchmarks/collector-load.ts in a process of its
 * own sending to them in turn (multipart batches of 10 and 100 runs, ~2 KB
 * each, rate limits off). Reports total runs/s, CPU per 1,000 runs in the
 * collectors (summed, and per collector) and in PostgreSQL (the postmaster and
 * its backends, from /proc), p50/p99 request latency, and the ratio of CPU per
 * run to one collector's: spreading the load must not make a run cost more.
 *
 *   npx tsx benchmarks/collector-scale.ts [--seconds 8] [--clients 8] [--reps 1] [--collectors 1,2,3] [--batches 10,100]
 *
 * A throwaway PostgreSQL cluster is started (test/helpers/postgres.ts), a new
 * database per measurement. Figures mean something only on an idle machine.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { startPostgres } from "../test/helpers/postgres.js";
import { startServeChildren, stopServeChildren } from "../test/helpers/serve-processes.js";
import { median } from "./stats.js";

const root = fileURLToPath(new URL("../", import.meta.url));
function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : dflt;
}
const SECONDS = Number(arg("seconds", "8"));
const CLIENTS = Number(arg("clients", "8"));
const REPS = Number(arg("reps", "1"));
const COLLECTORS = arg("collectors", "1,2,3").split(",").map(Number);
const BATCHES = arg("batches", "10,100").split(",").map(Number);

interface Load {
  requests: number;
  failures: number;
  runs: number;
  seconds: number;
  latencyMedianMs: number;
  latencyP99Ms: number;
}
function load(urls: string[], batch: number): Promise<Load> {
  return new Promise((resolve, reject) => {
    const p = spawn(
      process.execPath,
      ["--import", "tsx", join(root, "benchmarks/collector-load.ts"), urls.join(","), String(SECONDS), String(CLIENTS), String(batch)],
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

const TICK_MS = 10; // USER_HZ 100 on Linux
/** User plus system CPU of one process, ms (0 once it has exited). */
function cpuOf(pid: number): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(f[11]) + Number(f[12])) * TICK_MS;
  } catch {
    return 0;
  }
}
/** The PostgreSQL server's CPU, ms: the postmaster and every process it runs now. */
function serverCpuMs(postmaster: number): number {
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${postmaster}/task/${postmaster}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    // not Linux
  }
  return cpuOf(postmaster) + children.reduce((n, p) => n + cpuOf(p), 0);
}
async function postmasterPid(url: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const backend = (await c.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
    return Number(/PPid:\s+(\d+)/.exec(readFileSync(`/proc/${backend}/status`, "utf8"))?.[1]);
  } finally {
    await c.end();
  }
}
async function storedRuns(url: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return Number((await c.query("SELECT count(*) AS n FROM runs")).rows[0].n);
  } finally {
    await c.end();
  }
}

interface Row {
  runsps: number[];
  collectorCpuPer1k: number[];
  perCollectorCpuPer1k: number[];
  serverCpuPer1k: number[];
  p50: number[];
  p99: number[];
  failures: number;
  missing: number;
}
const rows = new Map<string, Row>();
const cluster = await startPostgres();
try {
  for (let rep = 0; rep < REPS; rep++) {
    for (const batch of BATCHES) {
      for (const n of COLLECTORS) {
        const url = await cluster.database();
        const children = await startServeChildren(n, ["--store", url, "--no-rate-limit"]);
        try {
          const postmaster = await postmasterPid(url);
          // A short warm-up (JIT, connections), not counted.
          await load(
            children.map((c) => c.url),
            batch,
          ).catch(() => undefined);
          const before = await storedRuns(url);
          const cpu0 = children.map((c) => cpuOf(c.pid()!));
          const server0 = serverCpuMs(postmaster);
          const l = await load(
            children.map((c) => c.url),
            batch,
          );
          const cpu = children.map((c, i) => cpuOf(c.pid()!) - cpu0[i]!);
          const server = serverCpuMs(postmaster) - server0;
          const stored = (await storedRuns(url)) - before;
          const k = `${batch}/${n}`;
          const r = rows.get(k) ?? {
            runsps: [],
            collectorCpuPer1k: [],
            perCollectorCpuPer1k: [],
            serverCpuPer1k: [],
            p50: [],
            p99: [],
            failures: 0,
            missing: 0,
          };
          const total = cpu.reduce((a, b) => a + b, 0);
          r.runsps.push(l.runs / l.seconds);
          r.collectorCpuPer1k.push((total / l.runs) * 1000);
          r.perCollectorCpuPer1k.push((total / n / l.runs) * 1000);
          r.serverCpuPer1k.push((server / l.runs) * 1000);
          r.p50.push(l.latencyMedianMs);
          r.p99.push(l.latencyP99Ms);
          r.failures += l.failures;
          r.missing += Math.max(0, l.runs - stored);
          rows.set(k, r);
        } finally {
          await stopServeChildren(children);
        }
      }
    }
  }
} finally {
  await cluster.close();
}

const f = (v: number, d = 0) => v.toFixed(d);
console.log(`collectors side by side on one PostgreSQL: ${SECONDS} s x ${REPS}, ${CLIENTS} clients, medians`);
console.log(
  "batch collectors  runs/s  collector-CPU-ms/1k-runs (per collector)  postgres-CPU-ms/1k  p50-ms  p99-ms  CPU/run-vs-1  failures  missing",
);
for (const batch of BATCHES) {
  const one = rows.get(`${batch}/${COLLECTORS[0]}`);
  const perRun = (r: Row) => median(r.collectorCpuPer1k) + median(r.serverCpuPer1k);
  for (const n of COLLECTORS) {
    const r = rows.get(`${batch}/${n}`)!;
    console.log(
      [
        batch,
        n,
        f(median(r.runsps)),
        `${f(median(r.collectorCpuPer1k))} (${f(median(r.perCollectorCpuPer1k))})`,
        f(median(r.serverCpuPer1k)),
        f(median(r.p50), 1),
        f(median(r.p99), 1),
        one ? `${(perRun(r) / perRun(one)).toFixed(2)}x` : "-",
        r.failures,
        r.missing,
      ].join("  "),
    );
  }
}
