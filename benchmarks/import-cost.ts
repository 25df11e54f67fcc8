/**
 * What importing tracepipe costs a traced application, against langsmith:
 *
 *   npx tsx benchmarks/import-cost.ts [rounds=30] [--baseline DIR]   (builds dist/ first when it is stale)
 *
 * `--baseline DIR` also imports another checkout's built tracepipe (DIR/dist),
 * interleaved with the rest, for a before/after from one run.
 *
 * Each sample is a whole child process started cold: bare node, node that
 * imports `tracepipe` (the built dist/, by package name), and node that
 * imports `langsmith` + `langsmith/wrappers` (the equivalent surface:
 * traceable and wrapOpenAI), once as ES modules and once by CommonJS
 * `require()` (langsmith's CommonJS build, the way most of its users load it,
 * and the peer the stop check holds tracepipe to). Rounds interleave the variants in a fresh random
 * order, so drift in machine load falls on all of them alike; one unrecorded
 * round first warms the file cache for all alike.
 *
 * Two baselines of bare node, because the import's share depends on which one
 * is taken away: `node -e ''` (what a reviewer times from outside: no ES module
 * loader, no script file) and an empty ES module run the way the import
 * variants are (with the ES module loader and the CPU-time hook), which leaves
 * the import alone. Printed per variant: wall time per process, over each
 * baseline, CPU time (user + system, read at exit; steadier than wall time on
 * a busy machine) over the ES module baseline, the import as timed inside the
 * child (performance.now() around the awaited import), and RSS after it.
 * Ratios tracepipe/langsmith (target: at most 1.2x) from medians and from
 * minimums: on a busy machine the minimums are the steadier of the two. Also
 * timed: `node bin/tracepipe.js --help` (target: at most 0.25 s) and
 * `tracepipe serve` from spawn to its readiness line (an empty database in a
 * temporary folder, port 0), for this checkout and for --baseline's.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, mkdtempSync, readdirSync, realpathSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const args = process.argv.slice(2);
if (args.includes("--help")) {
  const doc = readFileSync(fileURLToPath(import.meta.url), "utf8");
  console.log(
    doc
      .slice(doc.indexOf("/**") + 3, doc.indexOf("*/"))
      .replace(/^ \* ?/gm, "")
      .trim(),
  );
  process.exit(0);
}
const flag = args.indexOf("--baseline");
const BASELINE = flag >= 0 ? args.splice(flag, 2)[1] : undefined;
const ROUNDS = Number(args[0] ?? 30);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) {
  console.error(`rounds must be a positive integer, not ${JSON.stringify(args[0])} (--help says how to run it)`);
  process.exit(2);
}
if (BASELINE !== undefined && !existsSync(join(BASELINE, "dist/src/index.js"))) {
  console.error(`--baseline ${BASELINE}: no dist/src/index.js there (build it first)`);
  process.exit(2);
}

// This measures the compiled package: build it when a source is newer than dist/.
const built = join(ROOT, "dist/.build-stamp");
const newest = (path: string): number =>
  statSync(path).isDirectory() ? Math.max(0, ...readdirSync(path).map((n) => newest(join(path, n)))) : statSync(path).mtimeMs;
if (!existsSync(built) || ["src", "adapters", "scripts/build.mjs"].some((p) => newest(join(ROOT, p)) > statSync(built).mtimeMs)) {
  console.log("dist/ is stale: building (npm run build)");
  const r = spawnSync(process.execPath, [join(ROOT, "scripts/build.mjs")], { cwd: ROOT, stdio: "inherit" });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

// An app directory where both packages resolve by name, as after `npm install`.
const app = mkdtempSync(join(tmpdir(), "tp-import-cost-"));
mkdirSync(join(app, "node_modules"));
symlinkSync(ROOT.replace(/\/$/, ""), join(app, "node_modules/tracepipe"), "dir");
symlinkSync(realpathSync(join(ROOT, "node_modules/langsmith")), join(app, "node_modules/langsmith"), "dir");
writeFileSync(join(app, "package.json"), JSON.stringify({ name: "import-cost", private: true, type: "module" }));
const child = (specifiers: string[]) =>
  `const t0 = performance.now();\n${specifiers.map((s) => `await import(${JSON.stringify(s)});`).join("\n")}\n` +
  `process.stdout.write(JSON.stringify({ ms: performance.now() - t0, rss: process.memoryUsage().rss }));\n`;
writeFileSync(join(app, "bare.mjs"), child([]));
writeFileSync(join(app, "tracepipe.mjs"), child(["tracepipe"]));
writeFileSync(join(app, "langsmith.mjs"), child(["langsmith", "langsmith/wrappers"]));
writeFileSync(
  join(app, "langsmith-cjs.cjs"),
  `const t0 = performance.now();\nrequire("langsmith");\nrequire("langsmith/wrappers");\n` +
    `process.stdout.write(JSON.stringify({ ms: performance.now() - t0, rss: process.memoryUsage().rss }));\n`,
);
// The baseline's app: the same script, with tracepipe resolving to the other checkout.
const baselineApp = mkdtempSync(join(tmpdir(), "tp-import-cost-baseline-"));
if (BASELINE !== undefined) {
  mkdirSync(join(baselineApp, "node_modules"));
  symlinkSync(realpathSync(BASELINE), join(baselineApp, "node_modules/tracepipe"), "dir");
  writeFileSync(join(baselineApp, "package.json"), JSON.stringify({ name: "import-cost-baseline", private: true, type: "module" }));
  writeFileSync(join(baselineApp, "tracepipe.mjs"), child(["tracepipe"]));
}

interface Sample {
  wall: number;
  cpu: number;
  ms: number;
  rss: number;
}

// Every child reports its own CPU time as it exits, on stderr.
const CPU_AT_EXIT = `data:text/javascript,process.on("exit",()=>{const c=process.cpuUsage();process.stderr.write("\\ncpu-us:"+(c.user+c.system)+"\\n")})`;
type Variant =
  "node -e" | "bare" | "tracepipe" | "baseline" | "langsmith" | "langsmith-cjs" | "help" | "baseline help" | "serve" | "baseline serve";
const VARIANTS: Variant[] = [
  "node -e",
  "bare",
  "tracepipe",
  "langsmith",
  "langsmith-cjs",
  "help",
  "serve",
  ...(BASELINE === undefined ? [] : (["baseline", "baseline help", "baseline serve"] as const)),
];
const samples = Object.fromEntries(VARIANTS.map((v) => [v, []])) as unknown as Record<Variant, Sample[]>;
const binOf = (v: Variant) => join(v.startsWith("baseline") ? BASELINE! : ROOT, "bin/tracepipe.js");

/** `tracepipe serve` from spawn to its readiness line, on a fresh empty database; then stopped. */
function startServe(variant: Variant): Promise<Sample> {
  const db = join(mkdtempSync(join(tmpdir(), "tp-import-cost-serve-")), "traces.db");
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const c = spawn(process.execPath, [binOf(variant), "serve", "--port", "0", "--db", db], {
      env: { ...process.env, TRACEPIPE_API_KEY: "", TRACEPIPE_ENDPOINT: "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let seen = "";
    let wall = 0;
    c.stdout.setEncoding("utf8").on("data", (d: string) => {
      seen += d;
      if (wall === 0 && /listening on http:\/\//.test(seen)) {
        wall = Number(process.hrtime.bigint() - t0) / 1e6;
        c.kill("SIGTERM");
      }
    });
    c.stderr.resume();
    c.on("close", () =>
      wall > 0 ? resolve({ wall, cpu: Number.NaN, ms: Number.NaN, rss: Number.NaN }) : reject(new Error(`serve: ${seen}`)),
    );
  });
}

async function run(variant: Variant): Promise<Sample> {
  if (variant === "serve" || variant === "baseline serve") return startServe(variant);
  const script =
    variant === "help" || variant === "baseline help"
      ? [binOf(variant), "--help"]
      : [
          variant === "baseline"
            ? join(baselineApp, "tracepipe.mjs")
            : join(app, variant === "langsmith-cjs" ? "langsmith-cjs.cjs" : `${variant}.mjs`),
        ];
  const argv = variant === "node -e" ? ["-e", ""] : ["--import", CPU_AT_EXIT, ...script];
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, argv, { cwd: variant === "baseline" ? baselineApp : app, encoding: "utf8" });
  const wall = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${variant} exited ${r.status}: ${r.stderr}`);
  const cpu = Number(/cpu-us:(\d+)/.exec(r.stderr)?.[1] ?? Number.NaN) / 1000;
  if (variant === "node -e") return { wall, cpu: Number.NaN, ms: Number.NaN, rss: Number.NaN };
  if (variant === "help" || variant === "baseline help") return { wall, cpu, ms: Number.NaN, rss: Number.NaN };
  const { ms, rss } = JSON.parse(r.stdout) as { ms: number; rss: number };
  return { wall, cpu, ms, rss };
}

function shuffled<T>(xs: T[]): T[] {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

// One unrecorded round first: the file-system cache is warm for everyone alike after it.
for (const v of VARIANTS) await run(v);
for (let round = 0; round < ROUNDS; round++) {
  for (const v of shuffled(VARIANTS)) samples[v].push(await run(v));
}

type Stat = (xs: number[]) => number;
const min: Stat = (xs) => Math.min(...xs);
const of = (v: Variant, k: keyof Sample, f: Stat) => f(samples[v].map((s) => s[k]));
const over = (v: Variant, k: "wall" | "cpu", base: Variant, f: Stat) => of(v, k, f) - of(base, k, f);
const ms = (x: number) => (Number.isNaN(x) ? "-" : `${x.toFixed(0)} ms`);
console.log(
  `import cost, ${ROUNDS} interleaved rounds of whole cold processes (node ${process.version}, load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} CPUs); medians (minimums):`,
);
const cols = ["wall", "over node -e ''", "over bare ESM", "CPU over bare ESM", "import in child", "RSS"];
const widths = [17, 17, 17, 17, 17, 8];
console.log(`  ${"".padEnd(34)} ${cols.map((c, i) => c.padStart(widths[i]!)).join(" ")}`);
const both = (f: (s: Stat) => number) => `${ms(f(median))} (${ms(f(min)).replace(" ms", "")})`;
const row = (label: string, v: Variant) => {
  const cells = [
    both((f) => of(v, "wall", f)),
    v === "node -e" ? "" : both((f) => over(v, "wall", "node -e", f)),
    v === "node -e" || v === "bare" ? "" : both((f) => over(v, "wall", "bare", f)),
    v === "node -e" || v === "bare" ? "" : both((f) => over(v, "cpu", "bare", f)),
    v === "node -e" ? "" : both((f) => of(v, "ms", f)),
    v === "node -e" ? "" : `${(of(v, "rss", median) / 2 ** 20).toFixed(0)} MiB`,
  ];
  console.log(`  ${label.padEnd(34)} ${cells.map((c, i) => c.padStart(widths[i]!)).join(" ")}`);
};
row("node -e '' (bare node)", "node -e");
row("node empty.mjs (bare ESM)", "bare");
row('import("tracepipe")', "tracepipe");
if (BASELINE !== undefined) row('import("tracepipe"), --baseline', "baseline");
row('import("langsmith") + "/wrappers"', "langsmith");
row('require("langsmith") + "/wrappers"', "langsmith-cjs");
const ratio = (num: number, den: number) => `${(num / den).toFixed(2)}x`;
/** Ratio of medians, with the range of the per-round ratios (each round's variants ran back to back). */
const ratios = (label: string, f: (v: Variant, s: Stat) => number, peer: Variant = "langsmith") => {
  const rounds = samples.tracepipe.map((_, i) => f("tracepipe", (xs) => xs[i]!) / f(peer, (xs) => xs[i]!)).sort((a, b) => a - b);
  const range = `${rounds[Math.floor(rounds.length * 0.1)]!.toFixed(2)}-${rounds[Math.ceil(rounds.length * 0.9) - 1]!.toFixed(2)}x`;
  console.log(
    `    ${label.padEnd(44)} ${ratio(f("tracepipe", median), f(peer, median))} (minimums ${ratio(f("tracepipe", min), f(peer, min))}; rounds' 10th-90th percentile ${range})`,
  );
};
console.log("  -> tracepipe/langsmith by CommonJS require (the stop check's peer; target <= 1.2x), medians (minimums):");
ratios("whole-process wall over node -e ''", (v, f) => over(v, "wall", "node -e", f), "langsmith-cjs");
ratios("CPU over bare ESM", (v, f) => over(v, "cpu", "bare", f), "langsmith-cjs");
ratios("import timed in the child", (v, f) => of(v, "ms", f), "langsmith-cjs");
console.log("  -> tracepipe/langsmith by ES module import, medians (minimums):");
ratios("whole-process wall over node -e ''", (v, f) => over(v, "wall", "node -e", f));
ratios("whole-process wall over bare ESM", (v, f) => over(v, "wall", "bare", f));
ratios("CPU over bare ESM", (v, f) => over(v, "cpu", "bare", f));
ratios("import timed in the child", (v, f) => of(v, "ms", f));
if (BASELINE !== undefined) {
  const vs = (label: string, f: (v: Variant, s: Stat) => number) =>
    console.log(
      `    ${label.padEnd(44)} ${ratio(f("tracepipe", median), f("baseline", median))} (minimums ${ratio(f("tracepipe", min), f("baseline", min))})`,
    );
  console.log(`  -> this tracepipe / --baseline ${BASELINE}, medians (minimums):`);
  vs("whole-process wall over node -e ''", (v, f) => over(v, "wall", "node -e", f));
  vs("CPU over bare ESM", (v, f) => over(v, "cpu", "bare", f));
  vs("import timed in the child", (v, f) => of(v, "ms", f));
}
const seconds = (v: Variant, k: "wall" | "cpu") => `${(of(v, k, median) / 1000).toFixed(3)} s (${(of(v, k, min) / 1000).toFixed(3)})`;
console.log(
  `  node bin/tracepipe.js --help: ${seconds("help", "wall")} wall, ${seconds("help", "cpu")} CPU per process (target <= 0.25 s)`,
);
if (BASELINE !== undefined)
  console.log(`    --baseline's: ${seconds("baseline help", "wall")} wall, ${seconds("baseline help", "cpu")} CPU`);
console.log(`  tracepipe serve, spawn to readiness line: ${seconds("serve", "wall")} wall`);
if (BASELINE !== undefined) console.log(`    --baseline's: ${seconds("baseline serve", "wall")} wall`);
