/**
 * The official `@opentelemetry/instrumentation-openai` (message content as
 * log records beside the span) with the real openai client against the
 * loopback replay server: for chat, a streamed chat, a tool round and a
 * Responses call, the runs' native messages equal what wrapOpenAI records of
 * the same calls, through the span processor with the log-record processor,
 * and through the OTLP/HTTP exporters into the collector, logs sent before
 * their spans in one case and after them in another.
 */
import { describe, expect, it, beforeAll } from "vitest";
import { join } from "node:path";
import OpenAI from "openai";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from "@opentelemetry/sdk-logs";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPLogExporter } from "@opentelemetry/exporter-logs-otlp-http";
import { OpenAIInstrumentation } from "@opentelemetry/instrumentation-openai";
import { TraceLogRecordProcessor, TraceSpanProcessor } from "../../src/otel/index.js";
import { Client } from "../../src/ingest/index.js";
import { wrapOpenAI } from "../../src/tracing/index.js";
import { MemoryWriter } from "../../src/run/memory.js";
import { CALLS, comparable, type Call } from "../helpers/genai-calls.js";
import { meta, otelEnvironment } from "../helpers/otel.js";
import { tempDir } from "../helpers/runs.js";

const env = otelEnvironment("k");
process.env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT = "true";
const inst = new OpenAIInstrumentation();
inst.setMeterProvider(new MeterProvider());
// The package patches `openai` when it is required; the test's ESM import is patched by hand, the same way.
beforeAll(() => void inst.getModuleDefinitions()[0]!.patch!({ OpenAI }));

const openai = () => new OpenAI({ apiKey: "sk-x", baseURL: `${env.vendor.url}/v1`, maxRetries: 0 });

type Sides = { inputs: unknown[]; outputs: unknown[] }[];
const sides = (runs: { run_type: string; start_time: string; inputs?: unknown; outputs?: unknown }[]): Sides =>
  runs
    .filter((r) => r.run_type === "llm")
    .sort((a, b) => a.start_time.localeCompare(b.start_time))
    .map((r) => ({ inputs: comparable((r.inputs as { messages?: unknown })?.messages), outputs: comparable((r.outputs as { messages?: unknown } | undefined)?.messages) }));

/** What wrapOpenAI records of the call: the reference. */
async function wrapped(call: Call): Promise<Sides> {
  inst.disable();
  try {
    const writer = new MemoryWriter();
    call.script(env.vendor);
    await call.run(wrapOpenAI(openai(), { client: writer }));
    return sides([...writer.runs.values()]);
  } finally {
    inst.enable();
  }
}

/** The call traced by the instrumentation into our span and log-record processors. */
async function viaProcessors(call: Call, project: string) {
  const client = new Client({ endpoint: env.col.url, apiKey: "k", project, spoolDir: join(tempDir("tp-official-"), "spool"), warn: () => {} });
  const logs = new TraceLogRecordProcessor();
  const tracerProvider = new NodeTracerProvider({ spanProcessors: [new TraceSpanProcessor({ client, logs })] });
  const loggerProvider = new LoggerProvider({ processors: [logs] });
  inst.setTracerProvider(tracerProvider);
  inst.setLoggerProvider(loggerProvider);
  call.script(env.vendor);
  await call.run(openai());
  await tracerProvider.forceFlush();
  await tracerProvider.shutdown();
  await loggerProvider.shutdown();
  await client.shutdown();
  expect(logs.stats).toMatchObject({ held: 0, expired: 0 });
  return env.col.collector.store.queryRuns({ project }).runs;
}

/** The call traced into memory, then sent with the real OTLP/HTTP exporters, logs first or spans first. */
async function viaOtlpHttp(call: Call, project: string, logsFirst: boolean) {
  const spans = new InMemorySpanExporter();
  const records = new InMemoryLogRecordExporter();
  const tracerProvider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  const loggerProvider = new LoggerProvider({ processors: [new SimpleLogRecordProcessor({ exporter: records })] });
  inst.setTracerProvider(tracerProvider);
  inst.setLoggerProvider(loggerProvider);
  call.script(env.vendor);
  await call.run(openai());
  await tracerProvider.forceFlush();
  await loggerProvider.forceFlush();
  const headers = { "x-api-key": "k", "x-tracepipe-project": project };
  const traceExporter = new OTLPTraceExporter({ url: `${env.col.url}/v1/traces`, headers });
  const logExporter = new OTLPLogExporter({ url: `${env.col.url}/v1/logs`, headers });
  const send = <T>(exporter: { export(items: T[], done: (r: { code: number; error?: Error }) => void): void }, items: T[]) =>
    new Promise<{ code: number; error?: Error }>((resolve) => exporter.export(items, resolve));
  const sent = logsFirst
    ? [await send(logExporter, records.getFinishedLogRecords()), await send(traceExporter, spans.getFinishedSpans())]
    : [await send(traceExporter, spans.getFinishedSpans()), await send(logExporter, records.getFinishedLogRecords())];
  expect(sent.map((r) => r.code)).toEqual([0, 0]);
  expect(records.getFinishedLogRecords().length).toBeGreaterThan(0);
  await Promise.all([traceExporter.shutdown(), logExporter.shutdown(), tracerProvider.shutdown(), loggerProvider.shutdown()]);
  return env.col.collector.store.queryRuns({ project }).runs;
}

describe("@opentelemetry/instrumentation-openai (content in log records)", () => {
  CALLS.forEach((call, i) => {
    it(`${call.name}: the same native messages as wrapOpenAI, through the span and log-record processors`, async () => {
      const reference = await wrapped(call);
      const runs = await viaProcessors(call, `proc-${i}`);
      expect(sides(runs)).toEqual(reference);
      for (const r of runs) expect(meta(r)).toMatchObject({ trace_provider: "openai", otel: { convention: "otel-genai", kind: "client" } });
      for (const r of runs) expect(meta(r).content_captured).toBeUndefined();
    });

    it(`${call.name}: the same native messages through OTLP/HTTP, logs sent ${i % 2 ? "after" : "before"} their spans`, async () => {
      const reference = await wrapped(call);
      const runs = await viaOtlpHttp(call, `http-${i}`, i % 2 === 0);
      expect(sides(runs)).toEqual(reference);
      for (const r of runs) expect(meta(r)).toMatchObject({ trace_provider: "openai", otel: { convention: "otel-genai", kind: "client" } });
    });
  });
});
