/**
 * The collector's instructions per request, counted by callgrind: a number
 * that other processes on a shared machine do not move, where CPU time does.
 *
 * Each tree's compiled collector (dist/, as `tracepipe serve` runs it; build
 * it first) serves under valgrind --tool=callgrind on a fresh SQLite file.
 * One client (benchmarks/raw-http.ts) sends the load generator's bodies
 * (run-bodies.ts: BATCH runs of ~2 KB, fresh random ids) one after another,
 * so every group commit holds one request and each count is repeatable.
 * Instrumentation is switched on only after WARM requests (the JIT's tiers
 * settled) and the counters zeroed after a few more; then N requests are
 * counted. Reported: instructions per request of the main thread (the one
 * that bounds requests/s; V8's compiler and GC helper threads run beside
 * it) and of all threads, median (min–max) over ROUNDS, trees alternating,
 * and this tree's main thread against the baseline's. Instructions are not
 * time: system calls (the WAL's writes) are not counted at all.
 *
 *   npx tsx benchmarks/collector-instructions.ts [--warm 1000] [--requests 200] [--rounds 2] [--batch 10] [--baseline DIR]
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { RawHttpConnection, requestHead } from "./raw-http.js";
import { runBodies } from "./run-bodies.js";
import { median, spread } from "./stats.js";

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
}
const WARM = arg("warm", 1000);
const N = arg("requests", 200);
const ROUNDS = arg("rounds", 2);
const BATCH = arg("batch", 10);
const here = fileURLToPath(new URL("../", import.meta.url));
const baselineAt = process.argv.indexOf("--baseline");
const trees = [{ name: "this tree", root: here }];
if (baselineAt > 0) trees.push({ name: "baseline", root: resolve(process.argv[baselineAt + 1]!) });

const bodies = await runBodies(BATCH, false);

/** The collector of `root` under callgrind: instructions per request of its main thread and of all its threads. */
async function measure(root: string): Promise<{ main: number; all: number }> {
  const dir = mkdtempSync(join(tmpdir(), "tp-bench-instructions-"));
  const entry = pathToFileURL(join(root, "dist/src/server/index.js")).href;
  const serve = `import(${JSON.stringify(entry)}).then(async ({ createCollector }) => {
    const c = await createCollector({ db: ${JSON.stringify(join(dir, "traces.db"))}, rateLimits: false });
    console.log("listening on " + (await c.listen(0)).url);
    process.on("SIGTERM", () => c.close().then(() => process.exit(0)));
  });`;
  const out = join(dir, "callgrind.out");
  const proc = spawn(
    "valgrind",
    ["--tool=callgrind", `--callgrind-out-file=${out}`, "--instr-atstart=no", "--separate-threads=yes", process.execPath, "-e", serve],
    { cwd: root, stdio: ["ignore", "pipe", "ignore"] },
  );
  try {
    const url = await new Promise<string>((res, rej) => {
      let seen = "";
      proc.stdout!.setEncoding("utf8").on("data", (d: string) => {
        seen += d;
        const m = /listening on (\S+)/.exec(seen);
        if (m) res(m[1]!);
      });
      proc.on("exit", (code) => rej(new Error(`collector under callgrind exited ${code}`)));
    });
    const target = new URL(`${url}/runs/multipart`);
    const head = requestHead(target, bodies.contentType, bodies.length);
    const conn = new RawHttpConnection(target);
    const send = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const status = await conn.send(head, bodies.fresh());
        if (status !== 202) throw new Error(`the collector answered ${status}`);
      }
    };
    const control = (...a: string[]) => execFileSync("callgrind_control", [...a, String(proc.pid)], { stdio: "ignore" });
    await send(WARM);
    control("--instr=on");
    await send(20);
    control("--zero");
    await send(N);
    control("--dump");
    conn.close();
    let main = 0;
    let all = 0;
    for (const f of readdirSync(dir).filter((f) => f.startsWith("callgrind.out."))) {
      const text = readFileSync(join(dir, f), "utf8");
      // The dump (part 1 on), not the counts before it were zeroed; each thread in a file of its own.
      if (!/^part: [1-9]/m.test(text)) continue;
      const total = Number(/^(?:summary|totals): (\d+)/m.exec(text)?.[1] ?? 0);
      all += total;
      if (/^thread: 1$/m.test(text)) main += total;
    }
    return { main: main / N, all: all / N };
  } finally {
    proc.kill("SIGTERM");
    await new Promise((r) => (proc.exitCode !== null ? r(undefined) : proc.once("exit", r)));
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(
  `collector instructions (callgrind): ${N} requests of ${BATCH} runs (~2 KB each, fresh v4 ids) from one client after ${WARM} + 20 uncounted, compiled dist/, file-backed SQLite, ${ROUNDS} rounds${trees.length > 1 ? ", trees alternating" : ""}`,
);
const results = new Map(trees.map((t) => [t.name, { main: [] as number[], all: [] as number[] }]));
for (let r = 0; r < ROUNDS; r++)
  for (const t of r % 2 ? [...trees].reverse() : trees) {
    const m = await measure(t.root);
    results.get(t.name)!.main.push(m.main / 1e6);
    results.get(t.name)!.all.push(m.all / 1e6);
  }
for (const t of trees) {
  const x = results.get(t.name)!;
  console.log(`  ${t.name} (${t.root}):`);
  console.log(`    main thread  ${spread(x.main, 3, "M instructions per request")}`);
  console.log(`    all threads  ${spread(x.all, 3, "M instructions per request")}`);
}
if (trees.length > 1)
  console.log(
    `  main thread, this tree / baseline: ${(median(results.get("this tree")!.main) / median(results.get("baseline")!.main)).toFixed(3)}x`,
  );
