/**
 * Wrapper overhead: what tracing adds to a call's latency and CPU, for
 * tracepipe's wrapOpenAI and the `langsmith` package's wrapOpenAI, over the
 * same real `openai` client talking to the same fake vendor
 * (benchmarks/overhead-upstream.ts, its own process).
 *
 * What keeps it reproducible on a shared 2-core machine:
 * - both tracers deliver to the light capture server (benchmarks/capture-server.ts,
 *   its own process): it counts run ids and stores nothing, so no SQLite
 *   writes compete for the cores mid-measurement;
 * - compiled code on both sides: tracepipe from dist/ (run `npm run build`
 *   first; the benchmark refuses the TypeScript sources), langsmith's
 *   published JavaScript;
 * - short blocks (CALLS calls + STREAMS streams per variant) interleaved in a
 *   rotating order over many rounds, so drift and noise fall on all variants
 *   alike; each block ends by draining its tracer, so delivery CPU is charged
 *   to the tracer that caused it.
 * Reported: added latency (variant minus unwrapped, same round) per call and
 * per streamed chunk, added CPU per call and per chunk, each as the median over
 * rounds with the interquartile range; the ratio tracepipe/langsmith of the
 * medians; the same latencies from the pooled medians of every call (steadier
 * when the machine is busy); the streamed blocks' added CPU split by thread
 * (the process counter counts V8's GC helpers and compilers and libuv's pool
 * beside the main thread: benchmarks/thread-cpu.ts) and the collections that
 * started in each variant's streamed blocks (a mark-compact's pause lands in
 * whichever block is running, whoever's garbage it collects); runs each tracer
 * got to the server; peak RSS.
 * Then a breakdown of where the added time goes: a few more rounds under the
 * CPU profiler, each variant's sampled time charged to stages by source file
 * (benchmarks/overhead-breakdown.ts), per call and per streamed chunk, split
 * into what runs while the calls run (it can delay the caller) and what the
 * drain after the block delivers; and tracepipe's streamed blocks by phase
 * (the chunk's step, the call's hand-over, the deferred build, delivery).
 *
 *   npx tsx benchmarks/overhead.ts            # 40 rounds
 *   npx tsx benchmarks/overhead.ts --quick    # 10 rounds
 *   npx tsx benchmarks/overhead.ts --ab DIR   # also DIR's build (its dist/), as "before"
 */
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import OpenAI from "openai";
import { cpuMs, median, peakRssMiB, quantile, startChild } from "./stats.js";
import { StageProfiler } from "./overhead-breakdown.js";
import { threadCpu, threadSplit, type ThreadSplit } from "./thread-cpu.js";
import { PerformanceObserver, constants as perfConstants } from "node:perf_hooks";

const root = fileURLToPath(new URL("../", import.meta.url));
const quick = process.argv.includes("--quick");
const abAt = process.argv.indexOf("--ab");
/** `--ab <dir>`: another build of tracepipe (a checkout with its own dist/) as a fourth variant, "before". */
const abRoot = abAt > 0 ? process.argv[abAt + 1] : undefined;
const ROUNDS = quick ? 10 : 40;
/** Rounds run again under the CPU profiler, after the measured ones, for the breakdown by stage. */
const PROFILED_ROUNDS = quick ? 2 : 6;
const CALLS = 20; // non-streamed calls per variant per block
const STREAMS = 8; // streamed calls per variant per block
const CHUNKS = 200; // chunks per stream

const dist = join(root, "dist/src/index.js");
if (!existsSync(dist)) {
  console.error("benchmarks/overhead.ts measures compiled code on both sides: run `npm run build` first");
  process.exit(2);
}
const capture = await startChild([join(root, "benchmarks/capture-server.ts")]);
const upstream = await startChild([join(root, "benchmarks/overhead-upstream.ts"), String(CHUNKS)]);

const tp = (await import(dist)) as typeof import("../src/index.js");
const { wrapOpenAI: lsWrapOpenAI } = await import("langsmith/wrappers/openai");
const { Client: LsClient } = await import("langsmith");

const openai = () => new OpenAI({ apiKey: "sk-bench", baseURL: `${upstream.url}/v1`, maxRetries: 0 });
const spool = mkdtempSync(join(tmpdir(), "tp-bench-overhead-"));
const tpClient = new tp.Client({
  endpoint: capture.url,
  apiKey: "overhead-tracepipe",
  project: "overhead-tracepipe",
  spoolDir: join(spool, "spool"),
  deadLetterPath: join(spool, "dl.jsonl"),
  exitHooks: false,
});
const lsClient = new LsClient({ apiUrl: capture.url, apiKey: "overhead-langsmith", autoBatchTracing: true });

type Chat = Pick<OpenAI, "chat">;
type Name = "unwrapped" | "tracepipe" | "langsmith" | "before";
const names: Name[] = ["unwrapped", "tracepipe", "langsmith"];
const variants: Partial<Record<Name, Chat>> = {
  unwrapped: openai(),
  tracepipe: tp.wrapOpenAI(openai(), { client: tpClient }),
  langsmith: lsWrapOpenAI(openai(), { client: lsClient, tracingEnabled: true, project_name: "overhead-langsmith" }) as Chat,
};
/** Deliver what a tracer still holds, so its background CPU is charged to its own block. */
const drain: Partial<Record<Name, () => Promise<void>>> = {
  unwrapped: async () => {},
  tracepipe: async () => void (await tpClient.flush()),
  langsmith: () => lsClient.awaitPendingTraceBatches(),
};
let abClient: InstanceType<typeof tp.Client> | undefined;
if (abRoot) {
  const before = (await import(join(abRoot, "dist/src/index.js"))) as typeof import("../src/index.js");
  const c = new before.Client({
    endpoint: capture.url,
    apiKey: "overhead-before",
    project: "overhead-before",
    spoolDir: join(spool, "spool-before"),
    deadLetterPath: join(spool, "dl-before.jsonl"),
    exitHooks: false,
  });
  abClient = c;
  names.push("before");
  variants.before = before.wrapOpenAI(openai(), { client: c });
  drain.before = async () => void (await c.flush());
}
const messages = [
  { role: "system" as const, content: "You are a terse geography assistant." },
  { role: "user" as const, content: "What is the capital of France? Answer in one sentence." },
];

async function oneCall(c: Chat): Promise<number> {
  const t = performance.now();
  const r = await c.chat.completions.create({ model: "gpt-4o-mini", messages, temperature: 0 });
  if (!r.choices[0]) throw new Error("no choice");
  return performance.now() - t;
}
async function oneStream(c: Chat): Promise<number> {
  const t = performance.now();
  const s = await c.chat.completions.create({ model: "gpt-4o-mini", messages, stream: true });
  let n = 0;
  for await (const _ of s) n++;
  if (n !== CHUNKS) throw new Error(`expected ${CHUNKS} chunks, got ${n}`);
  return performance.now() - t;
}

/**
 * Per round and variant, in µs: median call latency, median stream latency, CPU per call, CPU per stream,
 * and the streamed block's CPU by thread (the process counter counts them all: V8's GC helpers, libuv's pool).
 */
type Round = { call: number; stream: number; cpuCall: number; cpuStream: number; threads: ThreadSplit };
const rounds = Object.fromEntries(names.map((n) => [n, [] as Round[]])) as Record<Name, Round[]>;
/** Every measured call and stream latency, in µs: the pooled median is steadier than per-round differences when the machine is busy. */
const pooled = Object.fromEntries(names.map((n) => [n, { call: [] as number[], stream: [] as number[] }])) as Record<
  Name,
  { call: number[]; stream: number[] }
>;

// Garbage collections, each charged (later) to the streamed block it started in: the collector's main-thread pauses
// land in the streams' latency, its parallel and concurrent work in the V8 helpers' CPU.
const streamBlocks: { name: Name; from: number; to: number }[] = [];
const gcSeen: { at: number; kind: number | undefined; ms: number }[] = [];
const gcObserver = new PerformanceObserver((list) => {
  for (const e of list.getEntries())
    gcSeen.push({ at: e.startTime, kind: (e as unknown as { detail?: { kind?: number } }).detail?.kind, ms: e.duration });
});
gcObserver.observe({ entryTypes: ["gc"] });

console.log(
  `overhead benchmark (compiled code): openai client -> fake vendor ${upstream.url}; tracers -> capture server ${capture.url} (own processes)`,
);
console.log(
  `  ${ROUNDS} rounds x (${CALLS} calls + ${STREAMS} streams of ${CHUNKS} chunks) per variant, rotating order; round 0 is warm-up`,
);
for (let round = 0; round <= ROUNDS; round++) {
  for (let k = 0; k < names.length; k++) {
    const name = names[(k + round) % names.length]!;
    const c = variants[name]!;
    const calls: number[] = [];
    let cpu = cpuMs();
    for (let i = 0; i < CALLS; i++) calls.push(await oneCall(c));
    await drain[name]!();
    const cpuCall = ((cpuMs() - cpu) * 1000) / CALLS;
    const streams: number[] = [];
    cpu = cpuMs();
    const byThread = threadCpu();
    const from = performance.now();
    for (let i = 0; i < STREAMS; i++) streams.push(await oneStream(c));
    await drain[name]!();
    const cpuStream = ((cpuMs() - cpu) * 1000) / STREAMS;
    const threads = threadSplit(byThread, threadCpu());
    if (round > 0) streamBlocks.push({ name, from, to: performance.now() });
    if (round > 0) {
      rounds[name].push({ call: median(calls) * 1000, stream: median(streams) * 1000, cpuCall, cpuStream, threads });
      for (const t of calls) pooled[name].call.push(t * 1000);
      for (const t of streams) pooled[name].stream.push(t * 1000);
    }
  }
}

const added = (name: Name, f: (r: Round) => number) => rounds[name].map((r, i) => f(r) - f(rounds.unwrapped[i]!));
const iqr = (xs: number[], d: number) =>
  `${median(xs).toFixed(d).padStart(7)} (IQR ${quantile(xs, 0.25).toFixed(d)}–${quantile(xs, 0.75).toFixed(d)})`;
const metrics: [string, (r: Round) => number, number][] = [
  ["latency per call, µs", (r) => r.call, 0],
  ["latency per chunk, µs", (r) => r.stream / CHUNKS, 2],
  ["CPU per call, µs", (r) => r.cpuCall, 0],
  ["CPU per chunk, µs", (r) => r.cpuStream / CHUNKS, 2],
];
const u = rounds.unwrapped;
console.log(
  `  unwrapped: ${median(u.map((r) => r.call)).toFixed(0)} µs per call, ${median(u.map((r) => r.stream)).toFixed(0)} µs per stream, CPU ${median(u.map((r) => r.cpuCall)).toFixed(0)} µs per call (medians over rounds)`,
);
const summary: string[] = [];
for (const [label, f, d] of metrics) {
  const t = added("tracepipe", f);
  const l = added("langsmith", f);
  const ratio = median(t) / median(l);
  summary.push(`${label.split(",")[0]} ${ratio.toFixed(2)}x`);
  console.log(`  added ${label.padEnd(22)} tracepipe ${iqr(t, d)}   langsmith ${iqr(l, d)}   -> ratio ${ratio.toFixed(2)}x`);
  if (abRoot) {
    const b = added("before", f);
    console.log(
      `  ${"".padEnd(28)} before    ${iqr(b, d)}   -> tracepipe/before ${(median(t) / median(b)).toFixed(2)}x, before/langsmith ${(median(b) / median(l)).toFixed(2)}x`,
    );
  }
}
const pooledAdded = (name: Name, k: "call" | "stream") => median(pooled[name][k]) - median(pooled.unwrapped[k]);
console.log(
  `  pooled medians (all ${ROUNDS * CALLS} calls, ${ROUNDS * STREAMS} streams per variant): added per call tracepipe ${pooledAdded("tracepipe", "call").toFixed(0)} µs, langsmith ${pooledAdded("langsmith", "call").toFixed(0)} µs -> ${(pooledAdded("tracepipe", "call") / pooledAdded("langsmith", "call")).toFixed(2)}x;` +
    ` per chunk tracepipe ${(pooledAdded("tracepipe", "stream") / CHUNKS).toFixed(2)} µs, langsmith ${(pooledAdded("langsmith", "stream") / CHUNKS).toFixed(2)} µs -> ${(pooledAdded("tracepipe", "stream") / pooledAdded("langsmith", "stream")).toFixed(2)}x`,
);
// The process counter split by thread (Linux schedstat): what each variant added per chunk on its main thread
// (its JavaScript, the event loop, the collector's pauses) and on the threads beside it (V8's GC helpers and
// compilers, libuv's pool), the streamed block with its drain, against unwrapped in the same round.
const threadGroups: [string, (t: ThreadSplit) => number][] = [
  ["main thread", (t) => t.main],
  ["V8 helpers", (t) => t.v8],
  ["libuv pool", (t) => t.pool],
];
console.log(`  added CPU per chunk by thread, µs (medians over rounds, IQR):`);
for (const [label, f] of threadGroups) {
  const per = (name: Name) => added(name, (r) => f(r.threads) / (STREAMS * CHUNKS));
  console.log(
    `    ${label.padEnd(12)} ${names
      .filter((n) => n !== "unwrapped")
      .map((n) => `${n} ${iqr(per(n), 2).trim()}`)
      .join("   ")}   (unwrapped ${median(u.map((r) => f(r.threads) / (STREAMS * CHUNKS))).toFixed(2)})`,
  );
}
await new Promise((r) => setTimeout(r, 20)); // GC entries are delivered on a later turn
gcObserver.disconnect();
const gcOf = Object.fromEntries(names.map((n) => [n, { minor: 0, major: 0, ms: 0 }])) as Record<
  Name,
  { minor: number; major: number; ms: number }
>;
for (const e of gcSeen) {
  const b = streamBlocks.find((x) => e.at >= x.from && e.at < x.to);
  if (!b) continue;
  if (e.kind === perfConstants.NODE_PERFORMANCE_GC_MINOR) gcOf[b.name].minor++;
  else if (e.kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR) gcOf[b.name].major++;
  gcOf[b.name].ms += e.ms;
}
const streamedChunks = ROUNDS * STREAMS * CHUNKS;
console.log(
  `  GC in the streamed blocks, per 1,000 chunks (scavenges / mark-compacts) and main-thread pause per chunk: ${names
    .map(
      (n) =>
        `${n} ${((gcOf[n].minor * 1000) / streamedChunks).toFixed(2)} / ${((gcOf[n].major * 1000) / streamedChunks).toFixed(2)}, ${((gcOf[n].ms * 1000) / streamedChunks).toFixed(2)} µs`,
    )
    .join("; ")}`,
);
const marginal = (name: Name) => median(rounds[name].map((r, i) => (r.stream - u[i]!.stream - (r.call - u[i]!.call)) / CHUNKS));
console.log(
  `  per chunk beyond the per-call cost ((stream added - call added) / ${CHUNKS}): tracepipe ${marginal("tracepipe").toFixed(2)} µs, langsmith ${marginal("langsmith").toFixed(2)} µs (target <= 2 µs)`,
);

// The breakdown: the same blocks under the profiler (not counted above), calls and their drain apart.
const profiler = new StageProfiler();
await profiler.start();
for (let round = 0; round < PROFILED_ROUNDS; round++) {
  for (let k = 0; k < names.length; k++) {
    const name = names[(k + round) % names.length]!;
    const c = variants[name]!;
    await profiler.profile(`${name}:calls`, async () => {
      for (let i = 0; i < CALLS; i++) await oneCall(c);
    });
    await profiler.profile(`${name}:calls-drain`, () => drain[name]!());
    await profiler.profile(`${name}:streams`, async () => {
      for (let i = 0; i < STREAMS; i++) await oneStream(c);
    });
    await profiler.profile(`${name}:streams-drain`, () => drain[name]!());
  }
}
profiler.stop();
const callsProfiled = PROFILED_ROUNDS * CALLS;
const chunksProfiled = PROFILED_ROUNDS * STREAMS * CHUNKS;
console.log(
  `  breakdown: ${PROFILED_ROUNDS} more rounds under V8's sampling profiler (50 µs), sampled time per stage (noisy; the profiler slows all variants alike)`,
);
for (const peer of names.filter((n) => n !== "unwrapped")) {
  console.log(`  ${peer}, non-streamed calls, while the calls run (the caller waits on this):`);
  for (const l of profiler.table(`${peer}:calls`, "unwrapped:calls", callsProfiled, "call")) console.log(l);
  console.log(`  ${peer}, non-streamed calls, the drain after the block (delivery):`);
  for (const l of profiler.table(`${peer}:calls-drain`, "unwrapped:calls-drain", callsProfiled, "call")) console.log(l);
  console.log(`  ${peer}, streamed calls, while the streams are read:`);
  for (const l of profiler.table(`${peer}:streams`, "unwrapped:streams", chunksProfiled, "chunk")) console.log(l);
  console.log(`  ${peer}, streamed calls, the drain after the block (delivery):`);
  for (const l of profiler.table(`${peer}:streams-drain`, "unwrapped:streams-drain", chunksProfiled, "chunk")) console.log(l);
}
// The per-chunk latency spreads a stream's whole cost over its chunks: tracepipe's part of a streamed block by
// phase says how much is the chunk's own step and how much per-stream work (its build, its delivery) that lands there.
for (const peer of names.filter((n) => n !== "unwrapped" && n !== "langsmith")) {
  console.log(`  ${peer}, streamed calls, while the streams are read, by phase (tracepipe's samples by the phase on their stack):`);
  for (const l of profiler.phaseTable(`${peer}:streams`, "unwrapped:streams", chunksProfiled, "chunk")) console.log(l);
}

await tpClient.shutdown();
await lsClient.awaitPendingTraceBatches();
const count = async (key: string) => ((await (await fetch(`${capture.url}/count?key=${key}`)).json()) as { runs: number }).runs;
const expected = (ROUNDS + 1 + PROFILED_ROUNDS) * (CALLS + STREAMS);
if (abClient) await abClient.shutdown();
console.log(
  `  runs at the server: tracepipe ${await count("overhead-tracepipe")}/${expected}, langsmith ${await count("overhead-langsmith")}/${expected}${abClient ? `, before ${await count("overhead-before")}/${expected}` : ""}`,
);
console.log(`  peak RSS of this process (all three variants): ${peakRssMiB().toFixed(0)} MiB`);
console.log(`  summary (tracepipe/langsmith, medians): ${summary.join(", ")}`);
capture.proc.kill("SIGTERM");
upstream.proc.kill("SIGTERM");
