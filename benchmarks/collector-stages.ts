/**
 * The collector's ingest stages without the network: the multipart bodies
 * benchmarks/collector-load.ts sends (BATCH runs of ~2 KB, fresh ids) go
 * through the route's own steps in one process (busboy parsing, the depth
 * bound, the store's check, the SQLite store's one-transaction write) and
 * each step's CPU is measured around it. No sockets, no other requests, no
 * event loop shared with a load generator: the steady cost of each stage, to
 * set beside benchmarks/collector.ts's sampled split of a serving process.
 *
 * Each tree (this one, and `--baseline DIR`'s unchanged sources) is measured
 * in a child process of its own, ROUNDS times, alternating, each on a fresh
 * database after a warm-up; reported per stage: median (min–max) µs per
 * request, and this tree's total against the baseline's.
 *
 *   npx tsx benchmarks/collector-stages.ts [--requests 1500] [--rounds 3] [--batch 10] [--ids v4|v7] [--baseline DIR]
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Readable } from "node:stream";
import { fileURLToPath, pathToFileURL } from "node:url";
import { runBodies } from "./run-bodies.js";
import type { RawText } from "../src/store/validate.js";
import { spread, median } from "./stats.js";

const STAGES = ["multipart parsing", "depth bound", "checks", "store write"] as const;
type Times = Record<(typeof STAGES)[number], number>;

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : dflt;
}

/** In a child: measure one tree and print its µs per request per stage as one JSON line. */
async function measure(root: string, requests: number, batch: number, ids: string): Promise<Times> {
  const imp = <T>(p: string) => import(pathToFileURL(join(root, p)).href) as Promise<T>;
  const { openStore } = await imp<typeof import("../src/store/open.js")>("src/store/open.ts");
  const { parseMultipart } = await imp<typeof import("../src/server/multipart.js")>("src/server/multipart.ts");
  const { batchCheck } = await imp<typeof import("../src/server/validation.js")>("src/server/validation.ts");
  const { IssueList } = await imp<typeof import("../src/server/issues.js")>("src/server/issues.ts");
  const { Slicer } = await imp<typeof import("../src/internal/slicer.js")>("src/internal/slicer.ts");
  const { tooDeep } = await imp<typeof import("../src/server/depth.js")>("src/server/depth.ts");
  const dir = mkdtempSync(join(tmpdir(), "tp-bench-stages-"));
  const store = await openStore(join(dir, "traces.db"));
  // The load generator's bodies (collector-load.ts).
  const bodies = await runBodies(batch, ids === "v7");
  const headers = { "content-type": bodies.contentType };
  const cpu = () => {
    const u = process.cpuUsage();
    return u.user + u.system;
  };
  const limits = { maxPartBytes: 64 << 20, maxParts: 10_000, maxRuns: 1000 };
  const t: Times = { "multipart parsing": 0, "depth bound": 0, checks: 0, "store write": 0 };
  const warmup = Math.ceil(requests / 5);
  for (let i = 0; i < warmup + requests; i++) {
    const body = bodies.fresh();
    const issues = new IssueList(100, 10_000);
    const lap = (() => {
      let c = cpu();
      return (stage: keyof Times) => {
        const d = cpu();
        if (i >= warmup) t[stage] += d - c;
        c = d;
      };
    })();
    const parsed = await parseMultipart(Readable.from([body]), headers, limits, issues);
    lap("multipart parsing");
    const slicer = new Slicer();
    for (const d of parsed.documents) await tooDeep(d.value, 64, slicer);
    lap("depth bound");
    const check = batchCheck(issues, slicer);
    // The raw texts by part name (trees before they were kept by record) or by the record.
    const rawOf = (id: string, r: Record<string, unknown>) =>
      (parsed.raw as Map<unknown, RawText>).get(`post.${id}`) ?? (parsed.raw as Map<unknown, RawText>).get(r);
    for (const [id, r] of parsed.post) await check.post(r, [`post.${id}`], rawOf(id, r));
    lap("checks");
    await store.ingest(check.batch(parsed.attachments));
    lap("store write");
  }
  store.close();
  rmSync(dir, { recursive: true, force: true });
  for (const s of STAGES) t[s] /= requests;
  return t;
}

const here = fileURLToPath(new URL("../", import.meta.url));
if (process.argv[2] === "--child") {
  const [root, requests, batch, ids] = process.argv.slice(3) as [string, string, string, string];
  console.log(JSON.stringify(await measure(root, Number(requests), Number(batch), ids)));
} else {
  const REQUESTS = Number(arg("requests", "1500"));
  const ROUNDS = Number(arg("rounds", "3"));
  const BATCH = Number(arg("batch", "10"));
  const IDS = arg("ids", "v4");
  const baseline = process.argv.includes("--baseline") ? resolve(arg("baseline", "")) : undefined;
  const trees = [{ name: "this tree", root: here }, ...(baseline ? [{ name: "baseline", root: baseline }] : [])];
  const results = new Map<string, Times[]>(trees.map((t) => [t.name, []]));
  const child = (root: string) =>
    new Promise<Times>((res, rej) => {
      const p = spawn(
        process.execPath,
        ["--import", "tsx", fileURLToPath(import.meta.url), "--child", root, String(REQUESTS), String(BATCH), IDS],
        { cwd: root, stdio: ["ignore", "pipe", "inherit"] },
      );
      let out = "";
      p.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d));
      p.on("exit", (code) => {
        try {
          res(JSON.parse(out.trim().split("\n").pop() ?? ""));
        } catch {
          rej(new Error(`stage child exited ${code}: ${out}`));
        }
      });
    });
  console.log(
    `collector stages without the network: ${REQUESTS} requests of ${BATCH} runs (~2 KB each, fresh ${IDS} ids) per round after a warm-up, ${ROUNDS} rounds${baseline ? ", trees alternating" : ""}; CPU µs per request, median (min–max)`,
  );
  for (let r = 0; r < ROUNDS; r++) for (const t of r % 2 ? [...trees].reverse() : trees) results.get(t.name)!.push(await child(t.root));
  const total = (x: Times) => STAGES.reduce((n, s) => n + x[s], 0);
  for (const t of trees) {
    const xs = results.get(t.name)!;
    console.log(`  ${t.name} (${t.root}):`);
    for (const s of STAGES)
      console.log(
        `    ${s.padEnd(20)} ${spread(
          xs.map((x) => x[s]),
          0,
          " µs",
        )}`,
      );
    console.log(`    ${"total".padEnd(20)} ${spread(xs.map(total), 0, " µs")}`);
  }
  if (baseline) {
    const [a, b] = trees.map((t) => median(results.get(t.name)!.map(total))) as [number, number];
    console.log(`  this tree / baseline: ${(a / b).toFixed(2)}x CPU per request over these stages`);
  }
}
