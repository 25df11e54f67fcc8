import { describe, expect, it } from "vitest";
import { otelGenAi } from "../../adapters/otel-genai/index.js";
import type { SpanLike } from "../../adapters/spans.js";
import { NormalizeError } from "../../src/errors.js";
import { validate } from "../../src/format/validate.js";

const span = (attributes: SpanLike["attributes"], events: SpanLike["events"] = [], name = "chat gpt-4o"): SpanLike => ({ name, attributes, events });
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
        { role: "assistant", parts: [{ type: "reasoning", content: "Need the tool." }, { type: "tool_call", id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' }] },
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
    expect(r).toMatchObject({ convention: "otel-genai", run_type: "llm", trace_provider: "openai", trace_model_name: "gpt-4o-2024-08-06", time_to_first_token_ms: 250 });
    expect(r.invocation_params).toEqual({ temperature: 0.2, max_tokens: 300, tools: [{ type: "function", name: "get_weather" }] });
    expect(r.usage_metadata).toEqual({ input_tokens: 120, output_tokens: 30, total_tokens: 150, input_token_details: { cache_read: 100 }, output_token_details: { reasoning: 12 } });
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
      { role: "assistant", content: [{ type: "reasoning", text: "Need the tool." }, { type: "tool_call", id: "call_1", name: "get_weather", args: { city: "Paris" } }] },
      { role: "tool", tool_call_id: "call_1", content: [{ type: "text", text: '{"temp_c":18}' }] },
      { role: "tool", tool_call_id: "call_0", content: [{ type: "text", text: "done" }] },
    ]);
    expect(r.output_messages).toEqual([
      {
        role: "assistant",
        content: [
          { type: "server_tool_call", id: "srv_1", name: "web_search", args: { type: "web_search", query: "paris weather" } },
          { type: "server_tool_result", tool_call_id: "srv_1", status: "success", output: { type: "web_search", results: [] } },
          { type: "text", text: "18°C." },
        ],
        extras: { finish_reason: "stop", otel_parts: [{ type: "citation_map", refs: [1, 2] }] },
      },
    ]);
    // call_0 names no earlier tool call, so validate says so; the rest is valid native format.
    expect(validate([...r.input_messages!, ...r.output_messages!]).map((p) => p.loc)).toEqual([[4, "tool_call_id"]]);
  });

  it("names the attribute when a value is malformed", () => {
    const bad = span({ "gen_ai.operation.name": "chat", "gen_ai.input.messages": "[{not json" });
    expect(() => otelGenAi.read(bad)).toThrow(NormalizeError);
    try {
      otelGenAi.read(bad);
    } catch (err) {
      expect((err as NormalizeError).issues[0]).toMatchObject({ loc: ["gen_ai.input.messages"], type: "json_invalid" });
    }
    const noRole = span({ "gen_ai.operation.name": "chat", "gen_ai.input.messages": j([{ parts: [] }]) });
    expect(() => otelGenAi.read(noRole)).toThrow(/role/);
    try {
      otelGenAi.read(noRole);
    } catch (err) {
      expect((err as NormalizeError).issues[0]!.loc).toEqual(["gen_ai.input.messages", 0, "role"]);
    }
  });

  it("reads tool execution, embeddings and agent spans as tool, embedding and chain runs", () => {
    const tool = otelGenAi.read(span({ "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather", "gen_ai.tool.call.id": "call_1", "gen_ai.tool.call.arguments": '{"city":"Paris"}', "gen_ai.tool.call.result": "18C" }));
    expect(tool).toMatchObject({ run_type: "tool", inputs: { name: "get_weather", tool_call_id: "call_1", args: { city: "Paris" } }, outputs: { output: "18C" } });
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
        "gen_ai.prompt.1.content": j([{ type: "text", text: "What is this?" }, { type: "image_url", image_url: { url: "data:image/jpeg;base64,/9j/4AAQ" } }]),
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
    expect(r).toMatchObject({ run_type: "llm", trace_provider: "openai", trace_model_name: "gpt-4o", usage_metadata: { input_tokens: 40, output_tokens: 3, total_tokens: 43 } });
    expect(r.input_messages).toEqual([
      { role: "system", content: [{ type: "text", text: "Be brief." }] },
      { role: "user", content: [{ type: "text", text: "What is this?" }, { type: "image", base64: "/9j/4AAQ", mime_type: "image/jpeg" }] },
      { role: "assistant", content: [{ type: "tool_call", id: "call_9", name: "lookup", args: { q: "cat" } }] },
      { role: "tool", tool_call_id: "call_9", content: [{ type: "text", text: "a cat" }] },
      { role: "user", content: [{ type: "text", text: "and now?" }] }, // index 10 after 3, not after 1
    ]);
    expect(r.output_messages).toEqual([{ role: "assistant", content: [{ type: "text", text: "A cat." }], extras: { finish_reason: "stop" } }]);
    expect(validate([...r.input_messages!, ...r.output_messages!])).toEqual([]);
  });

  it("reads the gen_ai.content.prompt / gen_ai.content.completion events", () => {
    const r = otelGenAi.read(
      span({ "gen_ai.system": "anthropic", "gen_ai.request.model": "claude-sonnet-4-5" }, [
        { name: "gen_ai.content.prompt", offsetMs: 0, attributes: { "gen_ai.prompt": j([{ role: "user", content: "Hi" }]) } },
        { name: "gen_ai.content.completion", offsetMs: 90, attributes: { "gen_ai.completion": j([{ role: "assistant", content: "Hello", tool_calls: [{ id: "t1", function: { name: "f", arguments: "{}" } }] }]) } },
      ]),
    );
    expect(r.trace_provider).toBe("anthropic");
    expect(r.input_messages).toEqual([{ role: "user", content: [{ type: "text", text: "Hi" }] }]);
    expect(r.output_messages).toEqual([{ role: "assistant", content: [{ type: "text", text: "Hello" }, { type: "tool_call", id: "t1", name: "f", args: {} }] }]);
  });
});
