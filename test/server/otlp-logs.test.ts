/**
 * OTLP log records at the collector: stored by trace and span id, joined to
 * the span's run whichever arrives first, kept and visible when they belong
 * to no LLM span; and a run whose instrumentation captured no content keeps
 * its usage where lists, totals and costs read it.
 */
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { context, trace } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from "@opentelemetry/sdk-logs";
import { ProtobufLogsSerializer, ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { startCollector, sql, type Running } from "../helpers/collector.js";
import { meta } from "../helpers/otel.js";

let c: Running;
beforeAll(async () => {
  c = await startCollector();
});
afterAll(() => c.close());

/** A traced chat call (usage on the span, content or not as log records) under an HTTP span, in memory. */
function traced(o: { content: boolean }) {
  const spans = new InMemorySpanExporter();
  const records = new InMemoryLogRecordExporter();
  const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }).getTracer("app");
  const logger = new LoggerProvider({ processors: [new SimpleLogRecordProcessor({ exporter: records })] }).getLogger(
    "@opentelemetry/instrumentation-openai",
  );
  const http = tracer.startSpan("GET /ask", { attributes: { "http.request.method": "GET" } });
  const httpCtx = trace.setSpan(context.active(), http);
  const chat = tracer.startSpan(
    "chat gpt-4o",
    {
      attributes: {
        "gen_ai.operation.name": "chat",
        "gen_ai.system": "openai",
        "gen_ai.request.model": "gpt-4o",
        "gen_ai.response.model": "gpt-4o-2024-08-06",
        "gen_ai.usage.input_tokens": 25,
        "gen_ai.usage.output_tokens": 9,
      },
    },
    httpCtx,
  );
  const chatCtx = trace.setSpan(httpCtx, chat);
  logger.emit({
    context: chatCtx,
    attributes: { "event.name": "gen_ai.user.message" },
    body: o.content ? { content: "Weather in Paris?" } : {},
  });
  logger.emit({
    context: chatCtx,
    attributes: { "event.name": "gen_ai.choice" },
    body: { index: 0, finish_reason: "stop", message: o.content ? { content: "Rainy." } : {} },
  });
  // A record of the HTTP span, which makes no run of its own.
  logger.emit({ context: httpCtx, eventName: "app.audit", body: "asked" });
  chat.end();
  http.end();
  return { spans: spans.getFinishedSpans(), records: records.getFinishedLogRecords(), traceId: chat.spanContext().traceId };
}

/** The runs made of an OTel trace (run trace ids are the root run's id, not the OTel trace id). */
const runsOf = async (traceId: string) =>
  (await c.collector.store.queryRuns({})).runs.filter((r) => (meta(r).otel as { trace_id?: string }).trace_id === traceId);

const post = (path: string, body: Uint8Array, gzip = false) =>
  fetch(c.url + path, {
    method: "POST",
    headers: { "content-type": "application/x-protobuf", ...(gzip ? { "content-encoding": "gzip" } : {}) },
    body: gzip ? gzipSync(body) : body,
  });

describe("OTLP logs at the collector", () => {
  it("takes gzipped protobuf log records on /v1/logs before their spans, and joins them when the spans come", async () => {
    const t = traced({ content: true });
    expect((await post("/v1/logs", ProtobufLogsSerializer.serializeRequest(t.records)!, true)).status).toBe(200);
    expect(sql(c.collector.store).prepare("SELECT event_name FROM otel_logs WHERE trace_id = ? ORDER BY time, seq").all(t.traceId)).toEqual(
      [{ event_name: "gen_ai.user.message" }, { event_name: "gen_ai.choice" }, { event_name: "app.audit" }],
    );
    expect(await runsOf(t.traceId)).toEqual([]);
    expect((await post("/v1/traces", ProtobufTraceSerializer.serializeRequest(t.spans)!)).status).toBe(200);
    const runs = await runsOf(t.traceId);
    expect(runs).toHaveLength(1);
    const llm = runs[0]!;
    expect(llm.inputs).toEqual({ messages: [{ role: "user", content: [{ type: "text", text: "Weather in Paris?" }] }] });
    expect((llm.outputs as { messages: unknown[] }).messages).toEqual([
      expect.objectContaining({ role: "assistant", content: [{ type: "text", text: "Rainy." }], extras: { finish_reason: "stop" } }),
    ]);
    // The HTTP span makes no run: its record is kept on the nearest run of its trace, the chat's.
    expect(llm.events).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: "log", kwargs: expect.objectContaining({ event_name: "app.audit", body: "asked" }) }),
      ]),
    );
    expect(meta(llm).content_captured).toBeUndefined();
  });

  it("says when the instrumentation captured no content, and lists, totals and prices the usage kept on the run", async () => {
    const t = traced({ content: false });
    expect((await post("/otel/v1/traces", ProtobufTraceSerializer.serializeRequest(t.spans)!)).status).toBe(200);
    expect((await post("/otel/v1/logs", ProtobufLogsSerializer.serializeRequest(t.records)!)).status).toBe(200);
    const [llm] = await runsOf(t.traceId);
    expect(llm!.inputs).toEqual({ messages: [] });
    expect(meta(llm!)).toMatchObject({
      content_captured: false,
      usage_metadata: {
        input_tokens: 25,
        output_tokens: 9,
        total_tokens: 34,
        input_cost: 0.0000625,
        output_cost: 0.00009,
        total_cost: 0.0001525,
      },
    });
    const [row] = await c.collector.store.traceRuns(llm!.trace_id);
    expect(row).toMatchObject({ input_tokens: 25, output_tokens: 9, total_tokens: 34, total_cost: 0.0001525 });
    const summary = (await c.collector.store.listTraces({})).traces.find((s) => s.trace_id === llm!.trace_id)!;
    expect(summary).toMatchObject({ total_tokens: 34, total_cost: 0.0001525 });
  });

  it("answers a log request of the wrong shape with 400 and an unknown content type with 415", async () => {
    const bad = await fetch(c.url + "/v1/logs", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ resourceLogs: [{ scopeLogs: "x" }] }),
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { detail: string }).detail).toMatch(/ExportLogsServiceRequest: resourceLogs\.0\.scopeLogs/);
    expect((await fetch(c.url + "/v1/logs", { method: "POST", headers: { "content-type": "text/plain" }, body: "x" })).status).toBe(415);
  });
});
