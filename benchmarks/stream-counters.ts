/**
 * What a traced stream costs per chunk, by counters that hold on a busy
 * machine: the real `openai` client reads chat.completion.chunk streams (the
 * same SSE bytes benchmarks/overhead-upstream.ts sends) from a fetch that
 * answers from memory, so the SDK's whole streaming path runs and no other
 * process takes part in the reading; tracepipe delivers to the capture server
 * (its own process) over loopback, as in benchmarks/overhead.ts. Variants
 * unwrapped, this build, and `--ab DIR`'s build as `before`, taking turns.
 *
 * Reported per streamed chunk, each variant and its difference to unwrapped:
 * - CPU by thread (benchmarks/thread-cpu.ts): the main thread, V8's helper
 *   threads (the garbage collector's parallel and concurrent work), libuv's pool;
 * - garbage collections per 1,000 chunks (scavenges, mark-compacts) and their
 *   main-thread pause, from perf_hooks' `gc` entries;
 * - bytes allocated (V8's sampling heap profiler, objects already freed
 *   included), and of them what tracepipe's own code allocated, by function.
 * Each round a block of STREAMS streams per variant, then its drain (the
 * tracer's deferred build and flush), so all of a stream's cost is counted.
 *
 *   npx tsx benchmarks/stream-counters.ts [--ab DIR] [--rounds N]
 *   # instruction counts: one variant alone, a fixed number of streams, under callgrind
 *   valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.%p node --import tsx benchmarks/stream-counters.ts --only tracepipe --streams 40
 *
 * With `--only NAME` the script warms up, then toggles callgrind's
 * instrumentation off for the warm-up (when run with --instr-atstart=no, via
 * `callgrind_control -i on`, the caller's business) and reads exactly
 * `--streams` streams: the difference of two variants' totals over the chunks
 * read is what the wrapper adds, start to delivery.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { PerformanceObserver, constants } from "node:perf_hooks";
import { Session } from "node:inspector/promises";
import OpenAI from "openai";
import { median, startChild } from "./stats.js";
import { threadCpu, threadSplit, type ThreadSplit } from "./thread-cpu.js";
import { chatSse } from "./chat-sse.js";
import { sourceOf } from "./source-of.js";

/** The tree (TP_BENCH_ROOT when this script runs from a copy elsewhere). */
const root = process.env.TP_BENCH_ROOT ?? fileURLToPath(new URL("../", import.meta.url));
const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const abRoot = arg("--ab");
const only = arg("--only");
const ROUNDS = Number(arg("--rounds") ?? 30);
/** Blocks before measuring (`--warmup`): V8 keeps compiling code that runs once per stream for many streams. */
const WARMUP = Number(arg("--warmup") ?? 5);
const STREAMS = 8;
/** Chunks per stream (`--chunks`): two counts apart tell a chunk's own cost from the stream's, spread over its chunks. */
const CHUNKS = Number(arg("--chunks") ?? 200);
/**
 * The stream's SSE events, each as its own piece of body, as a network delivers a stream read
 * while it is written. One piece holding the whole body would have the SDK's line splitter slice
 * that buffer again for every event, a cost that grows with the stream's length and is no one's.
 */
const events = chatSse(CHUNKS)
  .split(/(?<=\n\n)/)
  .map((e) => new TextEncoder().encode(e));
const body = () => {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i < events.length) controller.enqueue(events[i++]!);
      else controller.close();
    },
  });
};

const capture = await startChild([join(root, "benchmarks/capture-server.ts")], { cwd: root });
const spool = mkdtempSync(join(tmpdir(), "tp-bench-stream-counters-"));
/** The `openai` client over a fetch that answers every request with the stream's events. */
const openai = () =>
  new OpenAI({
    apiKey: "sk-bench",
    baseURL: "http://127.0.0.1:9/v1",
    maxRetries: 0,
    fetch: (async () => new Response(body(), { status: 200, headers: { "content-type": "text/event-stream" } })) as typeof fetch,
  });
type Chat = Pick<OpenAI, "chat">;
interface Variant {
  chat: Chat;
  drain: () => Promise<void>;
  shutdown: () => Promise<void>;
}
const variants: Record<string, Variant> = {
  unwrapped: { chat: openai(), drain: async () => {}, shutdown: async () => {} },
};
for (const [name, dir] of [
  ["tracepipe", root],
  ["before", abRoot],
] as const) {
  if (dir === undefined || (only !== undefined && only !== name)) continue;
  const tp = (await import(join(dir, "dist/src/index.js"))) as typeof import("../src/index.js");
  const client = new tp.Client({
    endpoint: capture.url,
    apiKey: `stream-counters-${name}`,
    project: name,
    spoolDir: join(spool, name),
    deadLetterPath: join(spool, `${name}.jsonl`),
    exitHooks: false,
  });
  variants[name] = {
    chat: tp.wrapOpenAI(openai(), { client }),
    drain: async () => void (await client.flush()),
    shutdown: async () => void (await client.shutdown()),
  };
}
const messages = [
  { role: "system" as const, content: "You are a terse geography assistant." },
  { role: "user" as const, content: "What is the capital of France? Answer in one sentence." },
];
async function block(v: Variant, streams: number): Promise<void> {
  for (let i = 0; i < streams; i++) {
    const s = await v.chat.chat.completions.create({ model: "gpt-4o-mini", messages, stream: true });
    let n = 0;
    for await (const _ of s) n++;
    if (n !== CHUNKS) throw new Error(`expected ${CHUNKS} chunks, got ${n}`);
  }
  await v.drain();
}

if (only !== undefined) {
  const v = variants[only];
  if (!v) throw new Error(`--only ${only}: no such variant`);
  const streams = Number(arg("--streams") ?? 40);
  for (let i = 0; i < WARMUP; i++) await block(v, STREAMS);
  // `--pause MS`: idle before and after the measured block, so a callgrind_control sent on the lines printed
  // here (zero the counters, dump them) lands while nothing runs.
  const pause = Number(arg("--pause") ?? 0);
  const idle = () => new Promise((r) => setTimeout(r, pause));
  // Under --expose-gc the block starts from a collected heap, so the collections inside it are its own.
  (globalThis as { gc?: () => void }).gc?.();
  console.log(`measuring ${streams} streams of ${CHUNKS} chunks (${only})`);
  if (pause) await idle();
  const cpu = threadCpu();
  await block(v, streams);
  const t = threadSplit(cpu, threadCpu());
  console.log("measured");
  if (pause) await idle();
  const per = streams * CHUNKS;
  console.log(
    `  CPU per chunk: main ${(t.main / per).toFixed(3)} µs, V8 helpers ${(t.v8 / per).toFixed(3)}, libuv pool ${(t.pool / per).toFixed(3)}`,
  );
  await v.shutdown();
  const tally = (await (await fetch(`${capture.url}/count?key=stream-counters-${only}`)).json()) as { runs: number; requests: number };
  console.log(`  at the server: ${tally.runs} runs in ${tally.requests} requests`);
  capture.proc.kill("SIGTERM");
  rmSync(spool, { recursive: true, force: true });
  process.exit(0);
}

// GC entries arrive on a later turn: each is charged to the block that was running when it started.
const blocks: { name: string; from: number; to: number }[] = [];
const gcEntries: { at: number; kind: number | undefined; ms: number }[] = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries())
    gcEntries.push({ at: e.startTime, kind: (e as unknown as { detail?: { kind?: number } }).detail?.kind, ms: e.duration });
}).observe({ entryTypes: ["gc"] });

const names = Object.keys(variants);
const cpu = Object.fromEntries(names.map((n) => [n, [] as ThreadSplit[]]));
for (let round = 0; round < ROUNDS + WARMUP; round++) {
  for (let k = 0; k < names.length; k++) {
    const name = names[(k + round) % names.length]!;
    const before = threadCpu();
    const from = performance.now();
    await block(variants[name]!, STREAMS);
    const t = threadSplit(before, threadCpu());
    if (round >= WARMUP) {
      cpu[name]!.push(t);
      blocks.push({ name, from, to: performance.now() });
    }
  }
}
// GC entries arrive on a later turn.
await new Promise((r) => setTimeout(r, 50));
const per = STREAMS * CHUNKS;
const chunksMeasured = ROUNDS * per;
const m = (name: string, f: (t: ThreadSplit) => number) => median(cpu[name]!.map((t) => f(t) / per));
const groups: [string, (t: ThreadSplit) => number][] = [
  ["all threads", (t) => t.main + t.v8 + t.pool],
  ["main thread", (t) => t.main],
  ["V8 helpers", (t) => t.v8],
  ["libuv pool", (t) => t.pool],
];
console.log(
  `stream-counters: ${ROUNDS} rounds x ${STREAMS} streams of ${CHUNKS} chunks per variant (openai client, in-memory fetch), taking turns; medians over rounds`,
);
console.log(`  CPU per chunk, µs       ${names.map((n) => n.padStart(10)).join(" ")}   added: ${names.slice(1).join(", ")}`);
for (const [label, f] of groups) {
  const u = m("unwrapped", f);
  console.log(
    `    ${label.padEnd(20)} ${names.map((n) => m(n, f).toFixed(3).padStart(10)).join(" ")}   ${names
      .slice(1)
      .map((n) => (m(n, f) - u).toFixed(3))
      .join(", ")}`,
  );
}
const gc = new Map(names.map((n) => [n, { minor: 0, major: 0, pauseMs: 0 }]));
for (const e of gcEntries) {
  const b = blocks.find((x) => e.at >= x.from && e.at < x.to);
  if (!b) continue;
  const g = gc.get(b.name)!;
  if (e.kind === constants.NODE_PERFORMANCE_GC_MINOR) g.minor++;
  else if (e.kind === constants.NODE_PERFORMANCE_GC_MAJOR) g.major++;
  g.pauseMs += e.ms;
}
for (const n of names) {
  const g = gc.get(n)!;
  console.log(
    `  GC ${n.padEnd(10)} per 1,000 chunks: ${((g.minor * 1000) / chunksMeasured).toFixed(2)} scavenges, ${((g.major * 1000) / chunksMeasured).toFixed(3)} mark-compacts; main-thread pause ${((g.pauseMs * 1000) / chunksMeasured).toFixed(3)} µs per chunk`,
  );
}

// Bytes allocated per chunk, freed objects included; tracepipe's own share by function.
interface AllocNode {
  selfSize: number;
  callFrame: { url: string; functionName: string; lineNumber: number; columnNumber: number };
  children: AllocNode[];
}
const session = new Session();
session.connect();
const ALLOC_ROUNDS = 5;
for (const name of names) {
  const v = variants[name]!;
  await session.post("HeapProfiler.startSampling", {
    samplingInterval: 128,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  } as never);
  for (let r = 0; r < ALLOC_ROUNDS; r++) await block(v, STREAMS);
  const { profile } = (await session.post("HeapProfiler.stopSampling")) as unknown as { profile: { head: AllocNode } };
  let total = 0;
  const own = new Map<string, number>();
  const walk = (n: AllocNode, ours: string | undefined) => {
    const url = sourceOf(n.callFrame.url, n.callFrame.lineNumber, n.callFrame.columnNumber);
    // Charged to the nearest frame of a file: tracepipe's own code when that is one of its files (what it called
    // in node or V8 allocated on its behalf; an SDK function it calls, the SDK's stream, allocates for the SDK).
    const here = !url
      ? ours
      : url.includes("/dist/")
        ? `${url.slice(url.indexOf("/dist/") + 6)} ${n.callFrame.functionName || "(anonymous)"}`
        : url.startsWith("node:")
          ? ours
          : undefined;
    total += n.selfSize;
    if (here !== undefined) own.set(here, (own.get(here) ?? 0) + n.selfSize);
    for (const c of n.children) walk(c, here);
  };
  walk(profile.head, undefined);
  const chunks = ALLOC_ROUNDS * per;
  const ownTotal = [...own.values()].reduce((a, b) => a + b, 0);
  console.log(
    `  allocated ${name.padEnd(10)} ${(total / chunks).toFixed(0)} B per chunk (sampled), of which under tracepipe's frames ${(ownTotal / chunks).toFixed(0)} B`,
  );
  const top = [...own.entries()].sort((a, b) => b[1] - a[1]).slice(0, 8);
  for (const [fn, b] of top) console.log(`      ${(b / chunks).toFixed(1).padStart(7)} B  ${fn}`);
}
session.disconnect();
for (const v of Object.values(variants)) await v.shutdown();
capture.proc.kill("SIGTERM");
rmSync(spool, { recursive: true, force: true });
process.exit(0);
