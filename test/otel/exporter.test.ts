import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { context, ROOT_CONTEXT, SpanKind, trace, TraceFlags } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { NodeTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-node";
import { createOtlpTraceExporter, resolveOtlpTarget, TraceSpanProcessor } from "../../src/otel/index.js";
import { Client } from "../../src/ingest/index.js";
import { tempDir } from "../helpers/runs.js";
import { ConfigError } from "../../src/errors.js";
import { startCollector, type Running, sql } from "../helpers/collector.js";
import { maxInWindow, startProxy } from "../helpers/proxy.js";
import { recordingLimiter } from "../helpers/recording-limiter.js";

let col: Running;
beforeAll(async () => {
  col = await startCollector({ apiKey: "otlp-key" });
});
afterAll(async () => {
  await col.close();
});

describe("createOtlpTraceExporter: where it sends", () => {
  it("follows the endpoint option, then the signal-specific, generic and tracepipe variables", () => {
    expect(resolveOtlpTarget({ endpoint: "http://h:1/", env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://x/y" } }).url).toBe(
      "http://h:1/otel/v1/traces",
    );
    expect(
      resolveOtlpTarget({
        env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://collector:4318/custom/path", OTEL_EXPORTER_OTLP_ENDPOINT: "http://g" },
      }).url,
    ).toBe("http://collector:4318/custom/path");
    expect(resolveOtlpTarget({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/", TRACEPIPE_ENDPOINT: "http://t" } }).url).toBe(
      "http://collector:4318/v1/traces",
    );
    expect(resolveOtlpTarget({ env: { TRACEPIPE_ENDPOINT: "http://127.0.0.1:8484" } }).url).toBe("http://127.0.0.1:8484/otel/v1/traces");
    expect(() => resolveOtlpTarget({ env: {} })).toThrow(ConfigError);
    expect(() => resolveOtlpTarget({ endpoint: "ftp://x", env: {} })).toThrow(/http/);
  });

  it("reads k=v header lists (signal-specific over generic), percent-decoded, and adds the API key and project", () => {
    const { headers } = resolveOtlpTarget({
      endpoint: "http://h",
      apiKey: "k1",
      project: "p1",
      env: { OTEL_EXPORTER_OTLP_HEADERS: "Authorization=Bearer%20abc, x-team = core", OTEL_EXPORTER_OTLP_TRACES_HEADERS: "x-team=traces" },
    });
    expect(headers).toEqual({ authorization: "Bearer abc", "x-team": "traces", "x-api-key": "k1", "x-tracepipe-project": "p1" });
    try {
      resolveOtlpTarget({ endpoint: "http://h", env: { OTEL_EXPORTER_OTLP_HEADERS: "good=1,broken" } });
      expect.unreachable();
    } catch (err) {
      expect((err as ConfigError).issues[0]).toMatchObject({ loc: ["OTEL_EXPORTER_OTLP_HEADERS", 1], type: "value_error" });
    }
  });
});

describe("createOtlpTraceExporter: sending", () => {
  it("exports spans to the collector's /otel/v1/traces with the API key, and the project travels with them", async () => {
    const exporter = createOtlpTraceExporter({ endpoint: col.url, apiKey: "otlp-key", project: "otlp-proj", env: {} });
    const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const tracer = provider.getTracer("exporter-test");
    const s = tracer.startSpan("chat gpt-4o", { attributes: { "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o" } });
    s.end();
    await provider.forceFlush();
    await provider.shutdown();
    const rows = sql(col.collector.store).prepare("SELECT name, attributes, resource FROM otel_spans WHERE name = 'chat gpt-4o'").all() as {
      name: string;
      attributes: string;
      resource: string;
    }[];
    expect(rows).toHaveLength(1);
    expect(JSON.parse(rows[0]!.attributes)).toMatchObject({ "gen_ai.request.model": "gpt-4o" });
    expect(JSON.parse(rows[0]!.resource)).toMatchObject({ "tracepipe.project": "otlp-proj" });
  });

  it("waits for the rate limit instead of exceeding it", async () => {
    const proxy = await startProxy(col.url);
    // The exporter's grants, stamped with the clock its limiter decides by: what the exporter controls.
    // Arrival times at a proxy are not (a starved proxy, in this process or its own, stamps a queue of
    // requests at once), so they are checked only for coming after their grants.
    const { limiter, granted } = recordingLimiter();
    const exporter = createOtlpTraceExporter({
      endpoint: proxy.url,
      apiKey: "otlp-key",
      rateLimit: { limit: 3, windowMs: 1000 },
      limiter,
      env: {},
    });
    const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const tracer = provider.getTracer("limited");
    const t0 = performance.now();
    for (let i = 0; i < 8; i++) tracer.startSpan(`span ${i}`).end();
    await provider.forceFlush();
    await provider.shutdown();
    const times = [...proxy.times];
    expect(proxy.statuses).toEqual(Array(8).fill(200));
    await proxy.close();
    const rows = sql(col.collector.store).prepare("SELECT COUNT(*) AS n FROM otel_spans WHERE name LIKE 'span %'").get() as { n: number };
    expect(rows.n).toBe(8);
    // 8 exports at 3 per second need two full windows.
    expect(performance.now() - t0).toBeGreaterThanOrEqual(2000);
    expect(times).toHaveLength(8);
    expect(granted).toHaveLength(8);
    expect(maxInWindow(granted, 1000)).toBeLessThanOrEqual(3);
    // Each export left only once granted: the i-th arrival is no earlier than the i-th grant.
    const arrivals = [...times].sort((a, b) => a - b);
    for (const [i, t] of arrivals.entries()) expect(t).toBeGreaterThanOrEqual(granted[i]!);
  });
});

type Tracer = ReturnType<NodeTracerProvider["getTracer"]>;
type StoredRuns = Awaited<ReturnType<Running["collector"]["store"]["queryRuns"]>>["runs"];

/**
 * Spans traced once and recorded both ways: by the in-process span processor
 * (into a collector of its own) and by the OTLP exporter (into `col`, which
 * converts them). `trace` may flush the provider part of the way through.
 */
async function bothWays(
  project: string,
  trace: (tracer: Tracer, flush: () => Promise<void>) => Promise<void>,
): Promise<{ fromOtlp: StoredRuns; fromProcessor: StoredRuns }> {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const viaProcessor = await startCollector({ apiKey: "otlp-key" });
  try {
    const client = new Client({
      endpoint: viaProcessor.url,
      apiKey: "otlp-key",
      project,
      spoolDir: join(tempDir("tp-otlp-runs-"), "spool"),
      warn: () => {},
    });
    const exporter = createOtlpTraceExporter({ endpoint: col.url, apiKey: "otlp-key", project, env: {} });
    const provider = new NodeTracerProvider({ spanProcessors: [new TraceSpanProcessor({ client }), new SimpleSpanProcessor(exporter)] });
    await trace(provider.getTracer("app"), () => provider.forceFlush());
    await provider.forceFlush();
    await provider.shutdown();
    await client.shutdown();
    return {
      fromOtlp: (await col.collector.store.queryRuns({ project })).runs,
      fromProcessor: (await viaProcessor.collector.store.queryRuns({ project })).runs,
    };
  } finally {
    context.disable();
    await viaProcessor.close();
  }
}

/** Every field of the runs, in tree order: the two ways must make the same runs. */
const placed = (runs: StoredRuns) =>
  runs.map((r) => ({ ...r, parent_run_id: r.parent_run_id ?? null })).sort((a, b) => a.dotted_order.localeCompare(b.dotted_order));

const chatAttributes = (extra: Record<string, string | number> = {}) => ({
  "gen_ai.operation.name": "chat",
  "gen_ai.provider.name": "openai",
  "gen_ai.response.model": "gpt-4o-2024-08-06",
  "gen_ai.input.messages": JSON.stringify([{ role: "user", parts: [{ type: "text", content: "hi" }] }]),
  "gen_ai.output.messages": JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: "hello" }] }]),
  "gen_ai.usage.input_tokens": 3,
  "gen_ai.usage.output_tokens": 1,
  ...extra,
});

describe("the collector turns OTLP spans into runs", () => {
  it("makes the same runs from exported spans as the in-process span processor does, once the root has arrived", async () => {
    const { fromOtlp, fromProcessor } = await bothWays("both-ways", async (tracer, flush) => {
      await tracer.startActiveSpan("agent", { attributes: { "gen_ai.operation.name": "invoke_agent" } }, async (agent) => {
        await tracer.startActiveSpan("GET /x", { attributes: { "http.request.method": "GET" } }, async (http) => {
          tracer.startSpan("chat gpt-4o", { attributes: chatAttributes({ "gen_ai.response.time_to_first_chunk": 0.05 }) }).end();
          await flush();
          // The root has not arrived yet: spans are stored, no runs so far.
          expect(await col.collector.store.countRuns("both-ways")).toBe(0);
          http.end();
        });
        agent.end();
      });
    });
    expect(fromOtlp).toHaveLength(2);
    expect(placed(fromOtlp)).toEqual(placed(fromProcessor));
    const chat = fromOtlp.find((r) => r.name === "chat gpt-4o")!;
    expect(chat.parent_run_id).toBe(fromOtlp.find((r) => r.name === "agent")!.id);
    expect((chat.outputs as { messages: { usage_metadata: unknown }[] }).messages[0]!.usage_metadata).toEqual({
      input_tokens: 3,
      output_tokens: 1,
      total_tokens: 4,
      input_cost: 0.0000075,
      output_cost: 0.00001,
      total_cost: 0.0000175,
    });
  });

  it("makes runs of a service called by another: a span whose parent is remote is a root, as the processor takes it", async () => {
    const { fromOtlp, fromProcessor } = await bothWays("callee", async (tracer, flush) => {
      // The caller's span, as a `traceparent` header brings it: in another process, exporting elsewhere.
      const caller = trace.setSpanContext(ROOT_CONTEXT, {
        traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
        spanId: "00f067aa0ba902b7",
        traceFlags: TraceFlags.SAMPLED,
        isRemote: true,
      });
      await tracer.startActiveSpan(
        "POST /answer",
        { kind: SpanKind.SERVER, attributes: { "http.request.method": "POST" } },
        caller,
        async (server) => {
          await tracer.startActiveSpan("agent", { attributes: { "gen_ai.operation.name": "invoke_agent" } }, async (agent) => {
            tracer.startSpan("chat gpt-4o", { attributes: chatAttributes() }).end();
            agent.end();
          });
          await flush();
          // The local root (the server span) has not ended: no runs yet.
          expect(await col.collector.store.countRuns("callee")).toBe(0);
          server.end();
        },
      );
    });
    const stored = sql(col.collector.store)
      .prepare("SELECT name, parent_span_id, parent_remote FROM otel_spans WHERE trace_id = ? ORDER BY name")
      .all("4bf92f3577b34da6a3ce929d0e0e4736");
    expect(stored).toEqual([
      { name: "POST /answer", parent_span_id: "00f067aa0ba902b7", parent_remote: 1 },
      { name: "agent", parent_span_id: expect.any(String), parent_remote: 0 },
      { name: "chat gpt-4o", parent_span_id: expect.any(String), parent_remote: 0 },
    ]);
    expect(fromOtlp.map((r) => r.name).sort()).toEqual(["agent", "chat gpt-4o"]);
    expect(placed(fromOtlp)).toEqual(placed(fromProcessor));
    const agent = fromOtlp.find((r) => r.name === "agent")!;
    expect(agent.parent_run_id ?? null).toBeNull();
    expect(fromOtlp.find((r) => r.name === "chat gpt-4o")!.parent_run_id).toBe(agent.id);
  });
});
