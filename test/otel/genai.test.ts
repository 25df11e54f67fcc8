import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Anthropic from "@anthropic-ai/sdk";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { fixture, startReplayServer, type ReplayServer } from "../helpers/replay-server.js";
import { otelGenAi } from "../../adapters/otel-genai/index.js";
import type { SpanLike } from "../../adapters/spans.js";
import { validate } from "../../src/format/validate.js";

const span = (attributes: SpanLike["attributes"], events: SpanLike["events"] = [], name = "chat gpt-4o"): SpanLike => ({
  name,
  attributes,
  events,
});
const j = (v: unknown) => JSON.stringify(v);

describe("OTel GenAI span adapter: current conventions", () => {
  it("reads every part type, usage with cache and reasoning counts, parameters and time to first chunk", () => {
    const s = span({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "gpt-4o",
      "gen_ai.response.model": "gpt-4o-2024-08-06",
      "gen_ai.request.temperature": 0.2,
      "gen_ai.request.max_tokens": 300,
      "gen_ai.tool.definitions": j([{ type: "function", name: "get_weather" }]),
      "gen_ai.system_instructions": j([{ type: "text", content: "You are terse." }]),
      "gen_ai.input.messages": j([
        {
          role: "user",
          parts: [
            { type: "text", content: "Weather in Paris? See the photo." },
            { type: "blob", modality: "image", mime_type: "image/png", content: "iVBORw0KGgo=" },
            { type: "uri", modality: "audio", mime_type: "audio/wav", uri: "https://example.com/a.wav" },
            { type: "file", modality: "document", mime_type: "application/pdf", file_id: "file-123" },
          ],
        },
        {
          role: "assistant",
          parts: [
            { type: "reasoning", content: "Need the tool." },
            { type: "tool_call", id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' },
          ],
        },
        { role: "tool", parts: [{ type: "tool_call_response", id: "call_1", response: { temp_c: 18 } }] },
        { role: "tool", parts: [{ type: "tool_call_response", id: "call_0", result: "done" }] },
      ]),
      "gen_ai.output.messages": j([
        {
          role: "assistant",
          finish_reason: "stop",
          parts: [
            { type: "server_tool_call", id: "srv_1", name: "web_search", server_tool_call: { type: "web_search", query: "paris weather" } },
            { type: "server_tool_call_response", id: "srv_1", server_tool_call_response: { type: "web_search", results: [] } },
            { type: "text", content: "18°C." },
            { type: "citation_map", refs: [1, 2] },
          ],
        },
      ]),
      "gen_ai.usage.input_tokens": 120,
      "gen_ai.usage.output_tokens": 30,
      "gen_ai.usage.cache_read.input_tokens": 100,
      "gen_ai.usage.reasoning.output_tokens": 12,
      "gen_ai.response.time_to_first_chunk": 0.25,
    });
    expect(otelGenAi.detect(s)).toBe(true);
    const r = otelGenAi.read(s);
    expect(r).toMatchObject({
      convention: "otel-genai",
      run_type: "llm",
      trace_provider: "openai",
      trace_model_name: "gpt-4o-2024-08-06",
      time_to_first_token_ms: 250,
    });
    expect(r.invocation_params).toEqual({ temperature: 0.2, max_tokens: 300, tools: [{ type: "function", name: "get_weather" }] });
    expect(r.usage_metadata).toEqual({
      input_tokens: 120,
      output_tokens: 30,
      total_tokens: 150,
      input_token_details: { cache_read: 100 },
      output_token_details: { reasoning: 12 },
    });
    expect(r.input_messages).toEqual([
      { role: "system", content: [{ type: "text", text: "You are terse." }] },
      {
        role: "user",
        content: [
          { type: "text", text: "Weather in Paris? See the photo." },
          { type: "image", base64: "iVBORw0KGgo=", mime_type: "image/png" },
          { type: "audio", url: "https://example.com/a.wav", mime_type: "audio/wav" },
          { type: "file", id: "file-123", mime_type: "application/pdf", extras: { modality: "document" } },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "Need the tool." },
          { type: "tool_call", id: "call_1", name: "get_weather", args: { city: "Paris" } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: [{ type: "text", text: '{"temp_c":18}' }] },
      { role: "tool", tool_call_id: "call_0", content: [{ type: "text", text: "done" }], extras: { orphan: true } },
    ]);
    expect(r.output_messages).toEqual([
      {
        role: "assistant",
        content: [
          { type: "server_tool_call", id: "srv_1", name: "web_search", args: { type: "web_search", query: "paris weather" } },
          { type: "server_tool_result", tool_call_id: "srv_1", status: "success", output: { type: "web_search", results: [] } },
          { type: "text", text: "18°C." },
        ],
        extras: { finish_reason: "stop", unmapped_content: [{ index: 3, part: { type: "citation_map", refs: [1, 2] } }] },
      },
    ]);
    // call_0 names no earlier tool call: an orphan (DESIGN), which non-strict validate accepts and strict does not.
    expect(validate([...r.input_messages!, ...r.output_messages!])).toEqual([]);
    expect(
      validate(r.input_messages!, { strict: true })
        .filter((p) => p.type === "unknown_tool_call_id")
        .map((p) => p.loc),
    ).toEqual([[4, "tool_call_id"]]);
  });

  it("names the attribute when a value is malformed, and keeps provider, model, usage and every message that parsed", () => {
    const bad = otelGenAi.read(
      span({
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o",
        "gen_ai.input.messages": "[{not json",
        "gen_ai.output.messages": j([{ role: "assistant", parts: [{ type: "text", content: "hi" }] }]),
        "gen_ai.usage.input_tokens": 3,
        "gen_ai.usage.output_tokens": 1,
      }),
    );
    expect(bad.issues).toEqual([expect.objectContaining({ loc: ["gen_ai.input.messages"], type: "json_invalid" })]);
    expect(bad).toMatchObject({
      trace_provider: "openai",
      trace_model_name: "gpt-4o",
      usage_metadata: { input_tokens: 3, output_tokens: 1, total_tokens: 4 },
      output_messages: [{ role: "assistant", content: [{ type: "text", text: "hi" }] }],
    });
    expect(bad.input_messages).toBeUndefined();
    const noRole = otelGenAi.read(span({ "gen_ai.operation.name": "chat", "gen_ai.input.messages": j([{ parts: [] }]) }));
    expect(noRole.issues![0]!.loc).toEqual(["gen_ai.input.messages", 0, "role"]);
  });

  it("reads a plain-string gen_ai.system_instructions as one text part", () => {
    const r = otelGenAi.read(
      span({ "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.system_instructions": "Be terse." }),
    );
    expect(r.issues).toBeUndefined();
    expect(r.input_messages).toEqual([{ role: "system", content: [{ type: "text", text: "Be terse." }] }]);
    const parts = otelGenAi.read(
      span({ "gen_ai.operation.name": "chat", "gen_ai.system_instructions": j([{ type: "text", content: "Be terse." }]) }),
    );
    expect(parts.input_messages).toEqual(r.input_messages);
  });

  it("reads tool execution, embeddings and agent spans as tool, embedding and chain runs", () => {
    const tool = otelGenAi.read(
      span({
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "get_weather",
        "gen_ai.tool.call.id": "call_1",
        "gen_ai.tool.call.arguments": '{"city":"Paris"}',
        "gen_ai.tool.call.result": "18C",
      }),
    );
    expect(tool).toMatchObject({
      run_type: "tool",
      inputs: { name: "get_weather", tool_call_id: "call_1", args: { city: "Paris" } },
      outputs: { output: "18C" },
    });
    expect(otelGenAi.read(span({ "gen_ai.operation.name": "embeddings", "gen_ai.provider.name": "openai" })).run_type).toBe("embedding");
    expect(otelGenAi.read(span({ "gen_ai.operation.name": "invoke_agent" })).run_type).toBe("chain");
    expect(otelGenAi.detect(span({ "http.method": "GET" }))).toBe(false);
  });
});

describe("OTel GenAI span adapter: legacy conventions", () => {
  it("reads OpenLLMetry's indexed prompt and completion attributes, multimodal content and tool calls", () => {
    const r = otelGenAi.read(
      span({
        "gen_ai.system": "OpenAI",
        "llm.request.type": "chat",
        "gen_ai.request.model": "gpt-4o",
        "gen_ai.prompt.0.role": "system",
        "gen_ai.prompt.0.content": "Be brief.",
        "gen_ai.prompt.1.role": "user",
        "gen_ai.prompt.1.content": j([
          { type: "text", text: "What is this?" },
          { type: "image_url", image_url: { url: "data:image/jpeg;base64,/9j/4AAQ" } },
        ]),
        "gen_ai.prompt.2.role": "assistant",
        "gen_ai.prompt.2.tool_calls.0.id": "call_9",
        "gen_ai.prompt.2.tool_calls.0.name": "lookup",
        "gen_ai.prompt.2.tool_calls.0.arguments": '{"q":"cat"}',
        "gen_ai.prompt.3.role": "tool",
        "gen_ai.prompt.3.content": "a cat",
        "gen_ai.prompt.3.tool_call_id": "call_9",
        "gen_ai.prompt.10.role": "user",
        "gen_ai.prompt.10.content": "and now?",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": "A cat.",
        "gen_ai.completion.0.finish_reason": "stop",
        "gen_ai.usage.prompt_tokens": 40,
        "gen_ai.usage.completion_tokens": 3,
        "llm.usage.total_tokens": 43,
      }),
    );
    expect(r).toMatchObject({
      run_type: "llm",
      trace_provider: "openai",
      trace_model_name: "gpt-4o",
      usage_metadata: { input_tokens: 40, output_tokens: 3, total_tokens: 43 },
    });
    expect(r.input_messages).toEqual([
      { role: "system", content: [{ type: "text", text: "Be brief." }] },
      {
        role: "user",
        content: [
          { type: "text", text: "What is this?" },
          { type: "image", base64: "/9j/4AAQ", mime_type: "image/jpeg" },
        ],
      },
      { role: "assistant", content: [{ type: "tool_call", id: "call_9", name: "lookup", args: { q: "cat" } }] },
      { role: "tool", tool_call_id: "call_9", content: [{ type: "text", text: "a cat" }] },
      { role: "user", content: [{ type: "text", text: "and now?" }] }, // index 10 after 3, not after 1
    ]);
    expect(r.output_messages).toEqual([
      { role: "assistant", content: [{ type: "text", text: "A cat." }], extras: { finish_reason: "stop" } },
    ]);
    expect(validate([...r.input_messages!, ...r.output_messages!])).toEqual([]);
  });

  it("reads the gen_ai.content.prompt / gen_ai.content.completion events", () => {
    const r = otelGenAi.read(
      span({ "gen_ai.system": "anthropic", "gen_ai.request.model": "claude-sonnet-4-5" }, [
        { name: "gen_ai.content.prompt", offsetMs: 0, attributes: { "gen_ai.prompt": j([{ role: "user", content: "Hi" }]) } },
        {
          name: "gen_ai.content.completion",
          offsetMs: 90,
          attributes: {
            "gen_ai.completion": j([
              { role: "assistant", content: "Hello", tool_calls: [{ id: "t1", function: { name: "f", arguments: "{}" } }] },
            ]),
          },
        },
      ]),
    );
    expect(r.trace_provider).toBe("anthropic");
    expect(r.input_messages).toEqual([{ role: "user", content: [{ type: "text", text: "Hi" }] }]);
    expect(r.output_messages).toEqual([
      {
        role: "assistant",
        content: [
          { type: "text", text: "Hello" },
          { type: "tool_call", id: "t1", name: "f", args: {} },
        ],
      },
    ]);
  });
});

/** A finished SDK span as the span adapters see it (what src/otel's conversion hands them). */
function spanLike(s: ReadableSpan): SpanLike {
  const start = s.startTime[0] * 1000 + s.startTime[1] / 1e6;
  return {
    name: s.name,
    attributes: s.attributes as SpanLike["attributes"],
    events: s.events.map((e) => ({
      name: e.name,
      offsetMs: e.time[0] * 1000 + e.time[1] / 1e6 - start,
      attributes: (e.attributes ?? {}) as SpanLike["attributes"],
    })),
  };
}

describe("issue 14 item 10: tool results recorded as lists of text parts", () => {
  let vendor: ReplayServer;
  beforeAll(async () => {
    vendor = await startReplayServer();
  });
  afterAll(async () => {
    await vendor.close();
  });

  it("reads the Anthropic SDK's own telemetry: a tool_result's text blocks are the tool message's text", async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    vendor.push({ json: fixture("anthropic-message.json") });
    const client = new Anthropic({
      apiKey: "sk-x",
      baseURL: vendor.url,
      maxRetries: 0,
      openTelemetry: { tracerProvider: provider, traces: { contentMode: "content" } },
    });
    await client.messages.create({
      model: "claude-sonnet-4-5-20250929",
      max_tokens: 50,
      system: "Be brief.",
      messages: [
        { role: "user", content: "Weather in Paris?" },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } }] },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "toolu_1",
              content: [
                { type: "text", text: "18C" },
                { type: "text", text: "rain" },
              ],
            },
            { type: "text", text: "Summarize." },
          ],
        },
      ],
    });
    await provider.forceFlush();
    const spans = exporter.getFinishedSpans();
    expect(spans).toHaveLength(1);
    const r = otelGenAi.read(spanLike(spans[0]!));
    expect(r).toMatchObject({ run_type: "llm", trace_provider: "anthropic", trace_model_name: "claude-sonnet-4-5-20250929" });
    expect(r.usage_metadata).toEqual({
      input_tokens: 114,
      output_tokens: 5,
      total_tokens: 119,
      input_token_details: { cache_read: 100, cache_creation: 0 },
    });
    expect(r.input_messages).toEqual([
      { role: "system", content: [{ type: "text", text: "Be brief." }] },
      { role: "user", content: [{ type: "text", text: "Weather in Paris?" }] },
      { role: "assistant", content: [{ type: "tool_call", id: "toolu_1", name: "get_weather", args: { city: "Paris" } }] },
      {
        role: "tool",
        tool_call_id: "toolu_1",
        content: [
          { type: "text", text: "18C" },
          { type: "text", text: "rain" },
        ],
      },
      { role: "user", content: [{ type: "text", text: "Summarize." }] },
    ]);
    expect(r.output_messages).toEqual([{ role: "assistant", content: [{ type: "text", text: "Bonjour!" }], extras: { id: "msg_r1" } }]);
    expect(validate(r.input_messages!)).toEqual([]);
  });

  it.each([
    [
      "text parts in the conventions' shape",
      [
        { type: "text", content: "a" },
        { type: "text", content: "b" },
      ],
      [
        { type: "text", text: "a" },
        { type: "text", text: "b" },
      ],
    ],
    ["vendor text blocks", [{ type: "text", text: "a" }], [{ type: "text", text: "a" }]],
    [
      "a mixed list keeps other items as their JSON",
      [{ type: "text", text: "a" }, { type: "image" }],
      [
        { type: "text", text: "a" },
        { type: "text", text: '{"type":"image"}' },
      ],
    ],
    ["an object is its JSON", { temp: 18 }, [{ type: "text", text: '{"temp":18}' }]],
  ])("tool_call_response with %s", (_n, response, content) => {
    const r = otelGenAi.read(
      span({
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": j([{ role: "tool", parts: [{ type: "tool_call_response", id: "c1", response }] }]),
      }),
    );
    expect(r.input_messages).toEqual([{ role: "tool", tool_call_id: "c1", content, extras: { orphan: true } }]);
  });

  it("splits a message around its tool responses, in part order, with the message's extras on the first piece only", () => {
    const r = otelGenAi.read(
      span({
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": j([
          {
            role: "assistant",
            parts: [
              { type: "tool_call", id: "c1", name: "f", arguments: {} },
              { type: "tool_call", id: "c2", name: "g", arguments: {} },
            ],
          },
          {
            role: "operator",
            name: "ops",
            parts: [
              { type: "text", content: "before" },
              { type: "tool_call_response", id: "c1", response: "one" },
              { type: "tool_call_response", response: "two" },
              { type: "text", content: "after" },
              { type: "citation", ref: 1 },
            ],
          },
          { role: "tool", parts: [{ type: "tool_call_response", id: "c2", response: "three" }] },
          { role: "", parts: [{ type: "text", content: "no role name" }] },
        ]),
      }),
    );
    expect(r.input_messages).toEqual([
      {
        role: "assistant",
        content: [
          { type: "tool_call", id: "c1", name: "f", args: {} },
          { type: "tool_call", id: "c2", name: "g", args: {} },
        ],
      },
      {
        role: "user",
        content: [{ type: "text", text: "before" }],
        extras: { vendor_role: "operator", name: "ops", unmapped_content: [{ index: 4, part: { type: "citation", ref: 1 } }] },
      },
      { role: "tool", tool_call_id: "c1", content: [{ type: "text", text: "one" }] },
      { role: "tool", content: [{ type: "text", text: "two" }] },
      { role: "user", content: [{ type: "text", text: "after" }] },
      { role: "tool", tool_call_id: "c2", content: [{ type: "text", text: "three" }] },
      // An empty role name is still the user's side, and makes no empty extras.
      { role: "user", content: [{ type: "text", text: "no role name" }] },
    ]);
    // Each message has its own list of blocks: none is shared with another message.
    const lists = r.input_messages!.map((m) => m.content);
    expect(new Set(lists).size).toBe(lists.length);
  });
});

/**
 * Issue 14 item 11: spans as @traceloop/instrumentation-anthropic records them
 * (gen_ai.system "Anthropic", each turn's content the JSON of its blocks). The
 * package is not a dependency, so the span is written out rather than recorded.
 */
describe("issue 14 item 11: legacy OpenLLMetry Anthropic spans", () => {
  const s = span(
    {
      "gen_ai.system": "Anthropic",
      "llm.request.type": "chat",
      "gen_ai.request.model": "claude-sonnet-4-5",
      "gen_ai.request.max_tokens": 1024,
      "gen_ai.prompt.0.role": "system",
      "gen_ai.prompt.0.content": "You are a weather bot.",
      "gen_ai.prompt.1.role": "user",
      "gen_ai.prompt.1.content": "Weather in Paris?",
      "gen_ai.prompt.2.role": "assistant",
      "gen_ai.prompt.2.content": j([
        { type: "text", text: "Checking." },
        { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
      ]),
      "gen_ai.prompt.3.role": "user",
      "gen_ai.prompt.3.content": j([
        { type: "tool_result", tool_use_id: "toolu_1", content: "18C" },
        { type: "text", text: "Tomorrow?" },
      ]),
      "gen_ai.response.model": "claude-sonnet-4-5-20250929",
      "gen_ai.completion.0.finish_reason": "tool_use",
      "gen_ai.completion.0.role": "assistant",
      "gen_ai.completion.0.content": j([{ type: "tool_use", id: "toolu_2", name: "get_weather", input: { city: "Paris", day: 2 } }]),
      "gen_ai.usage.prompt_tokens": 50,
      "gen_ai.usage.completion_tokens": 12,
      "llm.usage.total_tokens": 62,
    },
    [],
    "anthropic.chat",
  );
  const cases: [string, (r: ReturnType<typeof otelGenAi.read>) => unknown, unknown][] = [
    [
      "plain string turns stay text",
      (r) => r.input_messages!.slice(0, 2),
      [
        { role: "system", content: [{ type: "text", text: "You are a weather bot." }] },
        { role: "user", content: [{ type: "text", text: "Weather in Paris?" }] },
      ],
    ],
    [
      "tool_use blocks are tool calls with object args",
      (r) => r.input_messages![2],
      {
        role: "assistant",
        content: [
          { type: "text", text: "Checking." },
          { type: "tool_call", id: "toolu_1", name: "get_weather", args: { city: "Paris" } },
        ],
      },
    ],
    [
      "tool_result blocks are tool messages with tool_call_id, the rest a user message",
      (r) => r.input_messages!.slice(3),
      [
        { role: "tool", tool_call_id: "toolu_1", content: [{ type: "text", text: "18C" }] },
        { role: "user", content: [{ type: "text", text: "Tomorrow?" }] },
      ],
    ],
    [
      "the completion's blocks likewise, with the finish reason",
      (r) => r.output_messages,
      [
        {
          role: "assistant",
          content: [{ type: "tool_call", id: "toolu_2", name: "get_weather", args: { city: "Paris", day: 2 } }],
          extras: { finish_reason: "tool_use" },
        },
      ],
    ],
  ];
  it.each(cases)("%s", (_n, pick, expected) => {
    const r = otelGenAi.read(s);
    expect(r.trace_provider).toBe("anthropic");
    expect(pick(r)).toEqual(expected);
    expect(validate(r.input_messages!)).toEqual([]);
  });

  it("leaves JSON-looking text of other providers as text", () => {
    const r = otelGenAi.read(
      span({
        "gen_ai.system": "OpenAI",
        "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.0.content": j([{ type: "tool_use", id: "x", name: "f", input: {} }]),
      }),
    );
    expect(r.input_messages![0]!.content[0]).toMatchObject({ type: "text" });
  });
});
