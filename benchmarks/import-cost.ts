/**
 * What importing tracepipe costs a traced application, against langsmith:
 *
 *   npm run build && npx tsx benchmarks/import-cost.ts [rounds=30]
 *
 * Each sample is a whole child process started cold: bare node, node that
 * imports `tracepipe` (the built dist/, by package name), and node that
 * imports `langsmith` + `langsmith/wrappers` (the equivalent surface:
 * traceable and wrapOpenAI). Rounds interleave the variants in a fresh random
 * order, so drift in machine load falls on all of them alike. Reported: median
 * wall time per process, the same over bare node (the import's share), CPU
 * time per process (user + system, read at exit; steadier than wall time on a
 * busy machine) and over bare node, the import as timed inside the child, RSS
 * after the import, and the ratios of the imports' shares (issue 12's target:
 * at most 1.2x). Also timed: `node bin/tracepipe.js --help` (target: at most
 * 0.25 s).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const ROUNDS = Number(process.argv[2] ?? 30);

const built = join(ROOT, "dist/src/index.js");
if (!existsSync(built)) {
  console.error("dist/ is missing: run `npm run build` first (this measures the compiled package).");
  process.exit(2);
}
if (statSync(join(ROOT, "src/index.ts")).mtimeMs > statSync(built).mtimeMs)
  console.warn("warning: src/index.ts is newer than dist/; run `npm run build` for current numbers");

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

interface Sample {
  wall: number;
  cpu: number;
  ms: number;
  rss: number;
}

// Every child reports its own CPU time as it exits, on stderr.
const CPU_AT_EXIT = `data:text/javascript,process.on("exit",()=>{const c=process.cpuUsage();process.stderr.write("\\ncpu-us:"+(c.user+c.system)+"\\n")})`;
type Variant = "bare" | "tracepipe" | "langsmith" | "help";
const samples: Record<Variant, Sample[]> = { bare: [], tracepipe: [], langsmith: [], help: [] };

function run(variant: Variant): Sample {
  const args = [
    "--import",
    CPU_AT_EXIT,
    ...(variant === "help" ? [join(ROOT, "bin/tracepipe.js"), "--help"] : [join(app, `${variant}.mjs`)]),
  ];
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { cwd: app, encoding: "utf8" });
  const wall = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${variant} exited ${r.status}: ${r.stderr}`);
  const cpu = Number(/cpu-us:(\d+)/.exec(r.stderr)?.[1]) / 1000;
  if (variant === "help") return { wall, cpu, ms: Number.NaN, rss: Number.NaN };
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
for (const v of ["bare", "tracepipe", "langsmith", "help"] as const) run(v);
for (let round = 0; round < ROUNDS; round++) {
  for (const v of shuffled<Variant>(["bare", "tracepipe", "langsmith", "help"])) samples[v].push(run(v));
}

const med = (v: Variant, k: keyof Sample) => median(samples[v].map((s) => s[k]));
const over = (v: Variant, k: "wall" | "cpu") => med(v, k) - med("bare", k);
const ms = (x: number) => `${x.toFixed(0)} ms`;
console.log(
  `import cost, ${ROUNDS} interleaved rounds of whole cold processes (node ${process.version}, load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} CPUs); medians:`,
);
console.log(
  `  ${"".padEnd(34)} ${"wall".padStart(7)} ${"over bare".padStart(10)} ${"CPU".padStart(7)} ${"over bare".padStart(10)} ${"in child".padStart(9)} ${"RSS".padStart(8)}`,
);
const row = (label: string, v: Variant) =>
  console.log(
    `  ${label.padEnd(34)} ${ms(med(v, "wall")).padStart(7)} ${ms(over(v, "wall")).padStart(10)} ${ms(med(v, "cpu")).padStart(7)} ${ms(over(v, "cpu")).padStart(10)} ${ms(med(v, "ms")).padStart(9)} ${`${(med(v, "rss") / 2 ** 20).toFixed(0)} MiB`.padStart(8)}`,
  );
row("node (bare)", "bare");
row('import("tracepipe")', "tracepipe");
row('import("langsmith") + "/wrappers"', "langsmith");
const ratio = (k: "wall" | "cpu") => (over("tracepipe", k) / over("langsmith", k)).toFixed(2);
console.log(
  `  -> ratio tracepipe/langsmith over bare node: wall ${ratio("wall")}x, CPU ${ratio("cpu")}x (target <= 1.2x); import timed in the child ${(med("tracepipe", "ms") / med("langsmith", "ms")).toFixed(2)}x`,
);
console.log(
  `  node bin/tracepipe.js --help: ${(med("help", "wall") / 1000).toFixed(3)} s wall, ${(med("help", "cpu") / 1000).toFixed(3)} s CPU per process (target <= 0.25 s)`,
);
