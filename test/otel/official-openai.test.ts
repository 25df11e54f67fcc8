/**
 * The official `@opentelemetry/instrumentation-openai` (message content as
 * log records beside the span) with the real openai client against the
 * loopback replay server: for chat, a streamed chat, a tool round and a
 * Responses call, the runs' native messages equal what wrapOpenAI records of
 * the same calls, through the span processor with the log-record processor,
 * and through the OTLP/HTTP and OTLP/gRPC exporters into the collector, logs
 * sent before their spans in one case and after them in another.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import OpenAI from "openai";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from "@opentelemetry/sdk-logs";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPLogExporter } from "@opentelemetry/exporter-logs-otlp-http";
import { OTLPTraceExporter as GrpcTraceExporter } from "@opentelemetry/exporter-trace-otlp-grpc";
import { OTLPLogExporter as GrpcLogExporter } from "@opentelemetry/exporter-logs-otlp-grpc";
import { Metadata } from "@grpc/grpc-js";
import { startOtlpGrpc, type OtlpGrpcServer } from "../../src/server/otlp-grpc.js";
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
let grpc: OtlpGrpcServer;
beforeAll(async () => {
  // The package patches `openai` when it is required; the test's ESM import is patched by hand, the same way.
  inst.getModuleDefinitions()[0]!.patch!({ OpenAI });
  grpc = await startOtlpGrpc(0, "127.0.0.1", { store: env.col.collector.store, apiKey: "k", maxMessageBytes: 4 << 20 });
});
afterAll(() => grpc?.close());

const openai = () => new OpenAI({ apiKey: "sk-x", baseURL: `${env.vendor.url}/v1`, maxRetries: 0 });

type Sides = { inputs: unknown[]; outputs: unknown[] }[];
const sides = (runs: { run_type: string; start_time: string; inputs?: unknown; outputs?: unknown }[]): Sides =>
  runs
    .filter((r) => r.run_type === "llm")
    .sort((a, b) => a.start_time.localeCompare(b.start_time))
    .map((r) => ({
      inputs: comparable((r.inputs as { messages?: unknown })?.messages),
      outputs: comparable((r.outputs as { messages?: unknown } | undefined)?.messages),
    }));

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
  const client = new Client({
    endpoint: env.col.url,
    apiKey: "k",
    project,
    spoolDir: join(tempDir("tp-official-"), "spool"),
    warn: () => {},
  });
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
  return (await env.col.collector.store.queryRuns({ project })).runs;
}

type Exporter<T> = { export(items: T[], done: (r: { code: number; error?: Error }) => void): void; shutdown(): Promise<void> };

/** The real OTLP exporters of one transport, sending to the collector with its key and a project. */
function exporters(transport: "http" | "grpc", project: string) {
  if (transport === "http") {
    const headers = { "x-api-key": "k", "x-tracepipe-project": project };
    return {
      traces: new OTLPTraceExporter({ url: `${env.col.url}/v1/traces`, headers }),
      logs: new OTLPLogExporter({ url: `${env.col.url}/v1/logs`, headers }),
    };
  }
  const metadata = new Metadata();
  metadata.set("x-api-key", "k");
  metadata.set("x-tracepipe-project", project);
  const url = `http://127.0.0.1:${grpc.port}`;
  return { traces: new GrpcTraceExporter({ url, metadata }), logs: new GrpcLogExporter({ url, metadata }) };
}

/** The call traced into memory, then sent with the real OTLP exporters, logs first or spans first. */
async function viaOtlp(call: Call, transport: "http" | "grpc", project: string, logsFirst: boolean) {
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
  expect(records.getFinishedLogRecords().length).toBeGreaterThan(0);
  const out = exporters(transport, project);
  const send = <T>(exporter: Exporter<T>, items: T[]) =>
    new Promise<{ code: number; error?: Error }>((resolve) => exporter.export(items, resolve));
  const sent = logsFirst
    ? [await send(out.logs, records.getFinishedLogRecords()), await send(out.traces, spans.getFinishedSpans())]
    : [await send(out.traces, spans.getFinishedSpans()), await send(out.logs, records.getFinishedLogRecords())];
  expect(sent.map((r) => r.error?.message ?? r.code)).toEqual([0, 0]);
  await Promise.all([out.traces.shutdown(), out.logs.shutdown(), tracerProvider.shutdown(), loggerProvider.shutdown()]);
  return (await env.col.collector.store.queryRuns({ project })).runs;
}

describe("@opentelemetry/instrumentation-openai: the reply's id", () => {
  it("keeps gen_ai.response.id as the reply's extras.id, where wrapOpenAI keeps the response's id", async () => {
    const chat = CALLS.find((c) => c.name === "chat")!;
    inst.disable();
    const writer = new MemoryWriter();
    chat.script(env.vendor);
    await chat.run(wrapOpenAI(openai(), { client: writer }));
    inst.enable();
    const ref = ([...writer.runs.values()][0]!.outputs as { messages: { extras: { id: string } }[] }).messages[0]!;
    expect(ref.extras.id).toBe("chatcmpl-r1");
    const processed = (await viaProcessors(chat, "official-reply-id")).find((r) => r.run_type === "llm")!;
    const exported = (await viaOtlp(chat, "http", "official-reply-id-otlp", false)).find((r) => r.run_type === "llm")!;
    for (const run of [processed, exported])
      expect((run.outputs as { messages: { extras?: Record<string, unknown> }[] }).messages[0]!.extras?.id).toBe(ref.extras.id);
  });
});

describe("@opentelemetry/instrumentation-openai (content in log records)", () => {
  CALLS.forEach((call, i) => {
    it(`${call.name}: the same native messages as wrapOpenAI, through the span and log-record processors`, async () => {
      const reference = await wrapped(call);
      const runs = await viaProcessors(call, `proc-${i}`);
      expect(sides(runs)).toEqual(reference);
      for (const r of runs) expect(meta(r)).toMatchObject({ trace_provider: "openai", otel: { convention: "otel-genai", kind: "client" } });
      for (const r of runs) expect(meta(r).content_captured).toBeUndefined();
    });

    for (const transport of ["http", "grpc"] as const) {
      // Logs before spans for half the calls, after for the other half, the halves swapped between transports.
      const logsFirst = (i + (transport === "grpc" ? 1 : 0)) % 2 === 0;
      it(`${call.name}: the same native messages through OTLP/${transport === "http" ? "HTTP" : "gRPC"}, logs sent ${logsFirst ? "before" : "after"} their spans`, async () => {
        const reference = await wrapped(call);
        const runs = await viaOtlp(call, transport, `${transport}-${i}`, logsFirst);
        expect(sides(runs)).toEqual(reference);
        for (const r of runs)
          expect(meta(r)).toMatchObject({ trace_provider: "openai", otel: { convention: "otel-genai", kind: "client" } });
      });
    }
  });
});
