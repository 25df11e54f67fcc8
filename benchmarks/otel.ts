/**
 * The span processor's cost on the traced program: tracepipe's
 * TraceSpanProcessor vs a BatchSpanProcessor with the OTLP/HTTP protobuf
 * exporter, in the same process, on the same LLM spans (OTel GenAI
 * conventions, ~1 KB of messages), with and without usage attributes (without,
 * tracepipe estimates the usage with tiktoken). Both deliver to the light
 * capture server (benchmarks/capture-server.ts, its own process).
 *
 * The protobuf exporter: @opentelemetry/exporter-trace-otlp-proto is not a
 * dependency here, so it is assembled the way that package does it, from the
 * installed @opentelemetry/otlp-exporter-base (node-http delegate) and
 * @opentelemetry/otlp-transformer's ProtobufTraceSerializer.
 *
 * Blocks of BLOCK spans per variant, variants interleaved round by round in a
 * rotating order; each block ends with forceFlush, so its conversion and
 * delivery CPU is charged to it. Reported: onEnd time per span (median, p99,
 * max; timed around the processor's onEnd alone), and added CPU per span
 * (block CPU minus that of a provider with a no-op processor: span creation is
 * not counted), median and range over rounds, with the ratio to the exporter's.
 * Targets (issue 15): onEnd <= 20 µs median whatever the span holds; CPU per
 * span <= 2x the exporter's.
 *
 *   npx tsx benchmarks/otel.ts            # 30 rounds of 200 spans per variant and shape
 *   npx tsx benchmarks/otel.ts --quick    # 8 rounds
 *   npx tsx benchmarks/otel.ts --batch 512  # the tracepipe client at the exporter's batch size (requests per span alike)
 *   npx tsx benchmarks/otel.ts --ab <dir> # also another build's processor (<dir> holds its dist/:
 *                                         # e.g. a worktree of an earlier commit, built), interleaved
 *                                         # in the same rounds: the fair way to compare two builds on a
 *                                         # shared machine, where separate runs differ by more than the change
 */
import type { Context } from "@opentelemetry/api";
import { OTLPExporterBase } from "@opentelemetry/otlp-exporter-base";
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from "@opentelemetry/otlp-exporter-base/node-http";
import { ProtobufTraceSerializer, TraceExporterMetricsHelper } from "@opentelemetry/otlp-transformer";
import { BatchSpanProcessor, NodeTracerProvider, type ReadableSpan, type Span, type SpanProcessor } from "@opentelemetry/sdk-trace-node";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { loadBuilt } from "./load.js";
import { cpuMs, median, peakRssMiB, quantile, spread, startChild } from "./stats.js";

const root = fileURLToPath(new URL("../", import.meta.url));
const quick = process.argv.includes("--quick");
const ROUNDS = quick ? 8 : 30;
const abAt = process.argv.indexOf("--ab");
const abRoot = abAt > 0 ? process.argv[abAt + 1] : undefined;
const BLOCK = 200;
/** The tracepipe client's batch size (default: the client's own, 100); the exporter's BatchSpanProcessor sends up to 512 spans per request. */
const batchArg = process.argv.includes("--batch") ? Number(process.argv[process.argv.indexOf("--batch") + 1]) : undefined;

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

const capture = await startChild([join(root, "benchmarks/capture-server.ts")]);
const tp = await loadBuilt<typeof import("../src/index.js")>("src/index.js");
const dir = mkdtempSync(join(tmpdir(), "tp-bench-otel-"));
const client = new tp.Client({ endpoint: capture.url, apiKey: "otel-tracepipe", project: "otel-bench", spoolDir: join(dir, "spool"), deadLetterPath: join(dir, "dl.jsonl"), exitHooks: false, ...(batchArg ? { batchSize: batchArg } : {}) });
const tpOtel = await loadBuilt<typeof import("../src/otel/index.js")>("src/otel/index.js");
const tpProcessor = new tpOtel.TraceSpanProcessor({ client });

type Variant = "none" | "otlp-proto" | "tracepipe" | "other build";
const variants: Variant[] = ["none", "otlp-proto", "tracepipe"];
const processors: Partial<Record<Variant, Timed>> = {
  none: new Timed(noop),
  "otlp-proto": new Timed(new BatchSpanProcessor(new OtlpProtoTraceExporter(`${capture.url}/v1/traces`, { "x-api-key": "otel-otlp" }))),
  tracepipe: new Timed(tpProcessor),
};
// --ab: the other build's Client and processor, each loaded from its own dist/ (nothing shared with this one's).
let abClient: { shutdown(): Promise<unknown> } | undefined;
if (abRoot) {
  const dist = (p: string) => pathToFileURL(resolve(abRoot, "dist", p)).href;
  const abTp = (await import(dist("src/index.js"))) as typeof import("../src/index.js");
  const abOtel = (await import(dist("src/otel/index.js"))) as typeof import("../src/otel/index.js");
  const c = new abTp.Client({ endpoint: capture.url, apiKey: "otel-tracepipe-ab", project: "otel-bench", spoolDir: join(dir, "spool-ab"), deadLetterPath: join(dir, "dl-ab.jsonl"), exitHooks: false });
  abClient = c;
  processors["other build"] = new Timed(new abOtel.TraceSpanProcessor({ client: c }));
  variants.push("other build");
}
const proc = (v: Variant) => processors[v]!;
const tracers = Object.fromEntries(variants.map((v) => [v, new NodeTracerProvider({ spanProcessors: [proc(v)] })])) as Record<Variant, NodeTracerProvider>;

const question = "Summarise the attached quarterly report in three bullet points, keeping the figures exact. ".repeat(5);
const answer = "- Revenue grew 12% to 4.1M.\n- Costs fell 3% on lower hosting.\n- Headcount stayed at 41. ".repeat(3);
function attributes(i: number, usage: boolean): Record<string, string | number> {
  const a: Record<string, string | number> = {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": "openai",
    "gen_ai.request.model": "gpt-4o-mini",
    "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
    "gen_ai.request.temperature": 0,
    "gen_ai.input.messages": JSON.stringify([
      { role: "system", parts: [{ type: "text", content: "You are a careful analyst." }] },
      { role: "user", parts: [{ type: "text", content: `${question} (#${i})` }] },
    ]),
    "gen_ai.output.messages": JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: `${answer} (#${i})` }], finish_reason: "stop" }]),
  };
  if (usage) {
    a["gen_ai.usage.input_tokens"] = 120;
    a["gen_ai.usage.output_tokens"] = 60;
  }
  return a;
}

const yieldNow = () => new Promise((r) => setImmediate(r));
async function block(v: Variant, usage: boolean, round: number): Promise<number> {
  const tracer = tracers[v].getTracer("bench");
  const c0 = cpuMs();
  for (let i = 0; i < BLOCK; i++) {
    tracer.startSpan("chat gpt-4o-mini", { attributes: attributes(round * BLOCK + i, usage) }).end();
    if (i % 10 === 9) await yieldNow(); // spans end over several turns, as in a program doing other work
  }
  await tracers[v].forceFlush();
  return ((cpuMs() - c0) * 1000) / BLOCK; // µs per span
}

console.log(`otel benchmark: span processors -> capture server ${capture.url} (own process); ${ROUNDS} rounds x ${BLOCK} spans per variant and shape, interleaved; round 0 is warm-up; tracepipe client batch size ${batchArg ?? "100 (default)"}`);
console.log(`  exporter peer: BatchSpanProcessor + OTLP/HTTP protobuf exporter (assembled from otlp-exporter-base + otlp-transformer; exporter-trace-otlp-proto is not installed)`);
const ratios: Record<string, { onEnd: number; cpu: number }> = {};
for (const usage of [true, false]) {
  const cpu = Object.fromEntries(variants.map((v) => [v, [] as number[]])) as Record<Variant, number[]>;
  const firstOnEnd: Partial<Record<Variant, number>> = {};
  for (const v of variants) proc(v).times = [];
  for (let round = 0; round <= ROUNDS; round++) {
    const order = variants.map((_, i) => variants[(i + round) % variants.length]!);
    for (const v of order) {
      const before = proc(v).times.length;
      const c = await block(v, usage, round);
      if (round === 0) {
        firstOnEnd[v] = proc(v).times[before];
        proc(v).times.length = before; // warm-up: not counted
      } else cpu[v].push(c);
    }
  }
  const label = usage ? "spans with usage" : "spans without usage (tracepipe estimates)";
  console.log(`\n  ${label}:`);
  const added = (v: Variant) => cpu[v].map((c, i) => c - cpu.none[i]!);
  for (const v of variants) {
    const t = proc(v).times;
    console.log(
      `    ${v.padEnd(10)} onEnd median ${median(t).toFixed(2).padStart(6)} µs, p99 ${quantile(t, 0.99).toFixed(1).padStart(6)} µs, max ${Math.max(...t).toFixed(0).padStart(5)} µs, first span ${firstOnEnd[v]?.toFixed(0)} µs` +
        (v === "none" ? `   CPU per span ${spread(cpu[v], 1, " µs")} (span creation, the baseline)` : `   added CPU per span ${spread(added(v), 1, " µs")}`),
    );
  }
  const onEndRatio = median(proc("tracepipe").times) / median(proc("otlp-proto").times);
  // Ratio of the medians: a per-round ratio divides by one noisy block of the exporter's and swings widely.
  const cpuRatio = median(added("tracepipe")) / median(added("otlp-proto"));
  ratios[usage ? "usage" : "no usage"] = { onEnd: onEndRatio, cpu: cpuRatio };
  console.log(`    -> tracepipe onEnd median ${median(proc("tracepipe").times).toFixed(2)} µs (target <= 20 µs), ${onEndRatio.toFixed(2)}x the exporter's`);
  console.log(`    -> tracepipe/exporter added CPU per span (ratio of medians): ${cpuRatio.toFixed(2)}x (target <= 2x)`);
  if (abRoot) {
    const mine = added("tracepipe");
    const other = added("other build");
    console.log(`    -> other build (${abRoot})/exporter: ${(median(other) / median(added("otlp-proto"))).toFixed(2)}x; this build / other build, added CPU per span: ${(median(mine) / median(other)).toFixed(3)}x (ratio of medians), ${median(mine.map((m, i) => m / other[i]!)).toFixed(3)}x (median of per-round ratios)`);
  }
}

for (const v of variants) await tracers[v].shutdown();
await client.shutdown();
await abClient?.shutdown();
const count = async (key: string) => (await (await fetch(`${capture.url}/count?key=${key}`)).json()) as { runs: number; requests: number; bytes: number };
const tpCount = await count("otel-tracepipe");
const otlpCount = await count("otel-otlp");
const spans = 2 * (ROUNDS + 1) * BLOCK;
if (abRoot) console.log(`\n  other build: ${(await count("otel-tracepipe-ab")).runs}/${spans} runs delivered`);
console.log(`\n  delivered: tracepipe ${tpCount.runs}/${spans} runs in ${tpCount.requests} requests (${(tpCount.bytes / 1e6).toFixed(1)} MB); exporter ${otlpCount.requests} requests (${(otlpCount.bytes / 1e6).toFixed(1)} MB); processor stats ${JSON.stringify(tpProcessor.stats)}`);
console.log(`  peak RSS of this process (all variants): ${peakRssMiB().toFixed(0)} MiB`);
console.log(`  summary: onEnd ratio ${Object.entries(ratios).map(([k, r]) => `${k} ${r.onEnd.toFixed(2)}x`).join(", ")}; CPU ratio ${Object.entries(ratios).map(([k, r]) => `${k} ${r.cpu.toFixed(2)}x`).join(", ")}`);
capture.proc.kill("SIGTERM");
