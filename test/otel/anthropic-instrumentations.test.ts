/**
 * The span processor behind the real Anthropic instrumentations from npm, each
 * patching the real `@anthropic-ai/sdk` client that talks to the loopback replay
 * server: OpenInference's (`llm.input_messages.*` indexed attributes) and
 * OpenLLMetry's (`gen_ai.*` attributes). Both record the same tool round trip: a
 * reply with a tool_use block, then a follow-up whose user turn carries the
 * tool_result; and a streamed tool_use. The replies report prompt-cache writes and
 * reads, so the input counts show whether the cache is counted in (DESIGN: Anthropic
 * input = uncached + cache read + cache write). An in-memory exporter beside our processor keeps the spans as the
 * instrumentation wrote them, so the attribute shapes these tests rely on are
 * checked too, not assumed.
 */
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import * as AnthropicModule from "@anthropic-ai/sdk";
import Anthropic from "@anthropic-ai/sdk";
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-node";
import { AnthropicInstrumentation as OpenInferenceAnthropic } from "@arizeai/openinference-instrumentation-anthropic";
import { AnthropicInstrumentation as OpenLLMetryAnthropic } from "@traceloop/instrumentation-anthropic";
import { TraceSpanProcessor } from "../../src/otel/index.js";
import { Client } from "../../src/ingest/index.js";
import { validate } from "../../src/format/validate.js";
import type { StoredRun } from "../../src/store/index.js";
import { fixture } from "../helpers/replay-server.js";
import { messages, meta, otelEnvironment } from "../helpers/otel.js";
import { tempDir } from "../helpers/runs.js";

const env = otelEnvironment("ak");

const MODEL = "claude-opus-4-6";
const SYSTEM = "You are a weather assistant.";
const tools: Anthropic.Tool[] = [
  {
    name: "get_weather",
    description: "Current weather by city",
    input_schema: { type: "object", properties: { city: { type: "string" }, unit: { type: "string" } }, required: ["city"] },
  },
];

/** Whether an instrumentation's wrapper (shimmer marks it) is still on Messages.create. */
const wrapped = () => Boolean((Anthropic.Messages.prototype.create as { __wrapped?: boolean }).__wrapped);

function pipeline(project: string) {
  const client = new Client({
    endpoint: env.col.url,
    apiKey: "ak",
    project,
    spoolDir: join(tempDir("tp-otel-a-"), "spool"),
    warn: () => {},
  });
  const recorded = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new TraceSpanProcessor({ client }), new SimpleSpanProcessor(recorded)] });
  return { client, provider, recorded };
}

/**
 * What an agent loop does: ask, get a tool_use, run the tool, send its result
 * (with a follow-up instruction) in the next user turn, get the answer.
 */
async function toolRoundTrip(): Promise<{ answer: Anthropic.Message }> {
  env.vendor.push({ json: fixture("anthropic-tool-use.json") }, { json: fixture("anthropic-tool-result-reply.json") });
  const anthropic = new Anthropic({ apiKey: "sk-ant-x", baseURL: env.vendor.url, maxRetries: 0 });
  const ask: Anthropic.MessageParam = { role: "user", content: "What's the weather in Paris?" };
  const first = await anthropic.messages.create({ model: MODEL, max_tokens: 1024, system: SYSTEM, tools, messages: [ask] });
  const call = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === "tool_use")!;
  const answer = await anthropic.messages.create({
    model: MODEL,
    max_tokens: 1024,
    system: SYSTEM,
    tools,
    messages: [
      ask,
      { role: "assistant", content: first.content },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: call.id, content: [{ type: "text", text: "18°C, rain" }] },
          { type: "text", text: "Answer in French." },
        ],
      },
    ],
  });
  return { answer };
}

/** The two llm runs of the round trip, in call order, after a check that both reached the collector. */
async function llmRuns(project: string): Promise<[StoredRun, StoredRun]> {
  const { runs } = await env.col.collector.store.queryRuns({ project });
  const llm = runs.filter((r) => r.run_type === "llm").sort((a, b) => a.dotted_order.localeCompare(b.dotted_order));
  expect(llm).toHaveLength(2);
  return [llm[0]!, llm[1]!];
}

const ASK = { role: "user", content: [{ type: "text", text: "What's the weather in Paris?" }] };
const SYSTEM_MSG = { role: "system", content: [{ type: "text", text: SYSTEM }] };
const CALL = { type: "tool_call", id: "toolu_01A", name: "get_weather", args: { city: "Paris", unit: "celsius" } };
const TOOL_USE_TURN = { role: "assistant", content: [{ type: "text", text: "I'll look up the weather in Paris." }, CALL] };

function expectValid(run: StoredRun): void {
  const all = [...messages(run.inputs), ...messages(run.outputs)];
  expect(validate(all)).toEqual([]);
}

/**
 * OpenLLMetry's `manuallyInstrument(module)` wraps `module.Anthropic.Completions`,
 * `.Messages` and `.Beta.Messages`. SDK 1.x removed the legacy Completions
 * resource, so given the SDK module as it is the call throws a TypeError before
 * anything is patched. The module is handed over with the real Messages and
 * Beta.Messages classes and an inert Completions in place of the removed one:
 * every span below is written by the instrumentation's own Messages patch.
 */
function openLLMetryModule() {
  class RemovedCompletions {
    create(): never {
      throw new Error("the legacy Completions API is not in @anthropic-ai/sdk 1.x");
    }
  }
  return { ...AnthropicModule, Anthropic: { Completions: RemovedCompletions, Messages: Anthropic.Messages, Beta: Anthropic.Beta } };
}

type Instrumentation = "openinference" | "openllmetry";

/** Runs `fn` with the instrumentation patching the SDK's Messages, and takes the patch off after. */
async function instrumented<T>(which: Instrumentation, provider: NodeTracerProvider, fn: () => Promise<T>): Promise<T> {
  let undo: () => void;
  if (which === "openinference") {
    const inst = new OpenInferenceAnthropic();
    inst.setTracerProvider(provider);
    inst.manuallyInstrument(Anthropic);
    undo = () => inst.disable();
  } else {
    const inst = new OpenLLMetryAnthropic({ traceContent: true });
    inst.setTracerProvider(provider);
    const mod = openLLMetryModule();
    inst.manuallyInstrument(mod as never);
    undo = () => {
      // disable() only undoes hook-made patches; unpatch (typed private) undoes the manual one.
      (inst as unknown as { unpatch(m: unknown): void }).unpatch(mod);
      inst.disable();
    };
  }
  try {
    return await fn();
  } finally {
    undo();
    expect(wrapped()).toBe(false);
  }
}

/** One streamed call whose reply is text then a tool_use with its input in input_json_delta pieces. */
async function streamedToolUse(): Promise<string[]> {
  env.vendor.push({ sse: fixture("anthropic-tool-use-stream.json"), anthropic: true, delayMs: 2 });
  const anthropic = new Anthropic({ apiKey: "sk-ant-x", baseURL: env.vendor.url, maxRetries: 0 });
  const stream = await anthropic.messages.create({
    model: MODEL,
    max_tokens: 1024,
    system: SYSTEM,
    tools,
    messages: [{ role: "user", content: "What's the weather in Paris?" }],
    stream: true,
  });
  const types: string[] = [];
  for await (const e of stream) types.push(e.type);
  return types;
}

const STREAM_EVENTS = [
  "message_start",
  "content_block_start",
  "content_block_delta",
  "content_block_delta",
  "content_block_stop",
  "content_block_start",
  "content_block_delta",
  "content_block_delta",
  "content_block_delta",
  "content_block_stop",
  "message_delta",
  "message_stop",
];

describe("@arizeai/openinference-instrumentation-anthropic on @anthropic-ai/sdk", () => {
  it("a tool_use part is only its tool_call, and the tool_result of a user turn is a tool message with its tool_call_id", async () => {
    const { client, provider, recorded } = pipeline("oi-anthropic");
    const { answer } = await instrumented("openinference", provider, toolRoundTrip);
    expect(answer.content).toEqual([{ type: "text", text: "Il fait 18°C et il pleut à Paris.", citations: null }]);
    await provider.forceFlush();
    await client.shutdown();

    // The spans as OpenInference wrote them: the tool_use part beside its type in a
    // content slot and again in message.tool_calls; the tool result on the user turn.
    const spans = recorded.getFinishedSpans();
    expect(spans.map((s) => s.name)).toEqual(["Anthropic Messages", "Anthropic Messages"]);
    expect(spans[0]!.attributes).toMatchObject({
      "openinference.span.kind": "LLM",
      "llm.provider": "anthropic",
      "llm.output_messages.0.message.contents.1.message_content.type": "tool_use",
      "llm.output_messages.0.message.contents.1.tool_call.id": "toolu_01A",
      "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"city":"Paris","unit":"celsius"}',
    });
    expect(spans[1]!.attributes).toMatchObject({
      "llm.input_messages.1.message.contents.1.message_content.type": "tool_use",
      "llm.input_messages.2.message.role": "user",
      "llm.input_messages.2.message.tool_call_id": "toolu_01A",
      "llm.input_messages.2.message.content": '[{"type":"text","text":"18°C, rain"}]',
      "llm.input_messages.2.message.contents.1.message_content.text": "Answer in French.",
    });

    const [first, second] = await llmRuns("oi-anthropic");
    for (const r of [first, second]) {
      expect(meta(r)).toMatchObject({ trace_provider: "anthropic", trace_model_name: MODEL, otel: { convention: "openinference" } });
      expect(meta(r).invocation_params).toMatchObject({ max_tokens: 1024, system: SYSTEM, tools });
      expectValid(r);
    }
    expect(messages(first.inputs)).toEqual([SYSTEM_MSG, ASK]);
    // Only the tool_call: no text block holding {"type":"tool_use"}.
    expect(messages(first.outputs)).toEqual([
      {
        ...TOOL_USE_TURN,
        extras: { finish_reason: "tool_use" },
        usage_metadata: { input_tokens: 792, output_tokens: 58, total_tokens: 850, input_token_details: { cache_creation: 380 } },
      },
    ]);
    expect(messages(second.inputs)).toEqual([
      SYSTEM_MSG,
      ASK,
      TOOL_USE_TURN,
      { role: "tool", tool_call_id: "toolu_01A", content: [{ type: "text", text: "18°C, rain" }], extras: { vendor_role: "user" } },
      { role: "user", content: [{ type: "text", text: "Answer in French." }] },
    ]);
    expect(messages(second.outputs)).toEqual([
      {
        role: "assistant",
        content: [{ type: "text", text: "Il fait 18°C et il pleut à Paris." }],
        extras: { finish_reason: "end_turn" },
        usage_metadata: { input_tokens: 877, output_tokens: 17, total_tokens: 894, input_token_details: { cache_read: 380 } },
      },
    ]);
  });
  it("a streamed tool_use is one tool_call with the input_json_delta pieces joined, and usage counts the cache", async () => {
    const { client, provider, recorded } = pipeline("oi-anthropic-stream");
    expect(await instrumented("openinference", provider, streamedToolUse)).toEqual(STREAM_EVENTS);
    await provider.forceFlush();
    await client.shutdown();
    const [span] = recorded.getFinishedSpans();
    expect(span!.attributes).toMatchObject({
      "llm.output_messages.0.message.contents.1.message_content.type": "tool_use",
      "llm.output_messages.0.message.contents.1.tool_call.function.arguments": '{"city": "Paris", "unit": "celsius"}',
      "llm.output_messages.0.message.tool_calls.0.tool_call.id": "toolu_01A",
    });
    const { runs } = await env.col.collector.store.queryRuns({ project: "oi-anthropic-stream" });
    expect(runs).toHaveLength(1);
    expect(meta(runs[0]!)).toMatchObject({ trace_provider: "anthropic", trace_model_name: MODEL });
    expect(messages(runs[0]!.inputs)).toEqual([SYSTEM_MSG, ASK]);
    expect(messages(runs[0]!.outputs)).toEqual([
      {
        ...TOOL_USE_TURN,
        extras: { finish_reason: "tool_use" },
        usage_metadata: { input_tokens: 792, output_tokens: 58, total_tokens: 850, input_token_details: { cache_creation: 380 } },
      },
    ]);
    expectValid(runs[0]!);
  });
});

describe("@traceloop/instrumentation-anthropic (OpenLLMetry 0.27) on @anthropic-ai/sdk", () => {
  it("cannot patch the SDK module as it is: the legacy Completions resource it wraps first is gone", () => {
    const inst = new OpenLLMetryAnthropic();
    expect((Anthropic as unknown as { Completions?: unknown }).Completions).toBeUndefined();
    expect(() => inst.manuallyInstrument(AnthropicModule as never)).toThrow(TypeError);
    inst.disable();
  });

  it("tool_use and tool_result blocks become tool_call blocks with object args and tool messages with tool_call_id", async () => {
    const { client, provider, recorded } = pipeline("ollm-anthropic");
    const { answer } = await instrumented("openllmetry", provider, toolRoundTrip);
    expect(answer.content).toEqual([{ type: "text", text: "Il fait 18°C et il pleut à Paris.", citations: null }]);
    await provider.forceFlush();
    await client.shutdown();

    const spans = recorded.getFinishedSpans();
    expect(spans.map((s) => s.name)).toEqual([`chat ${MODEL}`, `chat ${MODEL}`]);
    // OpenLLMetry 0.27 writes the current GenAI conventions (JSON messages of typed
    // parts), not the legacy indexed gen_ai.prompt.N.* / gen_ai.completion.N.* ones;
    // its input count is Anthropic's uncached input_tokens.
    for (const s of spans) expect(Object.keys(s.attributes).filter((k) => /^gen_ai\.(prompt|completion)\./.test(k))).toEqual([]);
    expect(spans[0]!.attributes).toMatchObject({
      "gen_ai.provider.name": "anthropic",
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": MODEL,
      "gen_ai.response.model": MODEL,
      "gen_ai.system_instructions": JSON.stringify([{ type: "text", content: SYSTEM }]),
      "gen_ai.usage.input_tokens": 412,
      "gen_ai.usage.total_tokens": 470,
      "gen_ai.usage.cache_creation.input_tokens": 380,
    });
    expect(JSON.parse(spans[0]!.attributes["gen_ai.output.messages"] as string)[0].parts[1]).toEqual({
      type: "tool_call",
      id: "toolu_01A",
      name: "get_weather",
      arguments: { city: "Paris", unit: "celsius" },
    });
    expect(JSON.parse(spans[1]!.attributes["gen_ai.input.messages"] as string)[2]).toEqual({
      role: "user",
      parts: [
        { type: "tool_call_response", id: "toolu_01A", response: [{ type: "text", text: "18°C, rain" }] },
        { type: "text", content: "Answer in French." },
      ],
    });

    const [first, second] = await llmRuns("ollm-anthropic");
    for (const r of [first, second]) {
      expect(meta(r)).toMatchObject({
        trace_provider: "anthropic",
        trace_model_name: MODEL,
        invocation_params: { max_tokens: 1024 },
        otel: { convention: "otel-genai", scope: "@traceloop/instrumentation-anthropic" },
      });
      expectValid(r);
    }
    expect(messages(first.inputs)).toEqual([SYSTEM_MSG, ASK]);
    expect(messages(first.outputs)).toEqual([
      {
        ...TOOL_USE_TURN,
        extras: { finish_reason: "tool_call" },
        usage_metadata: {
          input_tokens: 792,
          output_tokens: 58,
          total_tokens: 850,
          input_token_details: { cache_read: 0, cache_creation: 380 },
        },
      },
    ]);
    expect(messages(second.inputs)).toEqual([
      SYSTEM_MSG,
      ASK,
      TOOL_USE_TURN,
      { role: "tool", tool_call_id: "toolu_01A", content: [{ type: "text", text: "18°C, rain" }] },
      { role: "user", content: [{ type: "text", text: "Answer in French." }] },
    ]);
    expect(messages(second.outputs)).toEqual([
      {
        role: "assistant",
        content: [{ type: "text", text: "Il fait 18°C et il pleut à Paris." }],
        extras: { finish_reason: "stop" },
        usage_metadata: {
          input_tokens: 877,
          output_tokens: 17,
          total_tokens: 894,
          input_token_details: { cache_read: 380, cache_creation: 0 },
        },
      },
    ]);
  });
  it("a streamed tool_use is a tool_call block, with the (empty) input this version accumulates, and usage counts the cache", async () => {
    const { client, provider, recorded } = pipeline("ollm-anthropic-stream");
    expect(await instrumented("openllmetry", provider, streamedToolUse)).toEqual(STREAM_EVENTS);
    await provider.forceFlush();
    await client.shutdown();
    // 0.27's stream accumulator keeps content_block_start's tool_use (input {}) and
    // joins text deltas only: input_json_delta and message_delta's stop_reason are not recorded.
    const [span] = recorded.getFinishedSpans();
    expect(JSON.parse(span!.attributes["gen_ai.output.messages"] as string)).toEqual([
      {
        role: "assistant",
        finish_reason: "",
        parts: [
          { type: "text", content: "I'll look up the weather in Paris." },
          { type: "tool_call", id: "toolu_01A", name: "get_weather", arguments: {} },
        ],
      },
    ]);
    const { runs } = await env.col.collector.store.queryRuns({ project: "ollm-anthropic-stream" });
    expect(runs).toHaveLength(1);
    expect(meta(runs[0]!)).toMatchObject({ trace_provider: "anthropic", trace_model_name: MODEL });
    expect(messages(runs[0]!.inputs)).toEqual([SYSTEM_MSG, ASK]);
    expect(messages(runs[0]!.outputs)).toEqual([
      {
        role: "assistant",
        content: [
          { type: "text", text: "I'll look up the weather in Paris." },
          { ...CALL, args: {} },
        ],
        extras: { finish_reason: "" },
        usage_metadata: {
          input_tokens: 792,
          output_tokens: 58,
          total_tokens: 850,
          input_token_details: { cache_read: 0, cache_creation: 380 },
        },
      },
    ]);
    expectValid(runs[0]!);
  });
});
