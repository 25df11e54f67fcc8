/**
 * Collectors side by side: 1, 2 and 3 `tracepipe serve` processes on one
 * PostgreSQL, the load from benchmarks/collector-load.ts in a process of its
 * own sending to them in turn (multipart batches of 10 and 100 runs, ~2 KB
 * each, rate limits off). Reports total runs/s, CPU per 1,000 runs in the
 * collectors (summed, and per collector) and in PostgreSQL, p50/p99 request
 * latency, and the ratio of CPU per run to one collector's: spreading the
 * load must not make a run cost more.
 *
 * A second table splits each cell's CPU per 1,000 runs by process: each
 * collector, PostgreSQL's client backends, its background processes (and
 * children that exited), the load generator; their context switches per
 * request (voluntary / involuntary); how many backends served; and the
 * machine's whole busy CPU beside the sum of ours (the gap is other load).
 *
 *   npx tsx benchmarks/collector-scale.ts [--seconds 8] [--clients 8] [--reps 1] [--collectors 1,2,3] [--batches 10,100]
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
import { median, spread } from "./stats.js";
import { startWaitSampler, type WaitCounts } from "./pg-activity.js";

const root = fileURLToPath(new URL("../", import.meta.url));
function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : dflt;
}
const flag = (name: string) => process.argv.includes(`--${name}`);
const SECONDS = Number(arg("seconds", "8"));
const CLIENTS = Number(arg("clients", "8"));
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
  runs: number;
  seconds: number;
  latencyMedianMs: number;
  latencyP99Ms: number;
  cpuMs: number;
  cpuUsPerRequest: number;
  voluntarySwitches: number;
  involuntarySwitches: number;
}
function load(urls: string[], batch: number, seconds = SECONDS): Promise<Load> {
  return new Promise((resolve, reject) => {
    const p = spawn(
      process.execPath,
      ["--import", "tsx", join(root, "benchmarks/collector-load.ts"), urls.join(","), String(seconds), String(CLIENTS), String(batch)],
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

/** One measurement of one cell: what each part used per 1,000 runs (CPU ms) and per request (context switches). */
interface Sample {
  runsps: number;
  p50: number;
  p99: number;
  failures: number;
  missing: number;
  collectors: number[];
  idleCollectors: number;
  backends: number;
  background: number;
  exited: number;
  loadgen: number;
  /** The load generator's CPU per request, µs. */
  loadgenPerRequest: number;
  machine: number;
  /** Context switches per request: collectors (summed), backends, load generator; voluntary and involuntary. */
  switches: { collectors: [number, number]; backends: [number, number]; loadgen: [number, number] };
  backendCount: number;
  backendsStarted: number;
  /** PostgreSQL's background processes, CPU ms per 1,000 runs by process title. */
  backgroundByTitle: Record<string, number>;
  waits?: WaitCounts;
  statements?: string;
}

async function measure(
  cluster: Awaited<ReturnType<typeof startPostgres>>,
  batch: number,
  n: number,
  cli: readonly string[],
): Promise<Sample> {
  const url = await cluster.database();
  const args = ["--store", url, "--no-rate-limit", ...(POOL ? ["--store-connections", POOL] : [])];
  const children = await startServeChildren(n, args, {}, cli);
  const idle: ServeChild[] = IDLE_COLLECTORS ? await startServeChildren(IDLE_COLLECTORS, args, {}, cli) : [];
  const busy = Array.from({ length: BUSY }, startBusy);
  const own = await connect(url);
  try {
    const postmaster = await postmasterPid(url);
    const urls = children.map((c) => c.url);
    // A warm-up (JIT, connections, heap sizes), not counted: as many requests for each collector as one collector gets.
    await load(urls, batch, WARMUP * n).catch(() => undefined);
    const sampler = WAITS || STATEMENTS ? await startWaitSampler(url, { waits: WAITS, statements: STATEMENTS }) : undefined;
    const before = await storedRuns(own.client);
    const c0 = children.map((c) => useOf(c.pid()!));
    const i0 = idle.map((c) => useOf(c.pid()!));
    const s0 = serverSnapshot(postmaster);
    const m0 = machineBusyMs();
    const l = await load(urls, batch);
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
      p50: l.latencyMedianMs,
      p99: l.latencyP99Ms,
      failures: l.failures,
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
  } finally {
    await own.client.end();
    for (const b of busy) b.kill("SIGKILL");
    await stopServeChildren([...children, ...idle]);
    // Databases left behind would keep autovacuum busy (and charged to PostgreSQL) in later cells.
    await dropDatabase(cluster.url, url);
  }
}

const samples = new Map<string, Sample[]>();
const cluster = await startPostgres(
  STATEMENTS ? { shared_preload_libraries: "pg_stat_statements", "pg_stat_statements.track_planning": "on" } : {},
);
try {
  for (let rep = 0; rep < REPS; rep++) {
    for (const batch of BATCHES) {
      for (const n of COLLECTORS) {
        for (const tree of TREES) {
          const s = await measure(cluster, batch, n, tree.cli);
          const k = `${tree.label}|${batch}/${n}`;
          samples.set(k, [...(samples.get(k) ?? []), s]);
        }
      }
    }
  }
} finally {
  await cluster.close();
}

const f = (v: number, d = 0) => v.toFixed(d);
const med = (ss: Sample[], pick: (s: Sample) => number, d = 0) => f(median(ss.map(pick)), d);
const collectorsSum = (s: Sample) => s.collectors.reduce((a, b) => a + b, 0);
/** What the target counts: the collectors and PostgreSQL, per run. */
const perRun = (s: Sample) => collectorsSum(s) + s.backends + s.background + s.exited;
const extras = `${POOL ? `, --store-connections ${POOL}` : ""}${IDLE_COLLECTORS ? `, ${IDLE_COLLECTORS} idle collector(s) beside` : ""}${BUSY ? `, ${BUSY} busy neighbour process(es)` : ""}`;
function report(tree: string): void {
  console.log(`collectors side by side on one PostgreSQL (${tree}): ${SECONDS} s x ${REPS}, ${CLIENTS} clients${extras}, medians (range)`);
  console.log(
    "batch collectors  runs/s  collector-CPU-ms/1k-runs (per collector)  postgres-CPU-ms/1k  p50-ms  p99-ms  CPU/run-vs-1  failures  missing",
  );
  for (const batch of BATCHES) {
    const one = samples.get(`${tree}|${batch}/${COLLECTORS[0]}`);
    const onePerRun = one ? median(one.map(perRun)) : NaN;
    for (const n of COLLECTORS) {
      const ss = samples.get(`${tree}|${batch}/${n}`)!;
      console.log(
        [
          batch,
          n,
          spread(
            ss.map((s) => s.runsps),
            0,
          ),
          `${med(ss, collectorsSum)} (${med(ss, (s) => collectorsSum(s) / n)})`,
          med(ss, (s) => s.backends + s.background + s.exited),
          med(ss, (s) => s.p50, 1),
          med(ss, (s) => s.p99, 1),
          one
            ? spread(
                ss.map((s) => perRun(s) / onePerRun),
                2,
                "x",
              )
            : "-",
          ss.reduce((a, s) => a + s.failures, 0),
          ss.reduce((a, s) => a + s.missing, 0),
        ].join("  "),
      );
    }
  }

  console.log("\nCPU ms per 1,000 runs by process (medians); context switches per request, voluntary/involuntary");
  console.log(
    "batch collectors  each-collector  pg-backends (n, +started)  pg-background  pg-exited  load-gen  ours-total  machine  | switches: collectors  pg-backends  load-gen" +
      (IDLE_COLLECTORS ? "  | idle collectors" : ""),
  );
  for (const batch of BATCHES) {
    for (const n of COLLECTORS) {
      const ss = samples.get(`${tree}|${batch}/${n}`)!;
      const sw = (pick: (s: Sample) => [number, number]) => `${med(ss, (s) => pick(s)[0], 1)}/${med(ss, (s) => pick(s)[1], 1)}`;
      console.log(
        [
          batch,
          n,
          Array.from({ length: n }, (_, i) => med(ss, (s) => s.collectors[i]!)).join("+"),
          `${med(ss, (s) => s.backends)} (${med(ss, (s) => s.backendCount)}, +${med(ss, (s) => s.backendsStarted)})`,
          med(ss, (s) => s.background),
          med(ss, (s) => s.exited),
          med(ss, (s) => s.loadgen),
          med(ss, (s) => perRun(s) + s.loadgen),
          med(ss, (s) => s.machine),
          "|",
          sw((s) => s.switches.collectors),
          sw((s) => s.switches.backends),
          sw((s) => s.switches.loadgen),
          ...(IDLE_COLLECTORS ? ["|", med(ss, (s) => s.idleCollectors, 1)] : []),
        ].join("  "),
      );
    }
  }

  console.log(
    "\nThe load generator's own CPU per request, µs (medians; counted in ours-total above, not in the collectors' or PostgreSQL's):",
  );
  for (const batch of BATCHES) {
    console.log(
      `  batch ${batch}: ${COLLECTORS.map((n) => `${n} collector(s) ${med(samples.get(`${tree}|${batch}/${n}`)!, (s) => s.loadgenPerRequest)}`).join(", ")}`,
    );
  }

  console.log("\nPostgreSQL's background processes, CPU ms per 1,000 runs (last repetition):");
  for (const batch of BATCHES) {
    for (const n of COLLECTORS) {
      const last = samples.get(`${tree}|${batch}/${n}`)!.at(-1)!;
      const top = Object.entries(last.backgroundByTitle)
        .filter(([, ms]) => ms >= 1)
        .sort((a, b) => b[1] - a[1])
        .map(([t, ms]) => `${t} ${f(ms)}`);
      console.log(`  batch ${batch}, ${n} collector(s): ${top.join(", ") || "-"}; exited children ${f(last.exited)}`);
    }
  }
}
for (const tree of TREES) report(tree.label);

if (TREES.length > 1) {
  const [ours, base] = [TREES[0]!.label, TREES[1]!.label];
  console.log(`\nThis tree against the baseline (${BASELINE}), CPU ms per 1,000 runs, medians: this / baseline (ratio)`);
  console.log("batch collectors  collectors  pg-backends  ours-total  machine  | CPU/run-vs-1: this / baseline");
  for (const batch of BATCHES) {
    const onePerRun = (t: string) => median(samples.get(`${t}|${batch}/${COLLECTORS[0]}`)!.map(perRun));
    for (const n of COLLECTORS) {
      const [a, b] = [samples.get(`${ours}|${batch}/${n}`)!, samples.get(`${base}|${batch}/${n}`)!];
      const pair = (pick: (s: Sample) => number) => {
        const [x, y] = [median(a.map(pick)), median(b.map(pick))];
        return `${f(x)} / ${f(y)} (${f(x / y, 2)}x)`;
      };
      console.log(
        [
          batch,
          n,
          pair(collectorsSum),
          pair((s) => s.backends),
          pair((s) => perRun(s) + s.loadgen),
          pair((s) => s.machine),
          "|",
          `${f(median(a.map(perRun)) / onePerRun(ours), 2)}x / ${f(median(b.map(perRun)) / onePerRun(base), 2)}x`,
        ].join("  "),
      );
    }
  }
}

if (WAITS || STATEMENTS) {
  for (const batch of BATCHES) {
    for (const n of COLLECTORS) {
      const last = samples.get(`${TREES[0]!.label}|${batch}/${n}`)!.at(-1)!;
      console.log(`\nbatch ${batch}, ${n} collector(s), last repetition:`);
      if (last.waits) {
        const total = Object.values(last.waits).reduce((a, b) => a + b, 0) || 1;
        const top = Object.entries(last.waits)
          .sort((a, b) => b[1] - a[1])
          .slice(0, 8)
          .map(([k, v]) => `${k} ${f((v / total) * 100)}%`);
        console.log(`  collectors' backends, sampled: ${top.join(", ")}`);
      }
      if (last.statements) console.log(last.statements);
    }
  }
}
