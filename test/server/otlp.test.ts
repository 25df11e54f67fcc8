import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { context, trace } from "@opentelemetry/api";
import { startCollector, type Running } from "../helpers/collector.js";

let c: Running;
beforeAll(async () => {
  c = await startCollector();
});
afterAll(async () => {
  await c.close();
});

function makeSpans() {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
  const tracer = provider.getTracer("tracepipe-test", "1.2.3");
  tracer.startActiveSpan("parent", (parent) => {
    // No global context manager here: pass the parent explicitly.
    const child = tracer.startSpan(
      "chat gpt-4o",
      {
        attributes: {
          "gen_ai.operation.name": "chat",
          "gen_ai.usage.input_tokens": 12,
          "gen_ai.request.stop_sequences": ["a", "b"],
          "gen_ai.is_stream": true,
        },
      },
      trace.setSpan(context.active(), parent),
    );
    child.addEvent("gen_ai.content.prompt", { "gen_ai.prompt": '[{"role":"user","content":"hi"}]' });
    child.end();
    parent.end();
  });
  return memory.getFinishedSpans();
}

type SpanRow = {
  span_id: string;
  parent_span_id: string | null;
  name: string;
  attributes: string;
  events: string;
  scope: string;
  start_time: string;
};
/** The trace's staged spans by name, through the store contract (so the test runs on either store). */
const rows = async (traceId: string) =>
  ((await c.collector.store.spansOfTrace(traceId)) as SpanRow[]).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

describe("POST /otel/v1/traces", () => {
  it("accepts OTLP protobuf from the OTel serializer with attributes intact", async () => {
    const spans = makeSpans();
    const body = ProtobufTraceSerializer.serializeRequest(spans)!;
    const res = await fetch(c.url + "/otel/v1/traces", { method: "POST", headers: { "content-type": "application/x-protobuf" }, body });
    expect(res.status).toBe(200);
    const stored = await rows(spans[0]!.spanContext().traceId);
    expect(stored.map((s) => s.name)).toEqual(["chat gpt-4o", "parent"]);
    const child = stored[0]!;
    expect(JSON.parse(child.attributes)).toEqual({
      "gen_ai.operation.name": "chat",
      "gen_ai.usage.input_tokens": 12,
      "gen_ai.request.stop_sequences": ["a", "b"],
      "gen_ai.is_stream": true,
    });
    expect(child.parent_span_id).toBe(stored[1]!.span_id);
    expect(JSON.parse(child.events)[0]).toMatchObject({
      name: "gen_ai.content.prompt",
      attributes: { "gen_ai.prompt": '[{"role":"user","content":"hi"}]' },
    });
    expect(JSON.parse(child.scope)).toMatchObject({ name: "tracepipe-test", version: "1.2.3" });
    expect(child.start_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  it("accepts OTLP JSON from the real OTLPTraceExporter", async () => {
    const spans = makeSpans();
    const exporter = new OTLPTraceExporter({ url: c.url + "/otel/v1/traces" });
    const result = await new Promise<{ code: number; error?: Error }>((resolve) => exporter.export(spans, resolve));
    await exporter.shutdown();
    expect(result.code).toBe(0);
    expect(await rows(spans[0]!.spanContext().traceId)).toHaveLength(2);
  });

  it("rejects a malformed body with 400 and an unknown content type with 415", async () => {
    expect(
      (await fetch(c.url + "/otel/v1/traces", { method: "POST", headers: { "content-type": "application/json" }, body: "{" })).status,
    ).toBe(400);
    expect(
      (
        await fetch(c.url + "/otel/v1/traces", {
          method: "POST",
          headers: { "content-type": "application/x-protobuf" },
          body: Buffer.from([0x0a, 0xff, 0xff]),
        })
      ).status,
    ).toBe(400);
    expect((await fetch(c.url + "/otel/v1/traces", { method: "POST", headers: { "content-type": "text/plain" }, body: "x" })).status).toBe(
      415,
    );
  });
});
