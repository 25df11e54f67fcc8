/**
 * Wrapper overhead: what tracing adds to a call's latency, for tracepipe's
 * wrapOpenAI and the `langsmith` package's wrapOpenAI, over the same real
 * `openai` client talking to the same fake vendor (benchmarks/overhead-upstream.ts,
 * its own process). Both tracers deliver to the same local collector (its own
 * process, limits off), so background delivery is part of what is measured.
 *
 * Calls are sequential and the variants interleave round by round, so machine
 * noise falls on all three alike; each segment ends by draining its tracer, so
 * delivery CPU is charged to the tracer that caused it. Reported: median added
 * latency per call (wrapped minus unwrapped) and per streamed chunk, added CPU
 * time per call and per chunk (steadier than wall time on a shared machine), the ratio
 * tracepipe/langsmith (target <= 0.5x; <= 2 µs per chunk), peak RSS, and the
 * runs each tracer got into the collector (a tracer that drops runs cannot win).
 *
 *   npx tsx benchmarks/overhead.ts              # 9 rounds
 *   npx tsx benchmarks/overhead.ts --quick      # 3 rounds
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import OpenAI from "openai";
import { loadBuilt } from "./load.js";

const root = fileURLToPath(new URL("../", import.meta.url));
const quick = process.argv.includes("--quick");
const ROUNDS = quick ? 3 : 9;
const CALLS = 200; // non-streamed calls per variant per round
const STREAMS = 40; // streamed calls per variant per round
const CHUNKS = 200; // chunks per stream

function child(args: string[]): Promise<{ proc: ChildProcess; url: string }> {
  const proc = spawn(process.execPath, ["--import", "tsx", ...args], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    proc.stdout!.setEncoding("utf8").on("data", (d: string) => {
      const m = /listening on (http:\/\/\S+)/.exec(d);
      if (m) resolve({ proc, url: m[1]! });
    });
    proc.on("exit", (code) => reject(new Error(`${args[0]} exited ${code}`)));
  });
}

const dbPath = join(mkdtempSync(join(tmpdir(), "tp-bench-overhead-db-")), "traces.db");
const collector = await child([join(root, "src/cli/run.ts"), "serve", "--port", "0", "--db", dbPath, "--no-rate-limit"]);
const upstream = await child([join(root, "benchmarks/overhead-upstream.ts"), String(CHUNKS)]);

const tp = await loadBuilt<typeof import("../src/index.js")>("src/index.js");
const { wrapOpenAI: lsWrapOpenAI } = await import("langsmith/wrappers/openai");
const { Client: LsClient } = await import("langsmith");

const openai = () => new OpenAI({ apiKey: "sk-bench", baseURL: `${upstream.url}/v1`, maxRetries: 0 });
const spool = mkdtempSync(join(tmpdir(), "tp-bench-overhead-"));
const tpClient = new tp.Client({ endpoint: collector.url, apiKey: "bench", project: "overhead-tracepipe", spoolDir: join(spool, "spool"), deadLetterPath: join(spool, "dl.jsonl"), exitHooks: false });
const lsClient = new LsClient({ apiUrl: collector.url, apiKey: "bench", autoBatchTracing: true });

type Chat = Pick<OpenAI, "chat">;
const variants: Record<string, Chat> = {
  unwrapped: openai(),
  tracepipe: tp.wrapOpenAI(openai(), { client: tpClient }),
  langsmith: lsWrapOpenAI(openai(), { client: lsClient, tracingEnabled: true, project_name: "overhead-langsmith" }) as Chat,
};
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
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

const perRound: Record<string, { call: number[]; stream: number[]; callMean: number[]; cpuCall: number[]; cpuStream: number[] }> = {};
for (const name of Object.keys(variants)) perRound[name] = { call: [], stream: [], callMean: [], cpuCall: [], cpuStream: [] };
/** Deliver what a tracer still holds, so its background CPU is charged to its own segment. */
const drain: Record<string, () => Promise<void>> = { unwrapped: async () => {}, tracepipe: async () => void (await tpClient.flush()), langsmith: () => lsClient.awaitPendingTraceBatches() };
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
console.log(`overhead benchmark: openai client -> fake vendor ${upstream.url}; tracers -> collector ${collector.url}`);
console.log(`  ${ROUNDS} rounds x (${CALLS} calls + ${STREAMS} streams of ${CHUNKS} chunks) per variant, interleaved; round 0 is warm-up`);
for (let round = 0; round <= ROUNDS; round++) {
  for (const [name, c] of Object.entries(variants)) {
    const calls: number[] = [];
    let cpu = cpuMs();
    for (let i = 0; i < CALLS; i++) calls.push(await oneCall(c));
    await drain[name]!();
    const cpuCall = (cpuMs() - cpu) / CALLS;
    const streams: number[] = [];
    cpu = cpuMs();
    for (let i = 0; i < STREAMS; i++) streams.push(await oneStream(c));
    await drain[name]!();
    const cpuStream = (cpuMs() - cpu) / STREAMS;
    if (round > 0) {
      perRound[name]!.call.push(median(calls));
      perRound[name]!.callMean.push(calls.reduce((a, b) => a + b, 0) / calls.length);
      perRound[name]!.cpuCall.push(cpuCall);
      perRound[name]!.cpuStream.push(cpuStream);
      perRound[name]!.stream.push(median(streams));
    }
  }
}

const added = (name: string, kind: "call" | "stream" | "callMean" | "cpuCall" | "cpuStream") => median(perRound[name]!.call.map((_, i) => perRound[name]![kind][i]! - perRound.unwrapped![kind][i]!));
const base = { call: median(perRound.unwrapped!.call), stream: median(perRound.unwrapped!.stream) };
console.log(`  unwrapped: ${(base.call * 1000).toFixed(0)} µs per call, ${(base.stream * 1000).toFixed(0)} µs per ${CHUNKS}-chunk stream (medians)`);
const rows: Record<string, { call: number; mean: number; chunk: number; cpuCall: number; cpuChunk: number }> = {};
for (const name of ["tracepipe", "langsmith"]) {
  rows[name] = { call: added(name, "call") * 1000, mean: added(name, "callMean") * 1000, chunk: (added(name, "stream") * 1000) / CHUNKS, cpuCall: added(name, "cpuCall") * 1000, cpuChunk: (added(name, "cpuStream") * 1000) / CHUNKS };
  console.log(`  ${name.padEnd(9)}: +${rows[name]!.call.toFixed(0).padStart(5)} µs per call (median), +${rows[name]!.mean.toFixed(0).padStart(5)} µs (mean, background delivery included)   +${rows[name]!.chunk.toFixed(2).padStart(6)} µs per streamed chunk`);
}
console.log(`  -> ratio tracepipe/langsmith added latency per call: median ${(rows.tracepipe!.call / rows.langsmith!.call).toFixed(2)}x, mean ${(rows.tracepipe!.mean / rows.langsmith!.mean).toFixed(2)}x (target <= 0.5x)`);
console.log(`  -> ratio tracepipe/langsmith added latency per chunk: ${(rows.tracepipe!.chunk / rows.langsmith!.chunk).toFixed(2)}x; tracepipe ${rows.tracepipe!.chunk.toFixed(2)} µs/chunk (target <= 2 µs)`);
const marginal = (name: string) => (rows[name]!.chunk * CHUNKS - rows[name]!.call) / CHUNKS;
console.log(`  per chunk beyond the per-call cost ((stream added - call added) / ${CHUNKS}): tracepipe ${marginal("tracepipe").toFixed(2)} µs, langsmith ${marginal("langsmith").toFixed(2)} µs`);
for (const name of ["tracepipe", "langsmith"]) console.log(`  ${name.padEnd(9)}: +${rows[name]!.cpuCall.toFixed(0).padStart(5)} µs CPU per call, +${rows[name]!.cpuChunk.toFixed(2).padStart(6)} µs CPU per streamed chunk (delivery included)`);
console.log(`  -> ratio tracepipe/langsmith added CPU: per call ${(rows.tracepipe!.cpuCall / rows.langsmith!.cpuCall).toFixed(2)}x, per chunk ${(rows.tracepipe!.cpuChunk / rows.langsmith!.cpuChunk).toFixed(2)}x`);

await tpClient.flush();
await lsClient.awaitPendingTraceBatches();
await tpClient.shutdown();
const { openStore } = await loadBuilt<typeof import("../src/server/index.js")>("src/server/index.js");
const store = openStore(dbPath);
const expected = (ROUNDS + 1) * (CALLS + STREAMS);
console.log(`  runs in the collector: tracepipe ${store.countRuns("overhead-tracepipe")}/${expected}, langsmith ${store.countRuns("overhead-langsmith")}/${expected}`);
console.log(`  peak RSS of this process (all three variants): ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`);
store.close();
collector.proc.kill("SIGTERM");
upstream.proc.kill("SIGTERM");
