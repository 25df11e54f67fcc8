/**
 * The span processor's cost on the traced program: tracepipe's
 * TraceSpanProcessor vs a BatchSpanProcessor with the OTLP/HTTP protobuf
 * exporter, on the same LLM spans (OTel GenAI conventions), with and without
 * usage attributes (without, tracepipe estimates the usage with tiktoken).
 * Both deliver to the light capture server (benchmarks/capture-server.ts, its
 * own process).
 *
 * Span shapes (`--shape`, default both):
 * - `chat`: a system prompt, one ~460-character question and a ~270-character
 *   answer (~1 KB of messages);
 * - `agent`: a multi-turn tool-using exchange: system prompt, question, an
 *   assistant turn with two tool calls, their two results (JSON), and the
 *   answer (~3 KB of messages).
 *
 * The protobuf exporter: @opentelemetry/exporter-trace-otlp-proto is not a
 * dependency here, so it is assembled the way that package does it, from the
 * installed @opentelemetry/otlp-exporter-base (node-http delegate) and
 * @opentelemetry/otlp-transformer's ProtobufTraceSerializer.
 *
 * Default mode: each variant (no-op processor, exporter, tracepipe) runs in a
 * process of its own, and the processes take turns: after each has run its
 * WARMUP blocks (not counted: a fresh process's JIT and heap sizing take
 * thousands of spans to settle; one process at a time), the parent has them
 * run one block of BLOCK spans each, in rotating order, ROUNDS times; a block
 * ends with forceFlush so its conversion and delivery CPU is charged to it.
 * Own processes because in one process a garbage collection caused by one
 * variant lands in whichever block runs next, often another variant's: block
 * figures then swung 2-5x. Taking turns because this machine's speed drifts
 * by tens of percent over minutes: processes run one after another measured
 * different machines, and a variant's figure moved 0.5-1.6x between
 * repetitions; blocks seconds apart share the drift. REPS repetitions with
 * fresh processes. Reported per variant: onEnd time per span (median, p99;
 * timed around the processor's onEnd alone), and added CPU per span (per
 * round, the block's CPU minus the no-op process's block of the same round:
 * span creation is not counted; the median over rounds), median and range
 * over repetitions, with the ratio to the exporter's.
 * Targets: onEnd <= 20 µs median whatever the span holds; added CPU per span
 * <= 2x the exporter's for spans that carry usage, <= 2.5x for spans without
 * (their usage is estimated in the host, work the exporter never does).
 *
 *   npx tsx benchmarks/otel.ts               # 5 repetitions x (8 warm-up + 20 interleaved) blocks of 500 spans, both shapes
 *   npx tsx benchmarks/otel.ts --reps 3 --shape chat
 *   npx tsx benchmarks/otel.ts --block 200   # another block size
 *   npx tsx benchmarks/otel.ts --batch 100   # the tracepipe client's batch size (default: GET /info's, 1000 here)
 *   npx tsx benchmarks/otel.ts --ab <dir>    # also another build's processor (<dir> holds its dist/: e.g. a
 *                                            # worktree of an earlier commit, built), in its own processes,
 *                                            # rotating with the others
 *   npx tsx benchmarks/otel.ts --host-heap 64  # each process first holds 64 MiB of live objects, as an application would
 *   npx tsx benchmarks/otel.ts --same-process  # all variants in one process, interleaved block by block
 */
import type { Context } from "@opentelemetry/api";
import { OTLPExporterBase } from "@opentelemetry/otlp-exporter-base";
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from "@opentelemetry/otlp-exporter-base/node-http";
import { ProtobufTraceSerializer, TraceExporterMetricsHelper } from "@opentelemetry/otlp-transformer";
import { BatchSpanProcessor, NodeTracerProvider, type ReadableSpan, type Span, type SpanProcessor } from "@opentelemetry/sdk-trace-node";
import { spawn, type ChildProcess } from "node:child_process";
import { constants as perf, PerformanceObserver } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { loadBuilt } from "./load.js";
import { cpuMs, median, peakRssMiB, quantile, spread, startChild } from "./stats.js";

const root = fileURLToPath(new URL("../", import.meta.url));
const argv = process.argv;
const flag = (name: string) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const sameProcess = argv.includes("--same-process");
const ROUNDS = Number(flag("--rounds") ?? (sameProcess ? 30 : 20));
/** Blocks each child runs before measuring: a fresh process's JIT and young generation take thousands of spans to settle. */
const WARMUP = Number(flag("--warmup") ?? 8);
const REPS = Number(flag("--reps") ?? 5);
const abRoot = flag("--ab");
/**
 * Spans per block. 500: about one request per block for both (the exporter's BatchSpanProcessor sends
 * up to 512 spans per request, tracepipe's client what GET /info advertises).
 */
const BLOCK = Number(flag("--block") ?? 500);
/**
 * MiB of live objects each child holds before it starts, as a host
 * application's own data would (default 0). With a larger heap V8 spends more
 * of its time marking the old generation, and what a processor stores in
 * long-lived structures then survives young collections (see the comment on
 * TraceSpanProcessor.release): this measures the processors under that.
 */
const HOST_HEAP_MIB = Number(flag("--host-heap") ?? 0);
/** The tracepipe client's batch size (default: the client's own choice, GET /info's size_limit). */
const batchArg = flag("--batch") ? Number(flag("--batch")) : undefined;
type Shape = "chat" | "agent";
const SHAPES: Shape[] = flag("--shape") ? [flag("--shape") as Shape] : ["chat", "agent"];

class OtlpProtoTraceExporter extends OTLPExporterBase<ReadableSpan[]> {
  constructor(url: string, headers: Record<string, string>) {
    super(
      createOtlpHttpExportDelegate(
        convertLegacyHttpOptions({ url, headers }, "TRACES", "v1/traces", { "Content-Type": "application/x-protobuf" }),
        ProtobufTraceSerializer,
        "otlp_http_span_exporter",
        TraceExporterMetricsHelper,
        undefined,
      ),
    );
  }
}

/** Times the wrapped processor's onEnd alone. */
class Timed implements SpanProcessor {
  times: number[] = [];
  constructor(readonly inner: SpanProcessor) {}
  onStart(span: Span, ctx: Context): void {
    this.inner.onStart(span, ctx);
  }
  onEnd(span: ReadableSpan): void {
    const t = process.hrtime.bigint();
    this.inner.onEnd(span);
    this.times.push(Number(process.hrtime.bigint() - t) / 1000);
  }
  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
}
const noop: SpanProcessor = { onStart() {}, onEnd() {}, forceFlush: async () => {}, shutdown: async () => {} };

type Variant = "none" | "otlp-proto" | "tracepipe" | "other build";
const KEYS: Record<Variant, string> = {
  none: "none",
  "otlp-proto": "otel-otlp",
  tracepipe: "otel-tracepipe",
  "other build": "otel-tracepipe-ab",
};

/** A processor for `v`, delivering to `url`; tracepipe's from `base`'s dist/ (this checkout's, or --ab's). */
async function makeProcessor(
  v: Variant,
  url: string,
  dir: string,
): Promise<{ processor: SpanProcessor; stats?: unknown; close(): Promise<unknown> }> {
  if (v === "none") return { processor: noop, close: async () => {} };
  if (v === "otlp-proto")
    return {
      processor: new BatchSpanProcessor(new OtlpProtoTraceExporter(`${url}/v1/traces`, { "x-api-key": KEYS[v] })),
      close: async () => {},
    };
  let tp: typeof import("../src/index.js");
  let otel: typeof import("../src/otel/index.js");
  if (v === "other build") {
    const dist = (p: string) => pathToFileURL(resolve(abRoot!, "dist", p)).href;
    tp = (await import(dist("src/index.js"))) as typeof tp;
    otel = (await import(dist("src/otel/index.js"))) as typeof otel;
  } else {
    tp = await loadBuilt<typeof tp>("src/index.js");
    otel = await loadBuilt<typeof otel>("src/otel/index.js");
  }
  const client = new tp.Client({
    endpoint: url,
    apiKey: KEYS[v],
    project: "otel-bench",
    spoolDir: join(dir, `spool-${v}`),
    deadLetterPath: join(dir, `dl-${v}.jsonl`),
    exitHooks: false,
    ...(batchArg ? { batchSize: batchArg } : {}),
  });
  const processor = new otel.TraceSpanProcessor({ client });
  return { processor, stats: processor.stats, close: () => client.shutdown() };
}

const question = "Summarise the attached quarterly report in three bullet points, keeping the figures exact. ".repeat(5);
const answer = "- Revenue grew 12% to 4.1M.\n- Costs fell 3% on lower hosting.\n- Headcount stayed at 41. ".repeat(3);
const text = (content: string) => ({ type: "text", content });

function messages(shape: Shape, i: number): { input: unknown[]; output: unknown[] } {
  if (shape === "chat") {
    return {
      input: [
        { role: "system", parts: [text("You are a careful analyst.")] },
        { role: "user", parts: [text(`${question} (#${i})`)] },
      ],
      output: [{ role: "assistant", parts: [text(`${answer} (#${i})`)], finish_reason: "stop" }],
    };
  }
  const city = ["Lisbon", "Oslo", "Nairobi", "Lima", "Osaka"][i % 5]!;
  return {
    input: [
      {
        role: "system",
        parts: [
          text(
            "You are a travel assistant. Use the tools to check the weather and opening hours before you recommend anything; answer in two short paragraphs.",
          ),
        ],
      },
      {
        role: "user",
        parts: [
          text(
            `I land in ${city} on Saturday morning with six free hours. What should I do, and what should I pack for the weather? (request ${i})`,
          ),
        ],
      },
      {
        role: "assistant",
        parts: [
          { type: "tool_call", id: `call_w${i}`, name: "get_weather", arguments: { city, day: "saturday", units: "metric" } },
          { type: "tool_call", id: `call_h${i}`, name: "opening_hours", arguments: { city, category: "museums", day: "saturday" } },
        ],
      },
      {
        role: "tool",
        parts: [
          {
            type: "tool_call_response",
            id: `call_w${i}`,
            response: {
              city,
              forecast: [
                { hour: 9, temp_c: 14, rain_mm: 0.2 },
                { hour: 12, temp_c: 19, rain_mm: 0 },
                { hour: 15, temp_c: 21, rain_mm: 0 },
              ],
              wind_kmh: 12,
            },
          },
        ],
      },
      {
        role: "tool",
        parts: [
          {
            type: "tool_call_response",
            id: `call_h${i}`,
            response: {
              city,
              open: [
                { name: "City Museum", from: "10:00", to: "18:00" },
                { name: "Modern Art Gallery", from: "11:00", to: "19:00" },
                { name: "Maritime Museum", from: "09:30", to: "17:30" },
              ],
            },
          },
        ],
      },
    ],
    output: [
      {
        role: "assistant",
        parts: [
          text(
            `Start at the Maritime Museum when it opens at 09:30, then walk the old town before lunch; the City Museum and the Modern Art Gallery stay open into the evening, so keep one for the afternoon. Saturday in ${city} warms from 14 to 21 °C with a little rain early on: pack a light jacket you can carry, comfortable shoes and sunglasses. (#${i})`,
          ),
        ],
        finish_reason: "stop",
      },
    ],
  };
}

function attributes(shape: Shape, i: number, usage: boolean): Record<string, string | number> {
  const m = messages(shape, i);
  const a: Record<string, string | number> = {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": "openai",
    "gen_ai.request.model": "gpt-4o-mini",
    "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
    "gen_ai.request.temperature": 0,
    "gen_ai.input.messages": JSON.stringify(m.input),
    "gen_ai.output.messages": JSON.stringify(m.output),
  };
  if (usage) {
    a["gen_ai.usage.input_tokens"] = shape === "chat" ? 120 : 310;
    a["gen_ai.usage.output_tokens"] = shape === "chat" ? 60 : 95;
  }
  return a;
}

const yieldNow = () => new Promise((r) => setImmediate(r));
/** One block: BLOCK spans ended over several turns of the event loop, then forceFlush. CPU µs per span. */
async function block(provider: NodeTracerProvider, shape: Shape, usage: boolean, first: number): Promise<number> {
  const tracer = provider.getTracer("bench");
  const c0 = cpuMs();
  for (let i = 0; i < BLOCK; i++) {
    tracer.startSpan("chat gpt-4o-mini", { attributes: attributes(shape, first + i, usage) }).end();
    if (i % 10 === 9) await yieldNow(); // spans end over several turns, as in a program doing other work
  }
  await provider.forceFlush();
  return ((cpuMs() - c0) * 1000) / BLOCK;
}

interface ChildResult {
  cpu: number[];
  onEnd: number[];
  first: number;
  /** Garbage collection pauses over the measured blocks, µs per span: young (scavenges) and the rest. */
  gc: { young: number; full: number };
  stats?: unknown;
}

/** The host application's data (see HOST_HEAP_MIB), live until the child exits. */
const hostData: unknown[][] = [];
/** Objects a host application keeps (see HOST_HEAP_MIB): ~100 bytes each. */
function hostHeap(mib: number): unknown[] {
  const held: unknown[] = [];
  for (let i = 0; i < mib * 10_000; i++) held.push({ id: i, name: `item ${i}`, tags: [i, i + 1] });
  return held;
}

/**
 * --child: one variant, one shape and usage, in this process. After its
 * warm-up blocks it prints "ready", then runs a block for each "block <first>"
 * line on its stdin, answering with the block's CPU per span, until "end":
 * then it prints its result as JSON and exits. So the parent decides when
 * each process measures, and can interleave them block by block.
 */
async function child(): Promise<void> {
  const [v, shape, usage, url, dir, seed] = argv.slice(argv.indexOf("--child") + 1) as [Variant, Shape, string, string, string, string];
  const made = await makeProcessor(v, url, dir);
  hostData.push(hostHeap(HOST_HEAP_MIB));
  const timed = new Timed(made.processor);
  const provider = new NodeTracerProvider({ spanProcessors: [timed] });
  const start = Number(seed);
  await block(provider, shape, usage === "1", start); // warm-up
  const first = timed.times[0]!;
  for (let w = 1; w < WARMUP; w++) await block(provider, shape, usage === "1", start - w * BLOCK);
  timed.times = [];
  const cpu: number[] = [];
  const gcMs = { young: 0, full: 0 };
  const gcs = new PerformanceObserver((list) => {
    for (const e of list.getEntries())
      gcMs[(e as { detail?: { kind?: number } }).detail?.kind === perf.NODE_PERFORMANCE_GC_MINOR ? "young" : "full"] += e.duration;
  });
  gcs.observe({ entryTypes: ["gc"] });
  process.stdout.write("ready\n");
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    if (line.startsWith("block ")) {
      const c = await block(provider, shape, usage === "1", Number(line.slice(6)));
      cpu.push(c);
      process.stdout.write(`cpu ${c}\n`);
    } else if (line === "end") break;
  }
  lines.close();
  gcs.disconnect();
  await provider.shutdown();
  await made.close();
  const perSpan = (ms: number) => (ms * 1000) / (cpu.length * BLOCK);
  const result: ChildResult = {
    cpu,
    onEnd: timed.times,
    first,
    gc: { young: perSpan(gcMs.young), full: perSpan(gcMs.full) },
    stats: made.stats,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.stdin.destroy();
}

/** The options a child must share with its parent (everything after --child is positional). */
const shared = () => [
  "--rounds",
  String(ROUNDS),
  "--warmup",
  String(WARMUP),
  "--block",
  String(BLOCK),
  "--host-heap",
  String(HOST_HEAP_MIB),
  ...(batchArg ? ["--batch", String(batchArg)] : []),
  ...(abRoot ? ["--ab", abRoot] : []),
];

/** A child process measuring one variant, driven a block at a time (see child()). */
class Worker {
  private readonly proc: ChildProcess;
  private readonly lines: AsyncIterableIterator<string>;

  constructor(args: string[]) {
    this.proc = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), ...shared(), ...args], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    this.lines = createInterface({ input: this.proc.stdout! })[Symbol.asyncIterator]();
  }

  private async line(): Promise<string> {
    const next = await this.lines.next();
    if (next.done) throw new Error("a benchmark child exited early");
    return next.value;
  }

  /** Resolves once the child has warmed up. */
  async ready(): Promise<void> {
    while ((await this.line()) !== "ready");
  }

  /** One measured block: its CPU per span, µs. */
  async block(first: number): Promise<number> {
    this.proc.stdin!.write(`block ${first}\n`);
    for (;;) {
      const l = await this.line();
      if (l.startsWith("cpu ")) return Number(l.slice(4));
    }
  }

  async end(): Promise<ChildResult> {
    this.proc.stdin!.end("end\n");
    for (;;) {
      const l = await this.line();
      if (l.startsWith("{")) return JSON.parse(l) as ChildResult;
    }
  }
}

const count = async (url: string, key: string) =>
  (await (await fetch(`${url}/count?key=${key}`)).json()) as { runs: number; requests: number; bytes: number };

async function isolated(): Promise<void> {
  const capture = await startChild([join(root, "benchmarks/capture-server.ts")]);
  const dir = mkdtempSync(join(tmpdir(), "tp-bench-otel-"));
  const variants: Variant[] = ["none", "otlp-proto", "tracepipe", ...(abRoot ? (["other build"] as const) : [])];
  console.log(
    `otel benchmark: span processors -> capture server ${capture.url} (own process); each variant in a process of its own, the processes' blocks interleaved (rotating order), ${REPS} repetitions with fresh processes, each ${WARMUP} warm-up blocks and ${ROUNDS} measured blocks of ${BLOCK} spans${HOST_HEAP_MIB ? `, each holding ${HOST_HEAP_MIB} MiB of live objects` : ""}; tracepipe client batch size ${batchArg ?? "default (GET /info's size_limit: the capture server advertises 1000)"}`,
  );
  console.log(
    `  exporter peer: BatchSpanProcessor + OTLP/HTTP protobuf exporter (assembled from otlp-exporter-base + otlp-transformer; exporter-trace-otlp-proto is not installed)`,
  );
  const summary: string[] = [];
  let spans = 0;
  let seed = 0;
  for (const shape of SHAPES) {
    for (const usage of [true, false]) {
      const results = Object.fromEntries(variants.map((v) => [v, [] as ChildResult[]])) as Record<Variant, ChildResult[]>;
      // Per repetition and variant: the median over rounds of (its block's CPU - the no-op's block of the same round).
      const added = Object.fromEntries(variants.map((v) => [v, [] as number[]])) as Record<Variant, number[]>;
      for (let rep = 0; rep < REPS; rep++) {
        const workers = {} as Record<Variant, Worker>;
        // Warm up one at a time: a warm-up is not measured, but would slow whatever ran beside it.
        for (const v of variants) {
          workers[v] = new Worker([
            "--child",
            v,
            shape,
            usage ? "1" : "0",
            capture.url,
            dir,
            String((seed += (ROUNDS + WARMUP + 1) * BLOCK)),
          ]);
          await workers[v].ready();
        }
        const cpu = Object.fromEntries(variants.map((v) => [v, [] as number[]])) as Record<Variant, number[]>;
        for (let r = 0; r < ROUNDS; r++) {
          const order = variants.map((_, i) => variants[(i + r + rep) % variants.length]!);
          for (const v of order) cpu[v].push(await workers[v].block((seed += BLOCK)));
        }
        for (const v of variants) results[v].push(await workers[v].end());
        for (const v of variants) added[v].push(v === "none" ? median(cpu.none) : median(cpu[v].map((c, r) => c - cpu.none[r]!)));
      }
      spans += REPS * (ROUNDS + WARMUP) * BLOCK;
      console.log(`\n  ${shape}, ${usage ? "spans with usage" : "spans without usage (tracepipe estimates)"}:`);
      for (const v of variants) {
        const t = results[v].flatMap((r) => r.onEnd);
        const firsts = results[v].map((r) => r.first);
        console.log(
          `    ${v.padEnd(11)} onEnd median ${median(t).toFixed(2).padStart(6)} µs, p99 ${quantile(t, 0.99).toFixed(1).padStart(6)} µs, first span ${spread(firsts, 0, " µs")}` +
            (v === "none"
              ? `   CPU per span ${spread(added.none, 1, " µs")} (span creation, the baseline)`
              : `   added CPU per span ${spread(added[v], 1, " µs")}`) +
            `, GC pauses ${spread(
              results[v].map((r) => r.gc.young),
              1,
              "",
            )} + ${spread(
              results[v].map((r) => r.gc.full),
              1,
              " µs",
            )} per span (young + full)`,
        );
      }
      const tp = added.tracepipe;
      const ex = added["otlp-proto"];
      const ratio = median(tp) / median(ex);
      const perRepRatios = tp.map((c, i) => c / ex[i]!);
      const onEnd = median(results.tracepipe.flatMap((r) => r.onEnd));
      console.log(`    -> tracepipe onEnd median ${onEnd.toFixed(2)} µs (target <= 20 µs)`);
      const target = usage ? 2 : 2.5;
      console.log(
        `    -> tracepipe/exporter added CPU per span: ${median(tp).toFixed(1)} µs / ${median(ex).toFixed(1)} µs = ${ratio.toFixed(2)}x (ratio of medians; per repetition ${spread(perRepRatios, 2, "x")}) (target <= ${target}x: ${ratio <= target ? "met" : "NOT met"})`,
      );
      summary.push(`${shape} ${usage ? "usage" : "no usage"} ${ratio.toFixed(2)}x (<= ${target}x)`);
      if (abRoot) {
        const other = added["other build"];
        console.log(
          `    -> this build / other build (${abRoot}), added CPU per span: ${(median(tp) / median(other)).toFixed(3)}x (ratio of medians; per repetition ${spread(
            tp.map((c, i) => c / other[i]!),
            3,
            "x",
          )})`,
        );
      }
    }
  }
  const tpCount = await count(capture.url, KEYS.tracepipe);
  const otlpCount = await count(capture.url, KEYS["otlp-proto"]);
  if (abRoot) console.log(`\n  other build: ${(await count(capture.url, KEYS["other build"])).runs}/${spans} runs delivered`);
  console.log(
    `\n  delivered: tracepipe ${tpCount.runs}/${spans} runs in ${tpCount.requests} requests (${(tpCount.bytes / 1e6).toFixed(1)} MB); exporter ${otlpCount.requests} requests (${(otlpCount.bytes / 1e6).toFixed(1)} MB)`,
  );
  console.log(`  summary: CPU ratio ${summary.join(", ")}`);
  capture.proc.kill("SIGTERM");
}

/** --same-process: every variant in this process, block by block in rotating order (the earlier method). */
async function together(): Promise<void> {
  const capture = await startChild([join(root, "benchmarks/capture-server.ts")]);
  const dir = mkdtempSync(join(tmpdir(), "tp-bench-otel-"));
  const variants: Variant[] = ["none", "otlp-proto", "tracepipe", ...(abRoot ? (["other build"] as const) : [])];
  const made = Object.fromEntries(
    await Promise.all(variants.map(async (v) => [v, await makeProcessor(v, capture.url, dir)] as const)),
  ) as Record<Variant, Awaited<ReturnType<typeof makeProcessor>>>;
  const timed = Object.fromEntries(variants.map((v) => [v, new Timed(made[v].processor)])) as Record<Variant, Timed>;
  const providers = Object.fromEntries(variants.map((v) => [v, new NodeTracerProvider({ spanProcessors: [timed[v]] })])) as Record<
    Variant,
    NodeTracerProvider
  >;
  console.log(
    `otel benchmark (one process): ${ROUNDS} rounds x ${BLOCK} spans per variant, shape and usage, interleaved; round 0 is warm-up; tracepipe client batch size ${batchArg ?? "default"}`,
  );
  const summary: string[] = [];
  let seed = 0;
  for (const shape of SHAPES) {
    for (const usage of [true, false]) {
      const cpu = Object.fromEntries(variants.map((v) => [v, [] as number[]])) as Record<Variant, number[]>;
      for (const v of variants) timed[v].times = [];
      for (let round = 0; round <= ROUNDS; round++) {
        const order = variants.map((_, i) => variants[(i + round) % variants.length]!);
        for (const v of order) {
          const c = await block(providers[v], shape, usage, (seed += BLOCK));
          if (round === 0) timed[v].times = [];
          else cpu[v].push(c);
        }
      }
      const added = (v: Variant) => cpu[v].map((c, i) => c - cpu.none[i]!);
      console.log(`\n  ${shape}, ${usage ? "spans with usage" : "spans without usage (tracepipe estimates)"}:`);
      for (const v of variants) {
        const t = timed[v].times;
        console.log(
          `    ${v.padEnd(11)} onEnd median ${median(t).toFixed(2).padStart(6)} µs, p99 ${quantile(t, 0.99).toFixed(1).padStart(6)} µs` +
            (v === "none" ? `   CPU per span ${spread(cpu[v], 1, " µs")}` : `   added CPU per span ${spread(added(v), 1, " µs")}`),
        );
      }
      const ratio = median(added("tracepipe")) / median(added("otlp-proto"));
      const target = usage ? 2 : 2.5;
      console.log(
        `    -> tracepipe/exporter added CPU per span (ratio of medians): ${ratio.toFixed(2)}x (target <= ${target}x: ${ratio <= target ? "met" : "NOT met"})`,
      );
      summary.push(`${shape} ${usage ? "usage" : "no usage"} ${ratio.toFixed(2)}x (<= ${target}x)`);
      if (abRoot) {
        const mine = added("tracepipe");
        const other = added("other build");
        console.log(
          `    -> this build / other build: ${(median(mine) / median(other)).toFixed(3)}x (ratio of medians), ${median(mine.map((m, i) => m / other[i]!)).toFixed(3)}x (median of per-round ratios)`,
        );
      }
    }
  }
  for (const v of variants) await providers[v].shutdown();
  for (const v of variants) await made[v].close();
  console.log(`\n  peak RSS of this process (all variants): ${peakRssMiB().toFixed(0)} MiB`);
  console.log(`  summary: CPU ratio ${summary.join(", ")}`);
  capture.proc.kill("SIGTERM");
}

if (argv.includes("--child")) await child();
else if (sameProcess) await together();
else await isolated();
