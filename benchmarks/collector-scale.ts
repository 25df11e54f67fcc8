/**
 * Collectors side by side: 1, 2 and 3 `tracepipe serve` processes on one
 * PostgreSQL, the load from benchmarks/collector-load.ts in a process of its
 * own sending to them in turn (multipart batches of 10 and 100 runs, ~2 KB
 * each, rate limits off). Reports total runs/s, CPU per 1,000 runs in the
 * collectors (summed, and per collector) and in PostgreSQL, p50/p99 request
 * latency, and the ratio of CPU per run to one collector's: spreading the
 * load must not make a run cost more.
 *
 * Two regimes, reported apart: `max`, each client sending its next request as
 * soon as the last is answered (each cell at its own saturation, so 1 and 3
 * collectors run at different rates and load levels), and each `--rates`
 * figure, the same offered runs/s for 1, 2 and 3 collectors (a paced load: the
 * comparison at equal work, the fair one for "adding collectors must not make
 * a run dearer"). The target line reads the 2-collector cell at 600 requests/s
 * of 10 runs (rate 6000): requests/s achieved and 5xx answers.
 *
 * A second table splits each cell's CPU per 1,000 runs by process: each
 * collector, PostgreSQL's client backends, its background processes (and
 * children that exited), the load generator; their context switches per
 * request (voluntary / involuntary); how many backends served; and the
 * machine's whole busy CPU beside the sum of ours (the gap is other load).
 *
 *   npx tsx benchmarks/collector-scale.ts [--seconds 8] [--clients 8] [--reps 1] [--collectors 1,2,3] [--batches 10,100]
 *     [--rates 3000,6000]     offered loads, runs/s (paced, all collectors together), measured after the `max` one; "" for none
 *     [--no-max]              only the paced loads (no `max` regime)
 *     [--paced-clients 32]    connections the paced loads use (they bound only how many requests wait at once, not the rate)
 *     [--help]                this text
 *     [--warmup S]            seconds of warm-up per collector (default --seconds), not counted
 *     [--pool N]              each collector's --store-connections (default: serve's)
 *     [--idle-collectors K]   K more collectors that get no requests (their fixed cost: timers, polling)
 *     [--busy K]              K more processes that compete for the cores without touching our path (plain contention)
 *     [--waits]               sample pg_stat_activity's wait events of the collectors' backends
 *     [--statements]          pg_stat_statements: statements per request and the costliest ones
 *     [--baseline DIR]        the same cells with another tree's collector (DIR/dist if built, else its sources
 *                             through tsx), interleaved with this tree's, and a table of this tree's CPU per run against it
 *
 * A throwaway PostgreSQL cluster is started (test/helpers/postgres.ts), a new
 * database per measurement. Figures mean something only on an idle machine.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { startPostgres } from "../test/helpers/postgres.js";
import { CLI, TSX } from "../test/helpers/cli.js";
import { startServeChildren, stopServeChildren, type ServeChild } from "../test/helpers/serve-processes.js";
import { machineBusyMs, serverSnapshot, serverUse, useOf, subUse, type ProcUse } from "./proc-cpu.js";
import { startWaitSampler } from "./pg-activity.js";
import { printReport, type Sample, type Cells } from "./collector-scale-report.js";

if (process.argv.includes("--help")) {
  const doc = readFileSync(fileURLToPath(import.meta.url), "utf8");
  console.log(
    doc
      .slice(doc.indexOf("/**") + 3, doc.indexOf("*/"))
      .replace(/^ \* ?/gm, "")
      .trim(),
  );
  process.exit(0);
}

const root = fileURLToPath(new URL("../", import.meta.url));
function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : dflt;
}
const flag = (name: string) => process.argv.includes(`--${name}`);
const SECONDS = Number(arg("seconds", "8"));
const CLIENTS = Number(arg("clients", "8"));
const PACED_CLIENTS = Number(arg("paced-clients", "32"));
const REPS = Number(arg("reps", "1"));
const COLLECTORS = arg("collectors", "1,2,3").split(",").map(Number);
const BATCHES = arg("batches", "10,100").split(",").map(Number);
const WARMUP = Number(arg("warmup", String(SECONDS)));
const IDLE_COLLECTORS = Number(arg("idle-collectors", "0"));
const BUSY = Number(arg("busy", "0"));
const POOL = arg("pool", "");
const WAITS = flag("waits");
const STATEMENTS = flag("statements");
const BASELINE = arg("baseline", "");
/** The load regimes of every cell: as fast as answered, then each offered runs/s. */
const MODES: Mode[] = [...(flag("no-max") ? [] : ["max" as const]), ...arg("rates", "3000,6000").split(",").filter(Boolean).map(Number)];
type Mode = "max" | number;

/** The collectors measured: this tree's, and the baseline's when given. */
const TREES: { label: string; cli: readonly string[] }[] = [{ label: "this tree", cli: CLI }];
if (BASELINE) {
  const compiled = join(BASELINE, "dist/src/cli/run.js");
  TREES.push({
    label: `baseline ${BASELINE}`,
    cli: existsSync(compiled) ? [compiled] : ["--import", TSX, join(BASELINE, "src/cli/run.ts")],
  });
}

interface Load {
  requests: number;
  failures: number;
  failedWith: Record<string, number>;
  runs: number;
  seconds: number;
  latencyMedianMs: number;
  latencyP99Ms: number;
  cpuMs: number;
  cpuUsPerRequest: number;
  voluntarySwitches: number;
  involuntarySwitches: number;
}
/** `rate`: requests/s offered (0: as fast as answered). */
function load(urls: string[], batch: number, seconds = SECONDS, rate = 0): Promise<Load> {
  return new Promise((resolve, reject) => {
    const p = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        join(root, "benchmarks/collector-load.ts"),
        urls.join(","),
        String(seconds),
        String(rate > 0 ? PACED_CLIENTS : CLIENTS),
        String(batch),
        "v4",
        String(rate),
      ],
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

/**
 * A neighbour that competes for the cores without touching our path: a Node.js process that, like
 * a collector, builds and parses ~2 KB JSON documents (allocation, JIT code, a heap of its own) in
 * slices of 2 ms with a 1 ms sleep between, so it wakes and sleeps as often as a loaded server.
 */
function startBusy(): ChildProcess {
  const code = `const doc = { text: "lorem ipsum ".repeat(160), n: [1, 2, 3], nested: { a: "b".repeat(100) } }; const kept = [];
    const slice = () => { const end = performance.now() + 2; while (performance.now() < end) { kept.push(JSON.parse(JSON.stringify(doc))); if (kept.length > 500) kept.length = 0; } setTimeout(slice, 1); };
    slice();`;
  return spawn(process.execPath, ["-e", code], { stdio: "ignore" });
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
/** The benchmark's own connection (its backend is left out of the split). */
async function connect(url: string): Promise<{ client: pg.Client; pid: number }> {
  const client = new pg.Client({ connectionString: url, application_name: "bench" });
  await client.connect();
  return { client, pid: (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid };
}
async function dropDatabase(admin: string, url: string): Promise<void> {
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  try {
    await c.query(`DROP DATABASE IF EXISTS ${url.slice(url.lastIndexOf("/") + 1)} WITH (FORCE)`);
  } finally {
    await c.end();
  }
}
const storedRuns = async (c: pg.Client) => Number((await c.query("SELECT count(*) AS n FROM runs")).rows[0].n);

async function measure(
  cluster: Awaited<ReturnType<typeof startPostgres>>,
  batch: number,
  n: number,
  cli: readonly string[],
): Promise<Map<Mode, Sample>> {
  const url = await cluster.database();
  const args = ["--store", url, "--no-rate-limit", ...(POOL ? ["--store-connections", POOL] : [])];
  const children = await startServeChildren(n, args, {}, cli);
  const idle: ServeChild[] = IDLE_COLLECTORS ? await startServeChildren(IDLE_COLLECTORS, args, {}, cli) : [];
  const busy = Array.from({ length: BUSY }, startBusy);
  const own = await connect(url);
  const urls = children.map((c) => c.url);
  let postmaster = 0;
  /** One regime's measurement on the running collectors. */
  async function sample(mode: Mode): Promise<Sample> {
    const sampler = WAITS || STATEMENTS ? await startWaitSampler(url, { waits: WAITS, statements: STATEMENTS }) : undefined;
    const before = await storedRuns(own.client);
    const c0 = children.map((c) => useOf(c.pid()!));
    const i0 = idle.map((c) => useOf(c.pid()!));
    const s0 = serverSnapshot(postmaster);
    const m0 = machineBusyMs();
    const offered = mode === "max" ? 0 : mode / batch;
    const l = await load(urls, batch, SECONDS, offered);
    const m1 = machineBusyMs();
    const s1 = serverSnapshot(postmaster);
    const cu = children.map((c, i) => subUse(useOf(c.pid()!), c0[i]!));
    const iu = idle.map((c, i) => subUse(useOf(c.pid()!), i0[i]!));
    const observed = await sampler?.stop(l.requests);
    const server = serverUse(s0, s1, new Set([own.pid, ...(sampler?.pids ?? [])]));
    const stored = (await storedRuns(own.client)) - before;
    const per1k = (ms: number) => (ms / l.runs) * 1000;
    const perReq = (u: ProcUse): [number, number] => [u.voluntary / l.requests, u.involuntary / l.requests];
    const sumUse = (us: ProcUse[]) =>
      us.reduce(
        (a, b) => ({ cpuMs: a.cpuMs + b.cpuMs, voluntary: a.voluntary + b.voluntary, involuntary: a.involuntary + b.involuntary }),
        { cpuMs: 0, voluntary: 0, involuntary: 0 },
      );
    return {
      runsps: l.runs / l.seconds,
      requestsps: l.requests / l.seconds,
      offered,
      p50: l.latencyMedianMs,
      p99: l.latencyP99Ms,
      failures: l.failures,
      fivexx: Object.entries(l.failedWith).reduce((n, [status, k]) => n + (Number(status) >= 500 ? k : 0), 0),
      missing: Math.max(0, l.runs - stored),
      collectors: cu.map((u) => per1k(u.cpuMs)),
      idleCollectors: per1k(sumUse(iu).cpuMs),
      backends: per1k(server.backends.cpuMs),
      background: per1k(server.background.cpuMs),
      exited: per1k(server.exitedMs),
      loadgen: per1k(l.cpuMs),
      loadgenPerRequest: l.cpuUsPerRequest,
      machine: per1k(m1 - m0),
      switches: {
        collectors: perReq(sumUse(cu)),
        backends: perReq(server.backends),
        loadgen: [l.voluntarySwitches / l.requests, l.involuntarySwitches / l.requests],
      },
      backendCount: server.backendCount,
      backendsStarted: server.backendsStarted,
      backgroundByTitle: Object.fromEntries([...server.byTitle].map(([t, ms]) => [t, per1k(ms)])),
      waits: observed?.waits,
      statements: observed?.statements,
    };
  }
  try {
    postmaster = await postmasterPid(url);
    // A warm-up (JIT, connections, heap sizes), not counted: as many requests for each collector as one collector gets.
    await load(urls, batch, WARMUP * n).catch(() => undefined);
    const out = new Map<Mode, Sample>();
    for (const mode of MODES) out.set(mode, await sample(mode));
    return out;
  } finally {
    await own.client.end();
    for (const b of busy) b.kill("SIGKILL");
    await stopServeChildren([...children, ...idle]);
    // Databases left behind would keep autovacuum busy (and charged to PostgreSQL) in later cells.
    await dropDatabase(cluster.url, url);
  }
}

const cells: Cells = new Map();
const cluster = await startPostgres(
  STATEMENTS ? { shared_preload_libraries: "pg_stat_statements", "pg_stat_statements.track_planning": "on" } : {},
);
try {
  for (let rep = 0; rep < REPS; rep++) {
    for (const batch of BATCHES) {
      for (const n of COLLECTORS) {
        for (const tree of TREES) {
          for (const [mode, s] of await measure(cluster, batch, n, tree.cli)) {
            const k = `${tree.label}|${mode}|${batch}/${n}`;
            cells.set(k, [...(cells.get(k) ?? []), s]);
          }
        }
      }
    }
  }
} finally {
  await cluster.close();
}

printReport(cells, {
  trees: TREES.map((t) => t.label),
  modes: MODES,
  batches: BATCHES,
  collectors: COLLECTORS,
  heading: `${SECONDS} s x ${REPS}, ${CLIENTS} clients (paced: ${PACED_CLIENTS})${POOL ? `, --store-connections ${POOL}` : ""}${IDLE_COLLECTORS ? `, ${IDLE_COLLECTORS} idle collector(s) beside` : ""}${BUSY ? `, ${BUSY} busy neighbour process(es)` : ""}`,
  idleCollectors: IDLE_COLLECTORS > 0,
  baseline: BASELINE,
});
