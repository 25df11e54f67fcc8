import { describe, expect, it } from "vitest";
import { join } from "node:path";
import OpenAI from "openai";
import { trace, context, SpanStatusCode } from "@opentelemetry/api";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { OpenAIInstrumentation } from "@traceloop/instrumentation-openai";
import { TraceSpanProcessor } from "../../src/otel/index.js";
import { Client } from "../../src/ingest/index.js";
import { fixture } from "../helpers/replay-server.js";
import { messages, meta, otelEnvironment } from "../helpers/otel.js";
import { tempDir } from "../helpers/runs.js";
import { get_encoding, type TiktokenEncoding } from "tiktoken";
import { setEncoderLoader } from "../../src/tokens/index.js";

const env = otelEnvironment("otel-key");

/** A tracer provider with our processor, and the real OpenLLMetry instrumentation on the real openai client. */
function setup(
  project: string,
  filter?: ConstructorParameters<typeof TraceSpanProcessor>[0] extends infer O ? (O extends { filter?: infer F } ? F : never) : never,
) {
  const client = new Client({
    endpoint: env.col.url,
    apiKey: "otel-key",
    project,
    spoolDir: join(tempDir("tp-otel-"), "spool"),
    warn: () => {},
  });
  const processor = new TraceSpanProcessor({ client, filter });
  const provider = new NodeTracerProvider({ spanProcessors: [processor] });
  const instrumentation = new OpenAIInstrumentation({ traceContent: true });
  instrumentation.setTracerProvider(provider);
  instrumentation.manuallyInstrument(OpenAI);
  const tracer = provider.getTracer("app");
  const openai = new OpenAI({ apiKey: "sk-x", baseURL: `${env.vendor.url}/v1`, maxRetries: 0 });
  return { client, processor, provider, tracer, openai, instrumentation };
}

describe("TraceSpanProcessor with @traceloop/instrumentation-openai", () => {
  it("turns the instrumentation's spans into llm runs under the nearest kept ancestor, with messages, tools, usage and model", async () => {
    const { client, provider, tracer, openai, instrumentation } = setup("otel-openllmetry");
    const toolCompletion = {
      ...fixture("openai-completion.json"),
      id: "chatcmpl-tool",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: null,
            refusal: null,
            tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }],
          },
          finish_reason: "tool_calls",
          logprobs: null,
        },
      ],
    };
    env.vendor.push({ json: toolCompletion }, { sse: fixture("openai-stream.json"), delayMs: 2 });
    const tools = [
      {
        type: "function" as const,
        function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } },
      },
    ];

    await tracer.startActiveSpan(
      "weather agent",
      { attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather" } },
      async (agent) => {
        // An HTTP-framework span between the agent and the model calls: dropped by the default filter.
        await tracer.startActiveSpan("GET /internal/route", { attributes: { "http.request.method": "GET" } }, async (http) => {
          await openai.chat.completions.create({
            model: "gpt-4o",
            messages: [
              { role: "system", content: "Be terse." },
              { role: "user", content: "Weather in Paris?" },
            ],
            tools,
            temperature: 0,
          });
          let text = "";
          for await (const c of await openai.chat.completions.create({
            model: "gpt-4o-mini",
            stream: true,
            messages: [{ role: "user", content: "Say hello" }],
          }))
            text += c.choices[0]?.delta.content ?? "";
          expect(text).toBe("Hello! How can I help?");
          http.end();
        });
        agent.end();
      },
    );
    await provider.forceFlush();
    await provider.shutdown();
    instrumentation.disable();
    await client.shutdown();

    const { runs } = await env.col.collector.store.queryRuns({ project: "otel-openllmetry" });
    expect(runs.map((r) => r.name).sort()).toEqual(["chat gpt-4o", "chat gpt-4o-mini", "weather agent"]);
    const agent = runs.find((r) => r.name === "weather agent")!;
    const tool = runs.find((r) => r.name === "chat gpt-4o")!;
    const stream = runs.find((r) => r.name === "chat gpt-4o-mini")!;
    expect(agent).toMatchObject({ run_type: "chain", trace_id: agent.id });
    expect(agent.parent_run_id ?? null).toBeNull();
    for (const r of [tool, stream]) {
      expect(r.run_type).toBe("llm");
      expect(r.parent_run_id).toBe(agent.id); // re-attached past the filtered HTTP span
      expect(r.trace_id).toBe(agent.id);
      expect(r.dotted_order.startsWith(agent.dotted_order + ".")).toBe(true);
      expect(r.dotted_order.split(".")).toHaveLength(2);
      expect(r.detected_format).toBe("native");
    }
    expect(meta(tool)).toMatchObject({
      trace_provider: "openai",
      trace_model_name: "gpt-4o-2024-08-06",
      otel: { convention: "otel-genai", scope: expect.stringContaining("openai") },
    });
    expect((meta(tool).invocation_params as Record<string, unknown>).tools).toEqual(tools);
    expect(messages(tool.inputs)).toEqual([
      { role: "system", content: [{ type: "text", text: "Be terse." }] },
      { role: "user", content: [{ type: "text", text: "Weather in Paris?" }] },
    ]);
    const out = messages(tool.outputs)[0]!;
    expect(out.content).toEqual([{ type: "tool_call", id: "call_1", name: "get_weather", args: { city: "Paris" } }]);
    // gpt-4o-2024-08-06 priced as gpt-4o.
    expect(out.usage_metadata).toEqual({
      input_tokens: 25,
      output_tokens: 9,
      total_tokens: 34,
      input_cost: 0.0000625,
      output_cost: 0.00009,
      total_cost: 0.0001525,
    });
    // The stream's spans carry no usage: estimated with tiktoken, and marked so.
    expect(messages(stream.outputs)[0]!.content).toEqual([{ type: "text", text: "Hello! How can I help?" }]);
    expect(messages(stream.outputs)[0]!.usage_metadata).toMatchObject({ estimated: true, output_tokens: expect.any(Number) });
  });

  it("keeps every span with filter 'all', records errors, and puts time to first token on the new_token event", async () => {
    const { client, provider, tracer } = setup("otel-all", "all");
    tracer.startActiveSpan("root job", (root) => {
      const started = Date.now();
      const llm = tracer.startSpan("chat claude", {
        startTime: started,
        attributes: {
          "gen_ai.operation.name": "chat",
          "gen_ai.provider.name": "anthropic",
          "gen_ai.request.model": "claude-sonnet-4-5",
          "gen_ai.input.messages": JSON.stringify([{ role: "user", parts: [{ type: "text", content: "hi" }] }]),
        },
      });
      llm.setAttributes({
        "gen_ai.output.messages": JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: "hello" }] }]),
        "gen_ai.usage.input_tokens": 8,
        "gen_ai.usage.output_tokens": 2,
        "gen_ai.response.time_to_first_chunk": 0.12,
      });
      llm.end(started + 400);
      const failing = tracer.startSpan("db query", { attributes: { "db.system": "postgresql" } }, trace.setSpan(context.active(), root));
      failing.recordException(new TypeError("connection reset"));
      failing.setStatus({ code: SpanStatusCode.ERROR });
      failing.end();
      root.end();
    });
    await provider.forceFlush();
    await client.shutdown();
    const { runs } = await env.col.collector.store.queryRuns({ project: "otel-all" });
    const byName = Object.fromEntries(runs.map((r) => [r.name, r]));
    expect(Object.keys(byName).sort()).toEqual(["chat claude", "db query", "root job"]);
    expect(byName["root job"]!.run_type).toBe("chain");
    expect(byName["db query"]).toMatchObject({
      run_type: "chain",
      error: "TypeError: connection reset",
      parent_run_id: byName["root job"]!.id,
      inputs: { otel_attributes: { "db.system": "postgresql" } },
    });
    const llm = byName["chat claude"]!;
    expect(llm.parent_run_id).toBe(byName["root job"]!.id);
    const start = Date.parse(llm.start_time);
    expect(Date.parse(llm.first_token_time!)).toBe(start + 120);
    expect(messages(llm.outputs)[0]!.usage_metadata).toEqual({
      input_tokens: 8,
      output_tokens: 2,
      total_tokens: 10,
      input_cost: 0.000024,
      output_cost: 0.00003,
      total_cost: 0.000054,
    });
  });

  it("still records a recognised span whose attributes are malformed, keeping what parsed and the raw value with the reason, and never throws into the app", async () => {
    const { client, provider, tracer } = setup("otel-bad");
    const s = tracer.startSpan("chat broken", {
      attributes: {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o",
        "gen_ai.input.messages": "[{oops",
        "gen_ai.usage.input_tokens": 5,
        "gen_ai.usage.output_tokens": 2,
      },
    });
    expect(() => s.end()).not.toThrow();
    await provider.forceFlush();
    await client.shutdown();
    const { runs } = await env.col.collector.store.queryRuns({ project: "otel-bad" });
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ run_type: "llm", inputs: { messages: [] } });
    expect(meta(runs[0]!)).toMatchObject({
      trace_provider: "openai",
      trace_model_name: "gpt-4o",
      usage_metadata: { input_tokens: 5, output_tokens: 2, total_tokens: 7 },
      otel: { unread_attributes: { "gen_ai.input.messages": "[{oops" } },
    });
    expect(meta(runs[0]!).normalize_error).toEqual([expect.objectContaining({ loc: ["gen_ai.input.messages"], type: "json_invalid" })]);
  });

  it("keeps every legacy indexed prompt and completion attribute when one of them is malformed (a role missing)", async () => {
    const { client, provider, tracer } = setup("otel-legacy-bad");
    const s = tracer.startSpan("openai.chat", {
      attributes: {
        "gen_ai.system": "openai",
        "gen_ai.request.model": "gpt-4o",
        "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.0.content": "hi",
        "gen_ai.prompt.1.content": "and this, with no role",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": "hello",
      },
    });
    s.end();
    await provider.forceFlush();
    await client.shutdown();
    const { runs } = await env.col.collector.store.queryRuns({ project: "otel-legacy-bad" });
    expect(runs).toHaveLength(1);
    const m = meta(runs[0]!);
    expect(m.normalize_error).toEqual([expect.objectContaining({ loc: [expect.stringMatching(/^gen_ai\.prompt\.1/)] })]);
    // Nothing the span said is lost: the whole family the bad key belongs to is kept raw.
    expect((m.otel as Record<string, unknown>).unread_attributes).toEqual({
      "gen_ai.prompt.0.role": "user",
      "gen_ai.prompt.0.content": "hi",
      "gen_ai.prompt.1.content": "and this, with no role",
    });
  });

  it("marks a run whose span lost attributes to the SDK's attribute limit, and the limit can be raised", async () => {
    const project = "otel-limit";
    const client = new Client({
      endpoint: env.col.url,
      apiKey: "otel-key",
      project,
      spoolDir: join(tempDir("tp-otel-"), "spool"),
      warn: () => {},
    });
    const attrs: Record<string, string> = { "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o" };
    for (let i = 0; i < 80; i++) {
      attrs[`gen_ai.prompt.${i}.role`] = "user";
      attrs[`gen_ai.prompt.${i}.content`] = `turn ${i}`;
    }
    for (const [name, limits] of [
      ["default limit", undefined],
      ["raised limit", { attributeCountLimit: 1024 }],
    ] as const) {
      const provider = new NodeTracerProvider({ spanProcessors: [new TraceSpanProcessor({ client })], spanLimits: limits });
      provider.getTracer("t").startSpan(name, { attributes: attrs }).end();
      await provider.forceFlush();
    }
    await client.shutdown();
    const { runs } = await env.col.collector.store.queryRuns({ project });
    const cut = runs.find((r) => r.name === "default limit")!;
    const whole = runs.find((r) => r.name === "raised limit")!;
    expect((meta(cut).otel as Record<string, unknown>).dropped_attributes).toBe(162 - 128);
    expect(messages(cut.inputs).length).toBeLessThan(80);
    expect((meta(whole).otel as Record<string, unknown>).dropped_attributes).toBeUndefined();
    expect(messages(whole.inputs)).toHaveLength(80);
  });

  it("only queues spans at their end, converts them after the current turn, and delivers each exactly once", async () => {
    const project = "otel-deferred";
    const client = new Client({
      endpoint: env.col.url,
      apiKey: "otel-key",
      project,
      spoolDir: join(tempDir("tp-otel-"), "spool"),
      warn: () => {},
    });
    const processor = new TraceSpanProcessor({ client });
    const provider = new NodeTracerProvider({ spanProcessors: [processor] });
    const tracer = provider.getTracer("t");
    const attrs = {
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": "gpt-4o",
      "gen_ai.input.messages": JSON.stringify([{ role: "user", parts: [{ type: "text", content: "hi" }] }]),
      "gen_ai.output.messages": JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: "hello there" }] }]),
    };
    for (let i = 0; i < 20; i++) tracer.startSpan(`chat ${i}`, { attributes: attrs }).end();
    // Nothing read yet: the program's turn is not over.
    expect(processor.stats).toEqual({ queued: 20, recorded: 0, dropped: 0, evicted: 0 });
    // Converted in later turns with no flush asked for (a few per turn when a turn's time slice runs out).
    while (processor.stats.queued > 0) await new Promise((r) => setImmediate(r));
    expect(processor.stats).toEqual({ queued: 0, recorded: 20, dropped: 0, evicted: 0 });
    await client.flush();
    const { runs } = await env.col.collector.store.queryRuns({ project });
    expect(runs.map((r) => r.name).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `chat ${i}`).sort());
    // The estimate (no usage on these spans) was made at conversion, not lost by deferring it.
    for (const r of runs)
      expect(messages(r.outputs)[0]!.usage_metadata).toMatchObject({ estimated: true, output_tokens: expect.any(Number) });
    await provider.shutdown();
    await client.shutdown();
  });

  it("neither loads an encoder nor estimates inside onEnd: the estimate is made at conversion", async () => {
    const project = "otel-no-encoder-in-onend";
    const loaded: string[] = [];
    setEncoderLoader((enc) => {
      loaded.push(enc);
      return get_encoding(enc as TiktokenEncoding);
    });
    const client = new Client({
      endpoint: env.col.url,
      apiKey: "otel-key",
      project,
      spoolDir: join(tempDir("tp-otel-"), "spool"),
      warn: () => {},
    });
    const processor = new TraceSpanProcessor({ client });
    const provider = new NodeTracerProvider({ spanProcessors: [processor] });
    const attrs = {
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": "gpt-4o",
      "gen_ai.input.messages": JSON.stringify([{ role: "user", parts: [{ type: "text", content: "count me" }] }]),
      "gen_ai.output.messages": JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: "counted" }] }]),
    };
    provider.getTracer("t").startSpan("chat gpt-4o", { attributes: attrs }).end();
    expect(loaded).toEqual([]);
    await processor.forceFlush();
    expect(loaded).toEqual(["o200k_base"]);
    await client.shutdown();
    const { runs } = await env.col.collector.store.queryRuns({ project });
    expect(messages(runs[0]!.outputs)[0]!.usage_metadata).toMatchObject({ estimated: true, output_tokens: expect.any(Number) });
  });

  it("shutdown delivers spans still queued, with their parentage", async () => {
    const project = "otel-shutdown-queued";
    const client = new Client({
      endpoint: env.col.url,
      apiKey: "otel-key",
      project,
      spoolDir: join(tempDir("tp-otel-"), "spool"),
      warn: () => {},
    });
    const processor = new TraceSpanProcessor({ client, filter: "all" });
    const provider = new NodeTracerProvider({ spanProcessors: [processor] });
    const tracer = provider.getTracer("t");
    tracer.startActiveSpan("parent", (p) => {
      tracer.startSpan("child").end();
      p.end();
    });
    expect(processor.stats.queued).toBe(2);
    await provider.shutdown();
    await client.shutdown();
    const { runs } = await env.col.collector.store.queryRuns({ project });
    const parent = runs.find((r) => r.name === "parent")!;
    expect(runs).toHaveLength(2);
    expect(runs.find((r) => r.name === "child")!.parent_run_id).toBe(parent.id);
  });

  it("drops spans past maxQueueSize, counts them, hangs later descendants under the nearest recorded ancestor, and delivers the rest", async () => {
    const project = "otel-queue-full";
    const client = new Client({
      endpoint: env.col.url,
      apiKey: "otel-key",
      project,
      spoolDir: join(tempDir("tp-otel-"), "spool"),
      warn: () => {},
    });
    const processor = new TraceSpanProcessor({ client, filter: "all", maxQueueSize: 2 });
    const provider = new NodeTracerProvider({ spanProcessors: [processor] });
    const tracer = provider.getTracer("t");
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on("warning", onWarning);
    const root = tracer.startSpan("root");
    const underRoot = trace.setSpan(context.active(), root);
    const middle = tracer.startSpan("middle", {}, underRoot);
    const late = tracer.startSpan("late", {}, trace.setSpan(context.active(), middle));
    tracer.startSpan("a", {}, underRoot).end();
    tracer.startSpan("b", {}, underRoot).end();
    middle.end(); // the queue holds a and b: dropped
    expect(processor.stats).toEqual({ queued: 2, recorded: 0, dropped: 1, evicted: 0 });
    await processor.forceFlush();
    late.end(); // outlived its dropped parent: room again, so it is queued
    root.end();
    await processor.forceFlush();
    process.off("warning", onWarning);
    expect(processor.stats).toEqual({ queued: 0, recorded: 4, dropped: 1, evicted: 0 });
    await client.shutdown();
    const { runs } = await env.col.collector.store.queryRuns({ project });
    expect(runs.map((r) => r.name).sort()).toEqual(["a", "b", "late", "root"]);
    const rootRun = runs.find((r) => r.name === "root")!;
    expect(runs.find((r) => r.name === "late")!.parent_run_id).toBe(rootRun.id);
    expect(warnings.some((w) => /maxQueueSize/.test(w))).toBe(true);
  });

  it("rejects a maxQueueSize that is not a positive integer, naming the field", () => {
    expect(() => new TraceSpanProcessor({ maxQueueSize: 0 })).toThrow(/maxQueueSize/);
    expect(() => new TraceSpanProcessor({ maxOpenSpans: 1.5 })).toThrow(/maxOpenSpans/);
  });

  it("rejects an unknown filter with the field named", () => {
    expect(() => new TraceSpanProcessor({ filter: "some" as never })).toThrow(/filter|genai/);
  });
});
