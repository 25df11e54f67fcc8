/**
 * The official `@opentelemetry/instrumentation-aws-sdk` with the real
 * `@aws-sdk/client-bedrock-runtime` against the loopback Bedrock replay
 * server: Converse and ConverseStream calls become `llm` runs with provider,
 * model and usage (the instrumentation records no message content, so the
 * runs say so), the same runs through the span processor and through the
 * OTLP/HTTP exporter into the collector.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRequire } from "node:module";
import { join } from "node:path";
import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { NodeTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-node";
import { AwsInstrumentation } from "@opentelemetry/instrumentation-aws-sdk";
import type {
  BedrockRuntimeClient as Bedrock,
  ConverseCommand as Converse,
  ConverseStreamCommand as ConverseStream,
} from "@aws-sdk/client-bedrock-runtime";
import { createOtlpTraceExporter, TraceSpanProcessor } from "../../src/otel/index.js";
import { Client } from "../../src/ingest/index.js";
import { fixture, startReplayServer, type ReplayServer } from "../helpers/replay-server.js";
import { startCollector, type Running } from "../helpers/collector.js";
import { meta as metadataOf } from "../helpers/otel.js";
import { tempDir } from "../helpers/runs.js";

type BedrockModule = {
  BedrockRuntimeClient: typeof Bedrock;
  ConverseCommand: typeof Converse;
  ConverseStreamCommand: typeof ConverseStream;
};
const MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";

// The instrumentation patches the AWS SDK as Node loads it: created first, then the client required.
const inst = new AwsInstrumentation();
const requireCjs = createRequire(import.meta.url);
const { BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand } = requireCjs("@aws-sdk/client-bedrock-runtime") as BedrockModule;

let vendor: ReplayServer;
let viaOtlp: Running;
let viaProcessor: Running;
beforeAll(async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  // The client's default handler speaks HTTP/2 to an http:// endpoint.
  vendor = await startReplayServer({ http2: true });
  viaOtlp = await startCollector({ apiKey: "k" });
  viaProcessor = await startCollector({ apiKey: "k" });
});
afterAll(async () => {
  inst.disable();
  context.disable();
  await vendor?.close();
  await viaOtlp?.close();
  await viaProcessor?.close();
});

type StoredRuns = Awaited<ReturnType<Running["collector"]["store"]["queryRuns"]>>["runs"];

/** A Converse and a ConverseStream call traced once, recorded by the span processor and by the OTLP/HTTP exporter. */
async function bothWays(project: string): Promise<{ fromProcessor: StoredRuns; fromOtlp: StoredRuns; answers: string[] }> {
  const client = new Client({
    endpoint: viaProcessor.url,
    apiKey: "k",
    project,
    spoolDir: join(tempDir("tp-aws-otel-"), "spool"),
    warn: () => {},
  });
  const exporter = createOtlpTraceExporter({ endpoint: viaOtlp.url, apiKey: "k", project, env: {} });
  const provider = new NodeTracerProvider({ spanProcessors: [new TraceSpanProcessor({ client }), new SimpleSpanProcessor(exporter)] });
  inst.setTracerProvider(provider);
  vendor.push({ json: fixture("bedrock-converse.json") }, { sse: fixture("bedrock-converse-stream.json"), eventstream: true, delayMs: 2 });
  const bedrock = new BedrockRuntimeClient({
    region: "us-east-1",
    endpoint: vendor.url,
    credentials: { accessKeyId: "AKIAEXAMPLE", secretAccessKey: "secret" },
    maxAttempts: 1,
  });
  const ask = {
    modelId: MODEL,
    system: [{ text: "Answer in French." }],
    messages: [{ role: "user" as const, content: [{ text: "Weather in Paris?" }] }],
    inferenceConfig: { maxTokens: 200, temperature: 0.2 },
  };
  const answers: string[] = [];
  const out = await bedrock.send(new ConverseCommand(ask));
  answers.push(out.output!.message!.content![0]!.text!);
  const streamed = await bedrock.send(new ConverseStreamCommand(ask));
  let text = "";
  for await (const ev of streamed.stream!) text += ev.contentBlockDelta?.delta?.text ?? "";
  answers.push(text);
  await provider.forceFlush();
  await provider.shutdown();
  await client.shutdown();
  return {
    fromProcessor: (await viaProcessor.collector.store.queryRuns({ project })).runs,
    fromOtlp: (await viaOtlp.collector.store.queryRuns({ project })).runs,
    answers,
  };
}

const byStart = (runs: StoredRuns) =>
  runs.map((r) => ({ ...r, parent_run_id: r.parent_run_id ?? null })).sort((a, b) => a.start_time.localeCompare(b.start_time));

describe("@opentelemetry/instrumentation-aws-sdk: Bedrock Converse", () => {
  it("Converse and ConverseStream become llm runs with provider, model and usage, the same through the span processor and OTLP/HTTP", async () => {
    const { fromProcessor, fromOtlp, answers } = await bothWays("aws-bedrock");
    expect(answers).toEqual(["Bonjour ! Il fait 18 °C à Paris.", "Bonjour ! Il fait 18 °C."]);
    expect(fromProcessor).toHaveLength(2);
    expect(byStart(fromOtlp)).toEqual(byStart(fromProcessor));

    const [converse, stream] = byStart(fromProcessor);
    for (const run of [converse!, stream!]) {
      expect(run.run_type).toBe("llm");
      expect(metadataOf(run)).toMatchObject({
        trace_provider: "bedrock",
        trace_model_name: MODEL,
        otel: { convention: "otel-genai", kind: "client" },
      });
      expect(metadataOf(run).invocation_params as Record<string, unknown>).toMatchObject({ max_tokens: 200, temperature: 0.2 });
      // The instrumentation records no messages: the run says so rather than showing an empty prompt.
      expect(metadataOf(run).content_captured).toBe(false);
    }
    // Bedrock's own counts (the fixtures' inputTokens / outputTokens), where the store reads usage from.
    expect(metadataOf(converse!).usage_metadata).toMatchObject({ input_tokens: 21, output_tokens: 14, total_tokens: 35 });
    expect(metadataOf(stream!).usage_metadata).toMatchObject({ input_tokens: 19, output_tokens: 11, total_tokens: 30 });
    expect(converse!.inputs).toEqual({ messages: [] });
    expect(converse!.outputs).toBeUndefined();
    // Where users look (the trace list and tree): the tokens, and a cost from Bedrock's price for the model.
    for (const store of [viaProcessor.collector.store, viaOtlp.collector.store]) {
      const [row] = await store.traceRuns(converse!.trace_id);
      expect(row).toMatchObject({
        model: MODEL,
        provider: "bedrock",
        input_tokens: 21,
        output_tokens: 14,
        total_tokens: 35,
        estimated: false,
      });
      expect(row!.total_cost).toBeGreaterThan(0);
    }
  });
});
