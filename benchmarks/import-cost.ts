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
 * wall time per process, the same over bare node (the import's share), the
 * import as timed inside the child, RSS after the import, and the ratio of the
 * imports' shares (issue 12's target: at most 1.2x). Also timed: `node
 * bin/tracepipe.js --help` (target: at most 0.25 s).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const ROUNDS = Number(process.argv[2] ?? 30);

const built = join(ROOT, "dist/src/index.js");
if (!existsSync(built)) {
  console.error("dist/ is missing: run `npm run build` first (this measures the compiled package).");
  process.exit(2);
}
if (statSync(join(ROOT, "src/index.ts")).mtimeMs > statSync(built).mtimeMs) console.warn("warning: src/index.ts is newer than dist/; run `npm run build` for current numbers");

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
  ms: number;
  rss: number;
}
type Variant = "bare" | "tracepipe" | "langsmith" | "help";
const samples: Record<Variant, Sample[]> = { bare: [], tracepipe: [], langsmith: [], help: [] };

function run(variant: Variant): Sample {
  const args = variant === "help" ? [join(ROOT, "bin/tracepipe.js"), "--help"] : [join(app, `${variant}.mjs`)];
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { cwd: app, encoding: "utf8" });
  const wall = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${variant} exited ${r.status}: ${r.stderr}`);
  if (variant === "help") return { wall, ms: Number.NaN, rss: Number.NaN };
  const { ms, rss } = JSON.parse(r.stdout) as { ms: number; rss: number };
  return { wall, ms, rss };
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
const bare = med("bare", "wall");
console.log(`import cost, ${ROUNDS} interleaved rounds of whole cold processes (node ${process.version}); medians:`);
console.log(`  ${"".padEnd(34)} ${"process".padStart(9)} ${"over bare".padStart(10)} ${"in child".padStart(9)} ${"RSS".padStart(8)}`);
const row = (label: string, v: Variant) =>
  console.log(`  ${label.padEnd(34)} ${`${med(v, "wall").toFixed(0)} ms`.padStart(9)} ${`${(med(v, "wall") - bare).toFixed(0)} ms`.padStart(10)} ${`${med(v, "ms").toFixed(0)} ms`.padStart(9)} ${`${(med(v, "rss") / 2 ** 20).toFixed(0)} MiB`.padStart(8)}`);
row("node (bare)", "bare");
row('import("tracepipe")', "tracepipe");
row('import("langsmith") + "/wrappers"', "langsmith");
const ratio = (med("tracepipe", "wall") - bare) / (med("langsmith", "wall") - bare);
const inChild = med("tracepipe", "ms") / med("langsmith", "ms");
console.log(`  -> ratio tracepipe/langsmith, process time over bare node: ${ratio.toFixed(2)}x (target <= 1.2x); import timed in the child: ${inChild.toFixed(2)}x`);
const help = med("help", "wall") / 1000;
console.log(`  node bin/tracepipe.js --help: ${help.toFixed(3)} s per process (target <= 0.25 s)`);
