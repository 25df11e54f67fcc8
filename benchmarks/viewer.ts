/**
 * The trace viewer at scale (issue 17): server time for the first page of the
 * trace list with 1M runs in the store, against the same page from a store of
 * 10 runs (the ratio says whether the list's cost grows with the store), the
 * same page with a filter, and a 1,000-run trace: server time for its runs and,
 * when Debian chromium is installed, the time to render its tree in the browser.
 *
 *   npx tsx benchmarks/viewer.ts [--runs 1000000] [--rounds 15] [--db /tmp/tp-viewer-bench.db]
 *
 * The big store is built once through the store's real ingest (10-run traces:
 * a chain root and llm children with native messages and usage) and reused by
 * later runs when its file already holds the requested number of runs.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { SqliteStore } from "../src/store/sqlite/index.js";
import { createCollector } from "../src/server/app.js";
import { bulkTrace } from "../test/viewer/traces.js";

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : dflt;
}

const RUNS = Number(arg("runs", "1000000"));
const ROUNDS = Number(arg("rounds", "15"));
const DB = arg("db", join(tmpdir(), `tp-viewer-bench-${RUNS}.db`));
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
    { id: root, trace_id: root, dotted_order: rootDotted, name: `agent-${k % 50}`, run_type: "chain", start_time: iso(t), end_time: iso(t + 900), inputs: { question: `question ${k}` }, outputs: { answer: `answer ${k}` }, session_name: project, ...(k % 97 === 0 ? { error: "Error: tool failed" } : {}) },
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
      outputs: { messages: [{ role: "assistant", content: [{ type: "text", text: "ok" }], usage_metadata: { input_tokens: 100 + i, output_tokens: 20, total_tokens: 120 + i } }] },
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
      if (k % 10000 === 0 && k > 0) process.stderr.write(`  ${((k * PER_TRACE) / 1e6).toFixed(2)}M runs stored (${((performance.now() - t0) / 1000).toFixed(0)} s)\n`);
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

async function serve(db: SqliteStore) {
  const c = await createCollector({ db, rateLimits: false });
  const { url } = await c.listen(0);
  return { url, close: () => c.close() };
}

// The big store, built once.
const big = new SqliteStore(DB);
if (await big.countRuns() < RUNS) {
  process.stderr.write(`building ${DB} with ${RUNS} runs (once)...\n`);
  fill(big, RUNS - await big.countRuns());
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

const f = (ms: number) => `${ms.toFixed(1)} ms`;
console.log(`trace list, first page of 50 (server time, median of ${ROUNDS}):`);
console.log(`  ${RUNS.toLocaleString("en-US")} runs: ${f(tBig)} (target < 100 ms)   10 runs: ${f(tSmall)} (ratio ${(tBig / tSmall).toFixed(2)}x)   500 runs, same full page: ${f(tPage)} (ratio ${(tBig / tPage).toFixed(2)}x)`);
console.log(`  ${RUNS.toLocaleString("en-US")} runs, project filter: ${f(tProject)}; model + errors-only filter: ${f(tModel)}`);
console.log(`1,000-run trace: runs from the server ${f(tTrace)}${render === undefined ? " (no chromium: render not measured)" : `; rendered in chromium (navigation to 1,000 tree rows) ${f(render)}`}`);
