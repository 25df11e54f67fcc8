/**
 * Instructions per streamed chunk, under valgrind's callgrind: a count that a
 * busy machine does not move. Each variant of benchmarks/stream-counters.ts
 * (`--only unwrapped`, `tracepipe`, and `before` with `--ab DIR`) runs in a
 * process of its own twice, reading SHORT and then LONG streams after the same
 * warm-up; the difference of the two totals over the (LONG - SHORT) x 200
 * chunks is the cost of a chunk, start-up and warm-up cancelled out, the
 * stream's start, its deferred build and its delivery spread over its chunks.
 * V8 runs single-threaded (`--single-threaded`: compilers and the garbage
 * collector on the main thread, so their work lands in the count
 * deterministically) with a fixed GC schedule (`--predictable-gc-schedule`).
 * The script runs bundled (esbuild) by plain node, so loading it costs little.
 * Repetitions take turns by variant, two processes at a time.
 *
 *   npx tsx benchmarks/stream-instructions.ts [--ab DIR] [--reps 3] [--short 8] [--long 32] [--warmup 25]
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { median } from "./stats.js";

const root = fileURLToPath(new URL("../", import.meta.url));
const arg = (name: string, dflt?: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const abRoot = arg("--ab");
const REPS = Number(arg("--reps", "3"));
const SHORT = Number(arg("--short", "8"));
const LONG = Number(arg("--long", "32"));
/** Warm-up blocks of 8 streams before measuring: code run once per stream is still being compiled after a few dozen streams. */
const WARMUP = arg("--warmup", "25")!;
const CHUNKS = 200;
const names = ["unwrapped", "tracepipe", ...(abRoot ? ["before"] : [])];
const out = mkdtempSync(join(tmpdir(), "tp-bench-stream-instructions-"));
// The script bundled into one file run by plain node: under callgrind, loading TypeScript through tsx would cost
// more instructions than the streams measured (the bundle is told where the tree is).
const bundle = join(out, "stream-counters.mjs");
await build({
  entryPoints: [join(root, "benchmarks/stream-counters.ts")],
  bundle: true,
  platform: "node",
  format: "esm",
  outfile: bundle,
  logLevel: "warning",
  banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
});

/** One process's instructions (all threads), reading `streams` streams of the variant after the warm-up. */
function count(name: string, streams: number): Promise<number> {
  const args = [
    "--tool=callgrind",
    `--callgrind-out-file=${join(out, "cg.%p")}`,
    process.execPath,
    "--single-threaded",
    "--predictable-gc-schedule",
    bundle,
    "--only",
    name,
    "--streams",
    String(streams),
    "--warmup",
    WARMUP,
    ...(abRoot ? ["--ab", abRoot] : []),
  ];
  return new Promise((resolve, reject) =>
    execFile("valgrind", args, { cwd: root, maxBuffer: 1 << 24, env: { ...process.env, TP_BENCH_ROOT: root } }, (err, _stdout, stderr) => {
      const m = /Collected : (\d+)/.exec(stderr);
      if (err || !m) reject(err ?? new Error(`no count from callgrind: ${stderr.slice(-500)}`));
      else resolve(Number(m[1]));
    }),
  );
}

const perChunk = Object.fromEntries(names.map((n) => [n, [] as number[]]));
const jobs: (() => Promise<void>)[] = [];
for (let rep = 0; rep < REPS; rep++)
  for (let k = 0; k < names.length; k++) {
    const name = names[(k + rep) % names.length]!;
    jobs.push(async () => {
      const [short, long] = await Promise.all([count(name, SHORT), count(name, LONG)]);
      const x = (long - short) / ((LONG - SHORT) * CHUNKS);
      perChunk[name]!.push(x);
      console.log(`  rep ${rep} ${name.padEnd(10)} ${x.toFixed(0)} instructions per chunk (${short} / ${long})`);
    });
  }
console.log(
  `stream-instructions: ${REPS} repetitions x ${names.join(", ")}; ${LONG} - ${SHORT} streams of ${CHUNKS} chunks, under callgrind`,
);
for (const job of jobs) await job();
const u = median(perChunk.unwrapped!);
for (const n of names) {
  const xs = perChunk[n]!;
  const added = n === "unwrapped" ? "" : `, added ${(median(xs) - u).toFixed(0)}`;
  console.log(
    `  ${n.padEnd(10)} median ${median(xs).toFixed(0)} (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}) instructions per chunk${added}`,
  );
}
if (abRoot) {
  const t = median(perChunk.tracepipe!) - u;
  const b = median(perChunk.before!) - u;
  console.log(`  added per chunk, tracepipe/before: ${(t / b).toFixed(2)}x`);
}
rmSync(out, { recursive: true, force: true });
