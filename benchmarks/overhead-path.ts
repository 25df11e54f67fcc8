/**
 * The part of a traced call's cost that sits on the caller's path, in this
 * process, with no network: CPU from `create()` being called to the request
 * leaving (the wrapper's start) plus from the reply being parsed to the
 * caller resuming (its end), per non-streamed call, for this build and
 * another (`--ab DIR`), interleaved. Work the wrapper defers (run/deferred.ts)
 * is timed apart. On a busy machine the minimum over rounds is the steady
 * figure (a round can only be slowed by other jobs, never sped up).
 *
 *   npx tsx benchmarks/overhead-path.ts --ab ../before   # DIR with its own dist/
 *   npx tsx benchmarks/overhead-path.ts --ab ../before --before-first
 *
 * Both builds write to a Client whose sink accepts every batch, so queueing
 * costs what it costs and nothing is sent. Then the bytes each build allocates
 * per call (sampled; the garbage collector's work grows with them).
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Session } from "node:inspector/promises";
import { median } from "./stats.js";

const root = fileURLToPath(new URL("../", import.meta.url));
const abAt = process.argv.indexOf("--ab");
/** `--before-first`: load DIR's build first (in one process the build loaded first times slower, whichever it is). */
const beforeFirst = process.argv.includes("--before-first") && abAt > 0 && process.argv[abAt + 1] !== undefined;
const roots: Record<string, string> = beforeFirst ? { before: process.argv[abAt + 1]!, tracepipe: root } : { tracepipe: root };
if (abAt > 0 && process.argv[abAt + 1]) roots.before = process.argv[abAt + 1]!;
const ROUNDS = 40;
const WARMUP = 5;
const CALLS = 200;

const body = {
  model: "gpt-4o-mini",
  messages: [
    { role: "system", content: "You are a terse geography assistant." },
    { role: "user", content: "What is the capital of France? Answer in one sentence." },
  ],
  temperature: 0,
};
const reply = JSON.stringify({
  id: "chatcmpl-bench",
  object: "chat.completion",
  created: 1700000000,
  model: "gpt-4o-mini-2024-07-18",
  choices: [
    {
      index: 0,
      message: { role: "assistant", content: "The capital of France is Paris.", refusal: null, annotations: [] },
      logprobs: null,
      finish_reason: "stop",
    },
  ],
  usage: { prompt_tokens: 30, completion_tokens: 8, total_tokens: 38, prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 } },
  system_fingerprint: "fp_bench",
});

interface Variant {
  call: () => { succeed(v: unknown): void };
  runDeferred: () => void;
  flush: () => Promise<unknown>;
  path: number[];
  deferred: number[];
}
const variants: Record<string, Variant> = {};
for (const [name, dir] of Object.entries(roots)) {
  const { LlmCall } = (await import(join(dir, "dist/src/tracing/llm.js"))) as typeof import("../src/tracing/llm.js");
  const { Client } = (await import(join(dir, "dist/src/index.js"))) as typeof import("../src/index.js");
  const { openaiChat } = (await import(join(dir, "dist/adapters/index.js"))) as typeof import("../adapters/index.js");
  // A build without deferred building has nothing to run later.
  const deferred = await import(join(dir, "dist/src/run/deferred.js")).catch(() => undefined);
  const sink = {
    target: "null",
    encodesRuns: true,
    send: async (ops: { run: unknown }[]) => void ops.map((op) => op.run),
    limits: async () => ({ batchSize: 100_000, batchBytes: 1e9 }),
    close: async () => {},
  };
  const client = new Client({ sink, flushIntervalMs: 1e9, exitHooks: false, warn: () => {} } as ConstructorParameters<typeof Client>[0]);
  variants[name] = {
    call: () => new LlmCall(openaiChat, "openai", body, client, {}, "ChatOpenAI"),
    runDeferred: (deferred as { runDeferred?: () => void } | undefined)?.runDeferred ?? (() => {}),
    flush: () => client.flush(),
    path: [],
    deferred: [],
  };
}

const names = Object.keys(variants);
for (let round = 0; round < ROUNDS + WARMUP; round++) {
  for (let k = 0; k < names.length; k++) {
    const v = variants[names[(k + round) % names.length]!]!;
    // The reply as the SDK hands it over: parsed afresh per call, outside the timing.
    const replies = Array.from({ length: CALLS }, () => JSON.parse(reply) as unknown);
    const t0 = performance.now();
    for (let i = 0; i < CALLS; i++) v.call().succeed(replies[i]);
    const t1 = performance.now();
    v.runDeferred();
    const t2 = performance.now();
    if (round >= WARMUP) {
      v.path.push(((t1 - t0) * 1000) / CALLS);
      v.deferred.push(((t2 - t1) * 1000) / CALLS);
    }
    await v.flush();
  }
}
console.log(`overhead-path: ${ROUNDS} rounds x ${CALLS} non-streamed calls per build, interleaved; µs per call`);
for (const name of names) {
  const v = variants[name]!;
  console.log(
    `  ${name.padEnd(10)} on the caller's path: min ${Math.min(...v.path).toFixed(2)}, median ${median(v.path).toFixed(2)}; deferred: min ${Math.min(...v.deferred).toFixed(2)}, median ${median(v.deferred).toFixed(2)}`,
  );
}
if (variants.before)
  console.log(
    `  tracepipe/before on the caller's path (minimums): ${(Math.min(...variants.tracepipe!.path) / Math.min(...variants.before.path)).toFixed(2)}x`,
  );

// Bytes allocated per call by the wrapper and the client (path, deferred build, queueing, flush), from V8's
// sampling heap profiler counting objects a collection already freed: what the garbage collector pays for.
const ALLOC_ROUNDS = 10;
const session = new Session();
session.connect();
const allocated: Record<string, number> = {};
for (const name of names) {
  const v = variants[name]!;
  const replies = Array.from({ length: ALLOC_ROUNDS * CALLS }, () => JSON.parse(reply) as unknown);
  await session.post("HeapProfiler.startSampling", {
    samplingInterval: 256,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  } as never);
  for (let r = 0; r < ALLOC_ROUNDS; r++) {
    for (let i = 0; i < CALLS; i++) v.call().succeed(replies[r * CALLS + i]);
    v.runDeferred();
    await v.flush();
  }
  const { profile } = (await session.post("HeapProfiler.stopSampling")) as unknown as { profile: { head: AllocNode } };
  allocated[name] = sumAllocated(profile.head) / (ALLOC_ROUNDS * CALLS);
}
session.disconnect();
console.log(
  `  allocated per call (sampled): ${names.map((n) => `${n} ${(allocated[n]! / 1024).toFixed(1)} KiB`).join(", ")}${allocated.before ? ` -> tracepipe/before ${(allocated.tracepipe! / allocated.before).toFixed(2)}x` : ""}`,
);
process.exit(0);

interface AllocNode {
  selfSize: number;
  callFrame: { url: string };
  children: AllocNode[];
}
/** Bytes sampled in tracepipe's own code and what it called (the benchmark's own parsing left out). */
function sumAllocated(n: AllocNode): number {
  let bytes = n.callFrame.url.includes("/benchmarks/") ? 0 : n.selfSize;
  for (const c of n.children) bytes += sumAllocated(c);
  return bytes;
}
