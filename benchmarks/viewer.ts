/**
 * The trace viewer at scale (issue 17): server time for the first page of the
 * trace list with 1M runs in the store, against the same page from a store of
 * 10 runs (the ratio says whether the list's cost grows with the store), the
 * same page with a filter, and a 1,000-run trace: server time for its runs and,
 * when Debian chromium is installed, the time to render its tree in the browser.
 * Then the monitoring page and threads (issue 36) over a second store: 1M runs
 * of one project spread over one week, server time for the charts (hourly
 * buckets), each breakdown table and the threads list, against the same
 * requests over a store of that week's first 10k runs.
 *
 *   npx tsx benchmarks/viewer.ts [--runs 1000000] [--rounds 15] [--db /tmp/tp-viewer-bench.db] [--monitor-db /tmp/tp-monitor-bench.db]
 *     [--only monitor] [--store postgres://... | --store pg]
 *   ... --postgres [--pg-url postgres://...]   # also the first page and the 1,000-run trace over PostgreSQL (last section)
 *
 * The big store is built once through the store's real ingest (10-run traces:
 * a chain root and llm children with native messages and usage), which keeps
 * the monitoring rollups as every ingest does, and reused by later runs when
 * its file already holds the requested number of runs. `--only monitor` skips
 * the trace list. `--store` measures the monitoring part on PostgreSQL as
 * well: a given database (filled once, reused when it holds the runs), or
 * `pg` for a throwaway cluster (test/helpers/postgres.ts). Besides the HTTP
 * requests, each chart's store time (monitorSeries once, its share per chart
 * is the same query) and each breakdown are timed in-process.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { SqliteStore } from "../src/store/sqlite/index.js";
import { createCollector } from "../src/server/app.js";
import { bulkTrace } from "../test/viewer/traces.js";
import type { Store } from "../src/store/index.js";

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : dflt;
}

const RUNS = Number(arg("runs", "1000000"));
const ROUNDS = Number(arg("rounds", "15"));
const DB = arg("db", join(tmpdir(), `tp-viewer-bench-${RUNS}.db`));
const ONLY = arg("only", "");
const PG = arg("store", "");
const PER_TRACE = 10;

function stamp(iso: string): string {
  return iso.replace(/[-:]/g, "").replace(".", "");
}

/** One 10-run trace starting at `t` ms: a root and nine llm calls with usage. */
function trace(t: number, k: number): Record<string, unknown>[] {
  const root = randomUUID();
  const iso = (ms: number) => new Date(ms).toISOString().replace("Z", "000Z");
  const rootDotted = `${stamp(iso(t))}${root}`;
  const project = `project-${k % 5}`;
  const out: Record<string, unknown>[] = [
    {
      id: root,
      trace_id: root,
      dotted_order: rootDotted,
      name: `agent-${k % 50}`,
      run_type: "chain",
      start_time: iso(t),
      end_time: iso(t + 900),
      inputs: { question: `question ${k}` },
      outputs: { answer: `answer ${k}` },
      session_name: project,
      ...(k % 97 === 0 ? { error: "Error: tool failed" } : {}),
    },
  ];
  for (let i = 1; i < PER_TRACE; i++) {
    const id = randomUUID();
    const s = t + i * 80;
    out.push({
      id,
      trace_id: root,
      parent_run_id: root,
      dotted_order: `${rootDotted}.${stamp(iso(s))}${id}`,
      name: "ChatOpenAI",
      run_type: "llm",
      start_time: iso(s),
      end_time: iso(s + 70),
      session_name: project,
      inputs: { messages: [{ role: "user", content: [{ type: "text", text: `step ${i} of trace ${k}` }] }] },
      outputs: {
        messages: [
          {
            role: "assistant",
            content: [{ type: "text", text: "ok" }],
            usage_metadata: { input_tokens: 100 + i, output_tokens: 20, total_tokens: 120 + i },
          },
        ],
      },
      extra: { metadata: { trace_provider: "openai", trace_model_name: k % 2 ? "gpt-4o" : "gpt-4o-mini" } },
      events: [{ name: "new_token", time: iso(s + 30) }],
    });
  }
  return out;
}

function fill(store: SqliteStore, runs: number): void {
  const start = Date.parse("2026-01-01T00:00:00Z");
  const traces = Math.ceil(runs / PER_TRACE);
  const t0 = performance.now();
  let batch: Record<string, unknown>[] = [];
  for (let k = 0; k < traces; k++) {
    batch.push(...trace(start + k * 1000, k));
    if (batch.length >= 5000 || k === traces - 1) {
      store.ingestNow({ post: batch });
      batch = [];
      if (k % 10000 === 0 && k > 0)
        process.stderr.write(`  ${((k * PER_TRACE) / 1e6).toFixed(2)}M runs stored (${((performance.now() - t0) / 1000).toFixed(0)} s)\n`);
    }
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
}

async function timeGet(url: string, rounds: number, key?: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < rounds + 2; i++) {
    const t = performance.now();
    const res = await fetch(url, { headers: key ? { "x-api-key": key } : {} });
    if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
    await res.arrayBuffer();
    if (i >= 2) times.push(performance.now() - t); // two warm-up rounds
  }
  return median(times);
}

async function serve(db: Store) {
  const c = await createCollector({ db, rateLimits: false });
  const { url } = await c.listen(0);
  return { url, close: () => c.close() };
}

const f = (ms: number) => `${ms.toFixed(1)} ms`;

/** The SQLite trace-list figures, for the PostgreSQL section's comparison. */
let sqliteFigures: { page: number; trace: number } | undefined;
if (ONLY !== "monitor") sqliteFigures = await traceList();

async function traceList(): Promise<{ page: number; trace: number }> {
  // The big store, built once.
  const big = new SqliteStore(DB);
  if ((await big.countRuns()) < RUNS) {
    process.stderr.write(`building ${DB} with ${RUNS} runs (once)...\n`);
    fill(big, RUNS - (await big.countRuns()));
  }
  const thousand = bulkTrace(1000, { name: "thousand", project: "project-0", startMs: Date.parse("2025-06-01T00:00:00Z") });
  if ((await big.traceRuns(String(thousand[0]!.id))).length === 0) big.ingestNow({ post: thousand });
  const bigTrace = (await big.listTraces({ name: "thousand", start_time_lt: "2025-06-02T00:00:00Z" })).traces[0]!.trace_id;

  // Small stores: 10 runs (one trace), and 500 runs (exactly one full first page of 50 traces,
  // so the page's own work is the same as with the big store and only the store's size differs).
  const smallDir = mkdtempSync(join(tmpdir(), "tp-viewer-small-"));
  const small = new SqliteStore(join(smallDir, "small.db"));
  fill(small, 10);
  const page500 = new SqliteStore(join(smallDir, "page.db"));
  fill(page500, 500);

  const bigSrv = await serve(big);
  const smallSrv = await serve(small);
  const pageSrv = await serve(page500);
  const firstPage = "/api/viewer/traces?limit=50";
  const tBig = await timeGet(bigSrv.url + firstPage, ROUNDS);
  const tSmall = await timeGet(smallSrv.url + firstPage, ROUNDS);
  const tPage = await timeGet(pageSrv.url + firstPage, ROUNDS);
  const tProject = await timeGet(bigSrv.url + firstPage + "&project=project-3", ROUNDS);
  const tModel = await timeGet(bigSrv.url + firstPage + "&model=gpt-4o-mini&errors_only=true", ROUNDS);
  const tTrace = await timeGet(`${bigSrv.url}/api/viewer/traces/${bigTrace}`, ROUNDS);

  let render: number | undefined;
  const chromiumPath = ["/usr/bin/chromium", "/usr/lib/chromium/chromium"].find((p) => existsSync(p));
  if (chromiumPath) {
    const { chromium } = await import("playwright-core");
    const browser = await chromium.launch({ executablePath: chromiumPath, args: process.getuid?.() === 0 ? ["--no-sandbox"] : [] });
    const page = await browser.newPage();
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      await page.goto(`${bigSrv.url}/#/`);
      await page.locator("tr.trace-row").first().waitFor();
      const t = performance.now();
      await page.goto(`${bigSrv.url}/#/trace/${bigTrace}`);
      await page.locator(".tree .node").nth(999).waitFor();
      times.push(performance.now() - t);
    }
    render = median(times);
    await browser.close();
  }

  await bigSrv.close();
  await smallSrv.close();
  await pageSrv.close();
  page500.close();
  big.close();
  small.close();
  rmSync(smallDir, { recursive: true, force: true });

  console.log(`trace list, first page of 50 (server time, median of ${ROUNDS}):`);
  console.log(
    `  ${RUNS.toLocaleString("en-US")} runs: ${f(tBig)} (target < 100 ms)   10 runs: ${f(tSmall)} (ratio ${(tBig / tSmall).toFixed(2)}x)   500 runs, same full page: ${f(tPage)} (ratio ${(tBig / tPage).toFixed(2)}x)`,
  );
  console.log(`  ${RUNS.toLocaleString("en-US")} runs, project filter: ${f(tProject)}; model + errors-only filter: ${f(tModel)}`);
  console.log(
    `1,000-run trace: runs from the server ${f(tTrace)}${render === undefined ? " (no chromium: render not measured)" : `; rendered in chromium (navigation to 1,000 tree rows) ${f(render)}`}`,
  );
  return { page: tBig, trace: tTrace };
}

// ---- monitoring and threads (issue 36) ------------------------------------------------

const MONITOR_DB = arg("monitor-db", join(tmpdir(), `tp-monitor-bench-${RUNS}.db`));
const WEEK_START = Date.parse("2026-03-02T00:00:00Z");
const WEEK_MS = 7 * 86_400_000;
const TURNS = 10;

/** The week's traces: spread evenly, every root a turn of a thread (10 turns each), llm children as above. */
async function fillWeek(store: Store, runs: number): Promise<void> {
  const traces = Math.ceil(runs / PER_TRACE);
  const gap = WEEK_MS / traces;
  const t0 = performance.now();
  let batch: Record<string, unknown>[] = [];
  for (let k = 0; k < traces; k++) {
    const runsOf = trace(WEEK_START + Math.floor(k * gap), k);
    for (const r of runsOf) r.session_name = "monitor";
    runsOf[0]!.extra = { metadata: { thread_id: `thread-${Math.floor(k / TURNS) % Math.ceil(traces / TURNS)}` } };
    batch.push(...runsOf);
    if (batch.length >= 5000 || k === traces - 1) {
      await store.ingest({ post: batch });
      batch = [];
      if (k % 20000 === 0 && k > 0)
        process.stderr.write(`  ${((k * PER_TRACE) / 1e6).toFixed(2)}M runs stored (${((performance.now() - t0) / 1000).toFixed(0)} s)\n`);
    }
  }
  if (runs >= 100_000)
    process.stderr.write(`  ${runs} runs stored in ${((performance.now() - t0) / 1000).toFixed(0)} s, rollups and all\n`);
}

const monitorBig = new SqliteStore(MONITOR_DB);
const monitorHas = await monitorBig.countRuns();
if (monitorHas < RUNS) {
  process.stderr.write(`building ${MONITOR_DB} with ${RUNS} runs over one week (once)...\n`);
  await fillWeek(monitorBig, RUNS - monitorHas);
}
const monitorDir = mkdtempSync(join(tmpdir(), "tp-monitor-small-"));
const monitorSmall = new SqliteStore(join(monitorDir, "small.db"));
await fillWeek(monitorSmall, 10_000);
const mBig = await serve(monitorBig);
const mSmall = await serve(monitorSmall);
const week = `project=monitor&range=custom&from=${new Date(WEEK_START).toISOString()}&to=${new Date(WEEK_START + WEEK_MS).toISOString()}&bucket=hour`;
const monitorRequests: [string, string, number][] = [
  ["charts (all series, one request)", `/api/viewer/monitor?${week}`, 200],
  ["by model", `/api/viewer/monitor/breakdown?${week}&by=model`, 200],
  ["by provider", `/api/viewer/monitor/breakdown?${week}&by=provider`, 200],
  ["by run name", `/api/viewer/monitor/breakdown?${week}&by=name`, 200],
  ["threads list, first page of 50", `/api/viewer/threads?project=monitor&limit=50`, 100],
];
const monitorRounds = Math.max(3, Math.floor(ROUNDS / 3));
console.log(`monitoring, one project, one week, hourly buckets (server time, median of ${monitorRounds}):`);
for (const [label, path, target] of monitorRequests) {
  const tb = await timeGet(mBig.url + path, monitorRounds);
  const ts = await timeGet(mSmall.url + path, monitorRounds);
  console.log(
    `  ${label}: ${RUNS.toLocaleString("en-US")} runs ${f(tb)} (target <= ${target} ms)   10,000 runs ${f(ts)} (ratio ${(tb / ts).toFixed(1)}x)`,
  );
}
await storeTimes("SQLite", monitorBig);
await mBig.close();
await mSmall.close();
await monitorBig.close();
await monitorSmall.close();
rmSync(monitorDir, { recursive: true, force: true });

/** Each chart's and breakdown's time in the store itself (no HTTP), median of the rounds. */
async function storeTimes(label: string, store: Store): Promise<void> {
  const q = { project: "monitor", from_ms: WEEK_START, to_ms: WEEK_START + WEEK_MS, step_ms: 3_600_000 };
  const time = async (fn: () => Promise<unknown>) => {
    const xs: number[] = [];
    for (let i = 0; i < monitorRounds + 2; i++) {
      const t = performance.now();
      await fn();
      if (i >= 2) xs.push(performance.now() - t);
    }
    return median(xs);
  };
  // Every chart of the page is drawn from the one series query: its time is each chart's server time.
  const series = await time(() => store.monitorSeries(q));
  const charts = ["runs and errors", "latency p50/p95/p99 (traces)", "latency p50/p95/p99 (llm)", "time to first token", "tokens", "cost"];
  console.log(
    `${label} store, ${RUNS.toLocaleString("en-US")} runs, one week hourly (store time, median of ${monitorRounds}; target <= 200 ms each):`,
  );
  for (const c of charts) console.log(`  chart ${c}: ${f(series)} (one series query)`);
  for (const by of ["model", "provider", "name"] as const)
    console.log(`  breakdown by ${by}: ${f(await time(() => store.monitorBreakdown(q, by)))}`);
  console.log(
    `  threads list, first page of 50: ${f(await time(() => store.listThreads({ project: "monitor", limit: 50 })))} (target <= 100 ms)`,
  );
}

if (PG) {
  const { PostgresStore } = await import("../src/store/postgres/store.js");
  const cluster = PG === "pg" ? await (await import("../test/helpers/postgres.js")).startPostgres() : undefined;
  const url = cluster ? await cluster.database() : PG;
  const pgStore = await PostgresStore.open(url);
  try {
    const has = await pgStore.countRuns("monitor");
    if (has < RUNS) {
      process.stderr.write(`filling PostgreSQL with ${RUNS - has} runs over one week (once per database)...\n`);
      await fillWeek(pgStore, RUNS - has);
    }
    const srv = await serve(pgStore);
    console.log(`PostgreSQL, monitoring over HTTP (server time, median of ${monitorRounds}):`);
    for (const [label, path, target] of monitorRequests)
      console.log(`  ${label}: ${f(await timeGet(srv.url + path, monitorRounds))} (target <= ${target} ms)`);
    await srv.close();
    await storeTimes("PostgreSQL", pgStore);
  } finally {
    await pgStore.close();
    await cluster?.close();
  }
}

// ---- PostgreSQL: the trace list's first page and a 1,000-run trace (issue 33) ----------
//
// With `--postgres`: the same first page (50 traces) and the same 1,000-run trace, served by a
// collector whose store is PostgreSQL holding RUNS runs (target: the page in <= 50 ms). The
// database is `--pg-url postgres://...` when given (built once there and reused when it already
// holds the runs), else a throwaway cluster (Debian's PostgreSQL 15, test/helpers/postgres.ts)
// filled for this run and removed after.

async function postgresViewer(): Promise<void> {
  const firstPage = "/api/viewer/traces?limit=50";
  const thousand = bulkTrace(1000, { name: "thousand", project: "project-0", startMs: Date.parse("2025-06-01T00:00:00Z") });
  const sqlite = (ms: number | undefined) => (ms === undefined ? "not measured (--only monitor)" : f(ms));
  const { openStore } = await import("../src/store/open.js");
  const { startPostgres } = await import("../test/helpers/postgres.js");
  const given = process.argv.includes("--pg-url") ? arg("pg-url", "") : undefined;
  const cluster = given ? undefined : await startPostgres();
  try {
    const url = given ?? (await cluster!.database());
    const store = await openStore(url);
    const has = await store.countRuns();
    if (has < RUNS) {
      process.stderr.write(`filling PostgreSQL with ${RUNS - has} runs...\n`);
      const start = Date.parse("2026-01-01T00:00:00Z");
      const t0 = performance.now();
      let batch: Record<string, unknown>[] = [];
      for (let k = Math.floor(has / PER_TRACE); k < Math.ceil(RUNS / PER_TRACE); k++) {
        batch.push(...trace(start + k * 1000, k));
        if (batch.length >= 5000) {
          await store.ingest({ post: batch });
          batch = [];
          if (k % 10000 === 0 && k > 0)
            process.stderr.write(
              `  ${((k * PER_TRACE) / 1e6).toFixed(2)}M runs stored (${((performance.now() - t0) / 1000).toFixed(0)} s)\n`,
            );
        }
      }
      if (batch.length) await store.ingest({ post: batch });
    }
    if ((await store.traceRuns(String(thousand[0]!.id))).length === 0) await store.ingest({ post: thousand });
    const stored = await store.countRuns();
    await store.close();

    const c = await createCollector({ db: url, rateLimits: false });
    const { url: base } = await c.listen(0);
    try {
      const tPgPage = await timeGet(base + firstPage, ROUNDS);
      const tPgTrace = await timeGet(`${base}/api/viewer/traces/${String(thousand[0]!.id)}`, ROUNDS);
      console.log(`PostgreSQL, ${stored.toLocaleString("en-US")} runs stored (server time, median of ${ROUNDS}):`);
      console.log(`  trace list, first page of 50: ${f(tPgPage)} (target <= 50 ms; SQLite above: ${sqlite(sqliteFigures?.page)})`);
      console.log(`  1,000-run trace, its runs: ${f(tPgTrace)} (SQLite above: ${sqlite(sqliteFigures?.trace)})`);
    } finally {
      await c.close();
    }
  } finally {
    await cluster?.close();
  }
}

if (process.argv.includes("--postgres")) await postgresViewer();
