/**
 * The span processor behind real instrumentations from npm, each driving a real
 * client against the loopback replay server: OpenInference's OpenAI
 * instrumentation, and the Vercel AI SDK's own telemetry with @ai-sdk/openai.
 * (OpenLLMetry's is in processor.test.ts: each file gets a fresh module graph,
 * so two instrumentations never patch the same OpenAI class here.)
 */
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import OpenAI from "openai";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { OpenAIInstrumentation } from "@arizeai/openinference-instrumentation-openai";
import { generateText, jsonSchema, streamText, tool } from "ai";
import { createOpenAI } from "@ai-sdk/openai";
import { TraceSpanProcessor } from "../../src/otel/index.js";
import { Client } from "../../src/ingest/index.js";
import { fixture } from "../helpers/replay-server.js";
import { messages, meta, otelEnvironment } from "../helpers/otel.js";
import { tempDir } from "../helpers/runs.js";
import { comparable } from "../helpers/genai-calls.js";
import { wrapOpenAI } from "../../src/tracing/index.js";
import { MemoryWriter } from "../../src/run/memory.js";

const env = otelEnvironment("k");

function pipeline(project: string) {
  const client = new Client({
    endpoint: env.col.url,
    apiKey: "k",
    project,
    spoolDir: join(tempDir("tp-otel-i-"), "spool"),
    warn: () => {},
  });
  const provider = new NodeTracerProvider({ spanProcessors: [new TraceSpanProcessor({ client })] });
  return { client, provider };
}

describe("@arizeai/openinference-instrumentation-openai", () => {
  it("its LLM spans become llm runs with multimodal input, tool calls and results, usage and model", async () => {
    const { client, provider } = pipeline("oi");
    const inst = new OpenAIInstrumentation();
    inst.setTracerProvider(provider);
    inst.manuallyInstrument(OpenAI);
    env.vendor.push({ json: fixture("openai-completion.json") });
    const openai = new OpenAI({ apiKey: "sk-x", baseURL: `${env.vendor.url}/v1`, maxRetries: 0 });
    await provider
      .getTracer("app")
      .startActiveSpan("answer", { attributes: { "openinference.span.kind": "CHAIN", "input.value": "q" } }, async (root) => {
        await openai.chat.completions.create({
          model: "gpt-4o",
          temperature: 0.5,
          messages: [
            { role: "system", content: "sys" },
            {
              role: "user",
              content: [
                { type: "text", text: "what is this?" },
                { type: "image_url", image_url: { url: "data:image/png;base64,iVBOR" } },
              ],
            },
            {
              role: "assistant",
              content: null,
              tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: '{"a":1}' } }],
            },
            { role: "tool", tool_call_id: "c1", content: "res" },
          ],
        });
        root.end();
      });
    await provider.forceFlush();
    inst.disable();
    await client.shutdown();
    const { runs } = await env.col.collector.store.queryRuns({ project: "oi" });
    const root = runs.find((r) => r.name === "answer")!;
    const llm = runs.find((r) => r.run_type === "llm")!;
    expect(runs).toHaveLength(2);
    expect(root).toMatchObject({ run_type: "chain", inputs: { input: "q" } });
    expect(llm.parent_run_id).toBe(root.id);
    expect(meta(llm)).toMatchObject({
      trace_provider: "openai",
      trace_model_name: "gpt-4o-2024-08-06",
      invocation_params: { temperature: 0.5 },
      otel: { convention: "openinference" },
    });
    expect(messages(llm.inputs)).toEqual([
      { role: "system", content: [{ type: "text", text: "sys" }] },
      {
        role: "user",
        content: [
          { type: "text", text: "what is this?" },
          { type: "image", base64: "iVBOR", mime_type: "image/png" },
        ],
      },
      { role: "assistant", content: [{ type: "tool_call", id: "c1", name: "f", args: { a: 1 } }] },
      { role: "tool", tool_call_id: "c1", content: [{ type: "text", text: "res" }] },
    ]);
    expect(messages(llm.outputs)).toEqual([
      {
        role: "assistant",
        content: [{ type: "text", text: "Paris is 18°C and rainy." }],
        extras: { finish_reason: "stop" },
        usage_metadata: {
          input_tokens: 25,
          output_tokens: 9,
          total_tokens: 34,
          input_cost: 0.0000625,
          output_cost: 0.00009,
          total_cost: 0.0001525,
        },
      },
    ]);
  });
});

describe("@arizeai/openinference-instrumentation-openai: the Responses API", () => {
  it("reads input_text, input_image, output_text and refusal parts as wrapOpenAI does: text, image, text, a refusal", async () => {
    const { client, provider } = pipeline("oi-responses");
    const inst = new OpenAIInstrumentation();
    inst.setTracerProvider(provider);
    inst.manuallyInstrument(OpenAI);
    const reply = fixture("openai-response.json");
    const message = reply.output.find((o: { type: string }) => o.type === "message");
    message.content.push({ type: "refusal", refusal: "I can't share that." });
    const request = {
      model: "gpt-4.1",
      input: [
        {
          role: "user" as const,
          content: [
            { type: "input_text" as const, text: "Weather here?" },
            { type: "input_image" as const, image_url: "https://img.test/sky.png", detail: "auto" as const },
          ],
        },
      ],
    };
    env.vendor.push({ json: reply }, { json: reply });
    const openai = new OpenAI({ apiKey: "sk-x", baseURL: `${env.vendor.url}/v1`, maxRetries: 0 });
    await openai.responses.create(request);
    await provider.forceFlush();
    inst.disable();
    await client.shutdown();
    const writer = new MemoryWriter();
    await wrapOpenAI(openai, { client: writer }).responses.create(request);
    const ref = [...writer.runs.values()][0] as unknown as { inputs: unknown; outputs: unknown };
    // The words and media of the reply: OpenInference keeps no item ids, citations or response fields.
    const parts = (ms: Record<string, unknown>[]) =>
      ms.flatMap((m) =>
        (m.content as Record<string, unknown>[])
          .filter((b) => b.type === "text" || b.type === "image")
          .map(({ type, text, url, extras }) => ({ type, text, url, refusal: (extras as { refusal?: true } | undefined)?.refusal })),
      );

    const { runs } = await env.col.collector.store.queryRuns({ project: "oi-responses" });
    const llm = runs.find((r) => r.run_type === "llm")!;
    expect(comparable(messages(llm.inputs))).toEqual(comparable(messages(ref.inputs)));
    expect(messages(llm.inputs)[0]!.content).toEqual([
      { type: "text", text: "Weather here?" },
      { type: "image", url: "https://img.test/sky.png" },
    ]);
    expect(parts(messages(llm.outputs))).toEqual(parts(messages(ref.outputs)));
    expect(parts(messages(llm.outputs))).toEqual([
      { type: "text", text: "Checking the weather in Paris.", url: undefined, refusal: undefined },
      { type: "text", text: "I can't share that.", url: undefined, refusal: true },
    ]);
    for (const m of messages(llm.outputs))
      expect((m.extras as { unmapped_content?: unknown } | undefined)?.unmapped_content).toBeUndefined();
  });
});

describe("@arizeai/openinference-instrumentation-openai: a streamed tool call", () => {
  it("reads as wrapOpenAI records it: the tool call alone (no empty text), and the finish reason", async () => {
    const { client, provider } = pipeline("oi-stream-tool");
    const inst = new OpenAIInstrumentation();
    inst.setTracerProvider(provider);
    inst.manuallyInstrument(OpenAI);
    const base = { id: "chatcmpl-ts", object: "chat.completion.chunk", created: 1, model: "gpt-4o-2024-08-06", system_fingerprint: "fp" };
    const call = { index: 0, id: "call_s1", type: "function", function: { name: "get_weather", arguments: "" } };
    const chunks = [
      { ...base, choices: [{ index: 0, delta: { role: "assistant", content: null, tool_calls: [call] }, finish_reason: null }] },
      { ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }, finish_reason: null }] },
      { ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }, finish_reason: null }] },
      { ...base, choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] },
    ];
    const request = {
      model: "gpt-4o",
      stream: true as const,
      tools: [{ type: "function" as const, function: { name: "get_weather", parameters: { type: "object", properties: {} } } }],
      messages: [{ role: "user" as const, content: "Weather in Paris?" }],
    };
    env.vendor.push({ sse: chunks }, { sse: chunks });
    const openai = new OpenAI({ apiKey: "sk-x", baseURL: `${env.vendor.url}/v1`, maxRetries: 0 });
    for await (const _ of await openai.chat.completions.create(request)) void _;
    await provider.forceFlush();
    inst.disable();
    await client.shutdown();
    const writer = new MemoryWriter();
    for await (const _ of await wrapOpenAI(openai, { client: writer }).chat.completions.create(request)) void _;
    const ref = messages(([...writer.runs.values()][0] as unknown as { outputs: unknown }).outputs)[0]!;

    const { runs } = await env.col.collector.store.queryRuns({ project: "oi-stream-tool" });
    const out = messages(runs.find((r) => r.run_type === "llm")!.outputs)[0]!;
    expect(out.content).toEqual(ref.content);
    expect(out.content).toEqual([{ type: "tool_call", id: "call_s1", name: "get_weather", args: { city: "Paris" } }]);
    expect((out.extras as Record<string, unknown>).finish_reason).toBe((ref.extras as Record<string, unknown>).finish_reason);
  });
});

describe("the Vercel AI SDK's telemetry (ai + @ai-sdk/openai)", () => {
  it("generateText with tools and streamText become chain runs over llm runs, with usage and time to first token", async () => {
    const { client, provider } = pipeline("ai-sdk");
    const tracer = provider.getTracer("ai");
    env.vendor.push(
      { json: fixture("openai-completion.json") },
      { sse: [...fixture("openai-stream.json"), fixture("openai-stream-usage-chunk.json")], delayMs: 5 },
    );
    const openai = createOpenAI({ apiKey: "sk-x", baseURL: `${env.vendor.url}/v1` });
    const g = await generateText({
      model: openai.chat("gpt-4o"),
      system: "Be terse.",
      messages: [{ role: "user", content: [{ type: "text", text: "Weather in Paris?" }] }],
      tools: {
        weather: tool({
          description: "weather by city",
          inputSchema: jsonSchema({ type: "object", properties: { city: { type: "string" } } }),
        }),
      },
      experimental_telemetry: { isEnabled: true, tracer },
    });
    expect(g.text).toBe("Paris is 18°C and rainy.");
    const s = streamText({ model: openai.chat("gpt-4o-mini"), prompt: "Say hello", experimental_telemetry: { isEnabled: true, tracer } });
    let text = "";
    for await (const d of s.textStream) text += d;
    expect(text).toBe("Hello! How can I help?");
    await provider.forceFlush();
    await client.shutdown();

    const { runs } = await env.col.collector.store.queryRuns({ project: "ai-sdk" });
    const by = (name: string) => runs.find((r) => r.name === name)!;
    expect(runs.map((r) => r.name).sort()).toEqual([
      "ai.generateText",
      "ai.generateText.doGenerate",
      "ai.streamText",
      "ai.streamText.doStream",
    ]);
    const gen = by("ai.generateText.doGenerate");
    const stream = by("ai.streamText.doStream");
    expect(by("ai.generateText").run_type).toBe("chain");
    expect(gen).toMatchObject({ run_type: "llm", parent_run_id: by("ai.generateText").id });
    expect(stream).toMatchObject({ run_type: "llm", parent_run_id: by("ai.streamText").id });
    expect(meta(gen)).toMatchObject({ trace_provider: "openai", trace_model_name: "gpt-4o-2024-08-06", otel: { convention: "vercel-ai" } });
    expect((meta(gen).invocation_params as { tools: unknown[] }).tools).toEqual([
      {
        type: "function",
        name: "weather",
        description: "weather by city",
        inputSchema: { type: "object", properties: { city: { type: "string" } } },
      },
    ]);
    expect(messages(gen.inputs)).toEqual([
      { role: "system", content: [{ type: "text", text: "Be terse." }] },
      { role: "user", content: [{ type: "text", text: "Weather in Paris?" }] },
    ]);
    expect(messages(gen.outputs)[0]).toMatchObject({
      content: [{ type: "text", text: "Paris is 18°C and rainy." }],
      extras: { id: "chatcmpl-r1" },
      usage_metadata: { input_tokens: 25, output_tokens: 9, total_tokens: 34 },
    });
    expect(messages(stream.outputs)[0]).toMatchObject({
      content: [{ type: "text", text: "Hello! How can I help?" }],
      usage_metadata: { input_tokens: 12, output_tokens: 7 },
    });
    // ai.response.msToFirstChunk became the new_token event, between start and end.
    expect(stream.first_token_time).toBeTruthy();
    expect(stream.first_token_time! > stream.start_time && stream.first_token_time! <= stream.end_time!).toBe(true);
  });
});
