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
 * costs what it costs and nothing is sent (the sink serializes each run as
 * the HTTP sink's encoder would, unless it was encoded at hand-over already).
 * Then the bytes each build allocates per call (sampled; the garbage
 * collector's work grows with them).
 *
 * Then streamed calls: STREAMS streams of CHUNKS chat.completion.chunk objects
 * (parsed afresh per stream, outside the timing) read through the wrapper's
 * iterator from an async generator, as the SDK's Stream hands them over, and
 * the same chunks read unwrapped in the same round: the difference per chunk
 * is what the wrapper adds to reading a chunk (a promise step and the
 * accumulator's fold), the stream's start and end included, spread over its
 * chunks. The deferred build and the flush of a stream's run are timed apart,
 * per stream; then the bytes each build allocates per chunk, all included.
 *
 * Then whole calls through the real `openai` client over a fetch that answers
 * from memory, one event-loop turn per call (as a reply over a network arrives
 * in a later turn): the CPU each build adds per call, its deferred build
 * wherever it lands, queueing and flushing included, against the unwrapped
 * client in the same round. No network and no other process: steadier than
 * benchmarks/overhead.ts when the machine is busy.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Session } from "node:inspector/promises";
import OpenAI from "openai";
import { cpuMs, median } from "./stats.js";

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

const STREAMS = 20;
const CHUNKS = 200;
const chunkText = (delta: object, finish: string | null) =>
  JSON.stringify({
    id: "chatcmpl-bench",
    object: "chat.completion.chunk",
    created: 1700000000,
    model: "gpt-4o-mini-2024-07-18",
    system_fingerprint: "fp_bench",
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
const words = ["Par", "is", " is", " the", " capital", " of", " France", "."];
const chunkTexts = [chunkText({ role: "assistant", content: "", refusal: null }, null)];
for (let i = 0; i < CHUNKS - 2; i++) chunkTexts.push(chunkText({ content: words[i % words.length] }, null));
chunkTexts.push(chunkText({}, "stop"));
const streamBody = { model: body.model, messages: body.messages, stream: true };
/** The chunks as the SDK's Stream yields them: each parsed, one per step of an async generator. */
async function* chunksOf(parsed: unknown[]): AsyncGenerator<unknown> {
  for (const c of parsed) yield c;
}
async function readAll(it: AsyncIterator<unknown>): Promise<void> {
  let n = 0;
  for await (const _ of { [Symbol.asyncIterator]: () => it }) n++;
  if (n !== CHUNKS) throw new Error(`expected ${CHUNKS} chunks, got ${n}`);
}

/**
 * The `openai` client with a fetch that answers from memory: the SDK's whole path (request building,
 * fetch, body parsing) runs, with no network and no other process, so only this process's CPU counts.
 */
type SdkClient = Pick<OpenAI, "chat">;
const sdkClient = (): SdkClient =>
  new OpenAI({
    apiKey: "sk-bench",
    baseURL: "http://127.0.0.1:9/v1",
    maxRetries: 0,
    fetch: (async () => new Response(reply, { status: 200, headers: { "content-type": "application/json" } })) as typeof fetch,
  });

interface Variant {
  /** The real `openai` client over an in-memory fetch, wrapped by this build (writing to the same Client). */
  sdk: SdkClient;
  call: () => { succeed(v: unknown): void };
  stream: () => { wrapIterator(it: AsyncIterator<unknown>): AsyncIterator<unknown> };
  /** This build's chat-chunk accumulator, folded alone over the same chunks: the fold's share of a chunk's cost. */
  accumulator: () => { push(chunk: unknown): boolean; result(): unknown };
  runDeferred: () => void;
  flush: () => Promise<unknown>;
  path: number[];
  deferred: number[];
  /** Per round: µs per chunk reading wrapped streams, and µs per stream for their deferred build and flush. */
  read: number[];
  streamBuild: number[];
  /** Per round: µs per chunk folding the chunks alone, and µs per stream reading the fold into a result. */
  fold: number[];
  result: number[];
}
const variants: Record<string, Variant> = {};
for (const [name, dir] of Object.entries(roots)) {
  const { LlmCall } = (await import(join(dir, "dist/src/tracing/llm.js"))) as typeof import("../src/tracing/llm.js");
  const { Client } = (await import(join(dir, "dist/src/index.js"))) as typeof import("../src/index.js");
  const { openaiChat } = (await import(join(dir, "dist/adapters/index.js"))) as typeof import("../adapters/index.js");
  const { wrapOpenAI } = (await import(join(dir, "dist/src/index.js"))) as typeof import("../src/index.js");
  // A build without deferred building has nothing to run later.
  const deferred = await import(join(dir, "dist/src/run/deferred.js")).catch(() => undefined);
  const sink = {
    target: "null",
    encodesRuns: true,
    // What HttpSink's encoder costs, without the body: a run held encoded is written from its bytes as they are,
    // any other is serialized (reading `run` of one held encoded would decode it, work no real sink does).
    send: async (ops: { run: unknown; encoded?: unknown }[]) => {
      for (const op of ops) if (op.encoded === undefined) JSON.stringify(op.run);
    },
    limits: async () => ({ batchSize: 100_000, batchBytes: 1e9 }),
    close: async () => {},
  };
  const client = new Client({ sink, flushIntervalMs: 1e9, exitHooks: false, warn: () => {} } as ConstructorParameters<typeof Client>[0]);
  variants[name] = {
    sdk: wrapOpenAI(sdkClient(), { client }),
    call: () => new LlmCall(openaiChat, "openai", body, client, {}, "ChatOpenAI"),
    stream: () => new LlmCall(openaiChat, "openai", streamBody, client, {}, "ChatOpenAI"),
    accumulator: () => openaiChat.createStreamAccumulator({ request: streamBody }),
    runDeferred: (deferred as { runDeferred?: () => void } | undefined)?.runDeferred ?? (() => {}),
    flush: () => client.flush(),
    path: [],
    deferred: [],
    read: [],
    streamBuild: [],
    fold: [],
    result: [],
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

// Streamed calls: each build's rounds and the unwrapped reads of the same chunks take turns.
const unwrappedRead: number[] = [];
const parsedStreams = () => Array.from({ length: STREAMS }, () => chunkTexts.map((t) => JSON.parse(t) as unknown));
for (let round = 0; round < ROUNDS + WARMUP; round++) {
  for (let k = 0; k <= names.length; k++) {
    const name = k === names.length ? undefined : names[(k + round) % names.length]!;
    const v = name === undefined ? undefined : variants[name]!;
    const streams = parsedStreams();
    const t0 = performance.now();
    for (let i = 0; i < STREAMS; i++) {
      const source = chunksOf(streams[i]!);
      await readAll(v ? v.stream().wrapIterator(source) : source);
    }
    const t1 = performance.now();
    if (v) {
      v.runDeferred();
      await v.flush();
    }
    const t2 = performance.now();
    // The same chunks folded again by a fresh accumulator each, with no iterator around them: the fold alone.
    const accs = v ? streams.map(() => v.accumulator()) : [];
    const t3 = performance.now();
    for (let i = 0; i < accs.length; i++) for (const c of streams[i]!) accs[i]!.push(c);
    const t4 = performance.now();
    for (const a of accs) a.result();
    const t5 = performance.now();
    if (round < WARMUP) continue;
    const perChunk = ((t1 - t0) * 1000) / (STREAMS * CHUNKS);
    if (v) {
      v.read.push(perChunk);
      v.streamBuild.push(((t2 - t1) * 1000) / STREAMS);
      v.fold.push(((t4 - t3) * 1000) / (STREAMS * CHUNKS));
      v.result.push(((t5 - t4) * 1000) / STREAMS);
    } else unwrappedRead.push(perChunk);
  }
}
console.log(
  `overhead-path, streamed: ${ROUNDS} rounds x ${STREAMS} streams of ${CHUNKS} chunks per build and unwrapped, interleaved; unwrapped read min ${Math.min(...unwrappedRead).toFixed(3)} µs per chunk`,
);
for (const name of names) {
  const v = variants[name]!;
  // Added per chunk: each round's read minus the unwrapped read of the same round.
  const added = v.read.map((r, i) => r - unwrappedRead[i]!);
  console.log(
    `  ${name.padEnd(10)} added per chunk read: min ${(Math.min(...v.read) - Math.min(...unwrappedRead)).toFixed(3)} (of the minimums), median ${median(added).toFixed(3)}; deferred build and flush per stream: min ${Math.min(...v.streamBuild).toFixed(1)}, median ${median(v.streamBuild).toFixed(1)}`,
  );
  // Where a chunk's added cost goes: the fold (the accumulator alone), the rest being the step around it (a
  // reaction on the SDK's promise); and the stream's one reading of its fold into a result (in its deferred build).
  console.log(
    `  ${"".padEnd(10)} of which the fold alone: min ${Math.min(...v.fold).toFixed(3)}, median ${median(v.fold).toFixed(3)} µs per chunk; reading the fold into a result: min ${Math.min(...v.result).toFixed(1)}, median ${median(v.result).toFixed(1)} µs per stream`,
  );
}

// Whole calls through the SDK, one turn of the event loop per call (a reply arrives in a later turn, as over a
// network): the caller's path, the deferred build wherever it lands, queueing and flushing, beside the SDK's own
// work, against the unwrapped client in the same round. CPU of this process per call.
const SDK_ROUNDS = 30;
const SDK_CALLS = 50;
const unwrappedSdk = sdkClient();
const sdkCpu: Record<string, number[]> = Object.fromEntries([...names, "unwrapped"].map((n) => [n, [] as number[]]));
for (let round = 0; round < SDK_ROUNDS + WARMUP; round++) {
  for (let k = 0; k <= names.length; k++) {
    const name = [...names, "unwrapped"][(k + round) % (names.length + 1)]!;
    const v = variants[name];
    const c = v ? v.sdk : unwrappedSdk;
    const cpu = cpuMs();
    for (let i = 0; i < SDK_CALLS; i++) {
      await c.chat.completions.create(body as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming);
      await new Promise((r) => setImmediate(r));
    }
    if (v) await v.flush();
    if (round >= WARMUP) sdkCpu[name]!.push(((cpuMs() - cpu) * 1000) / SDK_CALLS);
  }
}
const sdkAdded = (name: string) => median(sdkCpu[name]!.map((x, i) => x - sdkCpu.unwrapped![i]!));
console.log(
  `overhead-path, through the SDK: ${SDK_ROUNDS} rounds x ${SDK_CALLS} calls over an in-memory fetch, a turn per call; unwrapped CPU ${median(sdkCpu.unwrapped!).toFixed(1)} µs per call`,
);
for (const name of names) console.log(`  ${name.padEnd(10)} added CPU per call: median ${sdkAdded(name).toFixed(1)} µs`);
if (variants.before)
  console.log(`  tracepipe/before added CPU per call (medians): ${(sdkAdded("tracepipe") / sdkAdded("before")).toFixed(2)}x`);

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
console.log(
  `  allocated per call (sampled): ${names.map((n) => `${n} ${(allocated[n]! / 1024).toFixed(1)} KiB`).join(", ")}${allocated.before ? ` -> tracepipe/before ${(allocated.tracepipe! / allocated.before).toFixed(2)}x` : ""}`,
);
// The same per streamed chunk: the wrapper's step and fold, and the stream's run spread over its chunks.
const STREAM_ALLOC_ROUNDS = 3;
const allocatedPerChunk: Record<string, number> = {};
for (const name of [...names, "unwrapped"]) {
  const v = variants[name];
  const rounds = Array.from({ length: STREAM_ALLOC_ROUNDS }, parsedStreams);
  await session.post("HeapProfiler.startSampling", {
    samplingInterval: 256,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  } as never);
  for (const streams of rounds) {
    for (const chunks of streams) {
      const source = chunksOf(chunks);
      await readAll(v ? v.stream().wrapIterator(source) : source);
    }
    if (v) {
      v.runDeferred();
      await v.flush();
    }
  }
  const { profile } = (await session.post("HeapProfiler.stopSampling")) as unknown as { profile: { head: AllocNode } };
  allocatedPerChunk[name] = sumAllocated(profile.head) / (STREAM_ALLOC_ROUNDS * STREAMS * CHUNKS);
}
console.log(
  `  allocated per streamed chunk (sampled, the async generator's own steps included): ${Object.entries(allocatedPerChunk)
    .map(([n, b]) => `${n} ${b.toFixed(0)} B`)
    .join(
      ", ",
    )}${allocatedPerChunk.before ? ` -> added tracepipe/before ${((allocatedPerChunk.tracepipe! - allocatedPerChunk.unwrapped!) / (allocatedPerChunk.before - allocatedPerChunk.unwrapped!)).toFixed(2)}x` : ""}`,
);
session.disconnect();
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
