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
 * when the machine is busy); runs each tracer got to the server; peak RSS.
 *
 *   npx tsx benchmarks/overhead.ts            # 40 rounds
 *   npx tsx benchmarks/overhead.ts --quick    # 10 rounds
 */
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import OpenAI from "openai";
import { cpuMs, median, peakRssMiB, quantile, startChild } from "./stats.js";

const root = fileURLToPath(new URL("../", import.meta.url));
const quick = process.argv.includes("--quick");
const ROUNDS = quick ? 10 : 40;
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
const tpClient = new tp.Client({ endpoint: capture.url, apiKey: "overhead-tracepipe", project: "overhead-tracepipe", spoolDir: join(spool, "spool"), deadLetterPath: join(spool, "dl.jsonl"), exitHooks: false });
const lsClient = new LsClient({ apiUrl: capture.url, apiKey: "overhead-langsmith", autoBatchTracing: true });

type Chat = Pick<OpenAI, "chat">;
const names = ["unwrapped", "tracepipe", "langsmith"] as const;
type Name = (typeof names)[number];
const variants: Record<Name, Chat> = {
  unwrapped: openai(),
  tracepipe: tp.wrapOpenAI(openai(), { client: tpClient }),
  langsmith: lsWrapOpenAI(openai(), { client: lsClient, tracingEnabled: true, project_name: "overhead-langsmith" }) as Chat,
};
/** Deliver what a tracer still holds, so its background CPU is charged to its own block. */
const drain: Record<Name, () => Promise<void>> = { unwrapped: async () => {}, tracepipe: async () => void (await tpClient.flush()), langsmith: () => lsClient.awaitPendingTraceBatches() };
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

/** Per round and variant, in µs: median call latency, median stream latency, CPU per call, CPU per stream. */
type Round = { call: number; stream: number; cpuCall: number; cpuStream: number };
const rounds: Record<Name, Round[]> = { unwrapped: [], tracepipe: [], langsmith: [] };
/** Every measured call and stream latency, in µs: the pooled median is steadier than per-round differences when the machine is busy. */
const pooled: Record<Name, { call: number[]; stream: number[] }> = { unwrapped: { call: [], stream: [] }, tracepipe: { call: [], stream: [] }, langsmith: { call: [], stream: [] } };

console.log(`overhead benchmark (compiled code): openai client -> fake vendor ${upstream.url}; tracers -> capture server ${capture.url} (own processes)`);
console.log(`  ${ROUNDS} rounds x (${CALLS} calls + ${STREAMS} streams of ${CHUNKS} chunks) per variant, rotating order; round 0 is warm-up`);
for (let round = 0; round <= ROUNDS; round++) {
  for (let k = 0; k < names.length; k++) {
    const name = names[(k + round) % names.length]!;
    const c = variants[name];
    const calls: number[] = [];
    let cpu = cpuMs();
    for (let i = 0; i < CALLS; i++) calls.push(await oneCall(c));
    await drain[name]();
    const cpuCall = ((cpuMs() - cpu) * 1000) / CALLS;
    const streams: number[] = [];
    cpu = cpuMs();
    for (let i = 0; i < STREAMS; i++) streams.push(await oneStream(c));
    await drain[name]();
    const cpuStream = ((cpuMs() - cpu) * 1000) / STREAMS;
    if (round > 0) {
      rounds[name].push({ call: median(calls) * 1000, stream: median(streams) * 1000, cpuCall, cpuStream });
      for (const t of calls) pooled[name].call.push(t * 1000);
      for (const t of streams) pooled[name].stream.push(t * 1000);
    }
  }
}

const added = (name: Name, f: (r: Round) => number) => rounds[name].map((r, i) => f(r) - f(rounds.unwrapped[i]!));
const iqr = (xs: number[], d: number) => `${median(xs).toFixed(d).padStart(7)} (IQR ${quantile(xs, 0.25).toFixed(d)}–${quantile(xs, 0.75).toFixed(d)})`;
const metrics: [string, (r: Round) => number, number][] = [
  ["latency per call, µs", (r) => r.call, 0],
  ["latency per chunk, µs", (r) => r.stream / CHUNKS, 2],
  ["CPU per call, µs", (r) => r.cpuCall, 0],
  ["CPU per chunk, µs", (r) => r.cpuStream / CHUNKS, 2],
];
const u = rounds.unwrapped;
console.log(`  unwrapped: ${median(u.map((r) => r.call)).toFixed(0)} µs per call, ${median(u.map((r) => r.stream)).toFixed(0)} µs per stream, CPU ${median(u.map((r) => r.cpuCall)).toFixed(0)} µs per call (medians over rounds)`);
const summary: string[] = [];
for (const [label, f, d] of metrics) {
  const t = added("tracepipe", f);
  const l = added("langsmith", f);
  const ratio = median(t) / median(l);
  summary.push(`${label.split(",")[0]} ${ratio.toFixed(2)}x`);
  console.log(`  added ${label.padEnd(22)} tracepipe ${iqr(t, d)}   langsmith ${iqr(l, d)}   -> ratio ${ratio.toFixed(2)}x`);
}
const pooledAdded = (name: Name, k: "call" | "stream") => median(pooled[name][k]) - median(pooled.unwrapped[k]);
console.log(
  `  pooled medians (all ${ROUNDS * CALLS} calls, ${ROUNDS * STREAMS} streams per variant): added per call tracepipe ${pooledAdded("tracepipe", "call").toFixed(0)} µs, langsmith ${pooledAdded("langsmith", "call").toFixed(0)} µs -> ${(pooledAdded("tracepipe", "call") / pooledAdded("langsmith", "call")).toFixed(2)}x;` +
    ` per chunk tracepipe ${(pooledAdded("tracepipe", "stream") / CHUNKS).toFixed(2)} µs, langsmith ${(pooledAdded("langsmith", "stream") / CHUNKS).toFixed(2)} µs -> ${(pooledAdded("tracepipe", "stream") / pooledAdded("langsmith", "stream")).toFixed(2)}x`,
);
const marginal = (name: Name) => median(rounds[name].map((r, i) => (r.stream - u[i]!.stream - (r.call - u[i]!.call)) / CHUNKS));
console.log(`  per chunk beyond the per-call cost ((stream added - call added) / ${CHUNKS}): tracepipe ${marginal("tracepipe").toFixed(2)} µs, langsmith ${marginal("langsmith").toFixed(2)} µs (target <= 2 µs)`);

await tpClient.shutdown();
await lsClient.awaitPendingTraceBatches();
const count = async (key: string) => ((await (await fetch(`${capture.url}/count?key=${key}`)).json()) as { runs: number }).runs;
const expected = (ROUNDS + 1) * (CALLS + STREAMS);
console.log(`  runs at the server: tracepipe ${await count("overhead-tracepipe")}/${expected}, langsmith ${await count("overhead-langsmith")}/${expected}`);
console.log(`  peak RSS of this process (all three variants): ${peakRssMiB().toFixed(0)} MiB`);
console.log(`  summary (tracepipe/langsmith, medians): ${summary.join(", ")}`);
capture.proc.kill("SIGTERM");
upstream.proc.kill("SIGTERM");
