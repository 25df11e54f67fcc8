import { describe, expect, it } from "vitest";
import { openInference } from "../../adapters/openinference/index.js";
import { unflatten } from "../../adapters/common/flat.js";
import type { SpanLike } from "../../adapters/spans.js";
import { validate } from "../../src/format/validate.js";

const span = (attributes: SpanLike["attributes"], events: SpanLike["events"] = []): SpanLike => ({
  name: "ChatCompletion",
  attributes,
  events,
});

describe("unflatten", () => {
  it("rebuilds indexed attributes in numeric order, nested arrays included", () => {
    const a: Record<string, unknown> = {
      "p.10.m.role": "user",
      "p.2.m.role": "system",
      "p.2.m.calls.1.c.id": "b",
      "p.2.m.calls.0.c.id": "a",
      "other.0.x": 1,
      "p.x.y": 2,
    };
    expect(unflatten(a, "p")).toEqual([
      { m: { role: "system", calls: [{ c: { id: "a" } }, { c: { id: "b" } }] } },
      { m: { role: "user" } },
    ]);
    expect(unflatten(a, "q")).toBeUndefined();
  });
});

describe("OpenInference span adapter", () => {
  it("reads LLM spans: roles, contents with images, tool calls and results, usage details, parameters and tools", () => {
    const s = span({
      "openinference.span.kind": "LLM",
      "llm.system": "openai",
      "llm.provider": "openai",
      "llm.model_name": "gpt-4o-2024-08-06",
      "llm.invocation_parameters": JSON.stringify({ model: "gpt-4o", temperature: 0.3 }),
      "llm.tools.0.tool.json_schema": JSON.stringify({ type: "function", function: { name: "f" } }),
      "llm.input_messages.0.message.role": "system",
      "llm.input_messages.0.message.content": "sys",
      "llm.input_messages.1.message.role": "user",
      "llm.input_messages.1.message.contents.0.message_content.type": "text",
      "llm.input_messages.1.message.contents.0.message_content.text": "what is this?",
      "llm.input_messages.1.message.contents.1.message_content.type": "image",
      "llm.input_messages.1.message.contents.1.message_content.image.image.url": "data:image/png;base64,iVBOR",
      "llm.input_messages.1.message.contents.2.message_content.type": "image",
      "llm.input_messages.1.message.contents.2.message_content.image.image.url": "https://example.com/cat.png",
      "llm.input_messages.2.message.role": "assistant",
      "llm.input_messages.2.message.tool_calls.0.tool_call.id": "c1",
      "llm.input_messages.2.message.tool_calls.0.tool_call.function.name": "f",
      "llm.input_messages.2.message.tool_calls.0.tool_call.function.arguments": '{"a":1}',
      "llm.input_messages.3.message.role": "tool",
      "llm.input_messages.3.message.content": "res",
      "llm.input_messages.3.message.tool_call_id": "c1",
      "llm.output_messages.0.message.role": "assistant",
      "llm.output_messages.0.message.content": "A cat.",
      "llm.token_count.prompt": 50,
      "llm.token_count.completion": 4,
      "llm.token_count.total": 54,
      "llm.token_count.prompt_details.cache_read": 32,
      "llm.token_count.prompt_details.cache_write": 0,
      "llm.token_count.completion_details.reasoning": 2,
    });
    expect(openInference.detect(s)).toBe(true);
    const r = openInference.read(s);
    expect(r).toMatchObject({
      convention: "openinference",
      run_type: "llm",
      trace_provider: "openai",
      trace_model_name: "gpt-4o-2024-08-06",
    });
    expect(r.invocation_params).toEqual({ temperature: 0.3, tools: [{ type: "function", function: { name: "f" } }] });
    expect(r.usage_metadata).toEqual({
      input_tokens: 50,
      output_tokens: 4,
      total_tokens: 54,
      input_token_details: { cache_read: 32 },
      output_token_details: { reasoning: 2 },
    });
    expect(r.input_messages).toEqual([
      { role: "system", content: [{ type: "text", text: "sys" }] },
      {
        role: "user",
        content: [
          { type: "text", text: "what is this?" },
          { type: "image", base64: "iVBOR", mime_type: "image/png" },
          { type: "image", url: "https://example.com/cat.png" },
        ],
      },
      { role: "assistant", content: [{ type: "tool_call", id: "c1", name: "f", args: { a: 1 } }] },
      { role: "tool", tool_call_id: "c1", content: [{ type: "text", text: "res" }] },
    ]);
    expect(r.output_messages).toEqual([{ role: "assistant", content: [{ type: "text", text: "A cat." }] }]);
    expect(validate([...r.input_messages!, ...r.output_messages!])).toEqual([]);
  });

  it("reads chain, tool and retriever spans with their values and documents", () => {
    expect(
      openInference.read(
        span({
          "openinference.span.kind": "CHAIN",
          "input.value": '{"q":"x"}',
          "input.mime_type": "application/json",
          "output.value": "done",
        }),
      ),
    ).toMatchObject({ run_type: "chain", inputs: { input: { q: "x" } }, outputs: { output: "done" } });
    expect(openInference.read(span({ "openinference.span.kind": "TOOL", "tool.name": "search", "input.value": "cats" }))).toMatchObject({
      run_type: "tool",
      inputs: { input: "cats", name: "search" },
    });
    const ret = openInference.read(
      span({
        "openinference.span.kind": "RETRIEVER",
        "input.value": "cats",
        "retrieval.documents.0.document.content": "A cat",
        "retrieval.documents.0.document.score": 0.9,
        "retrieval.documents.1.document.content": "Another",
      }),
    );
    expect(ret).toMatchObject({
      run_type: "retriever",
      outputs: { documents: [{ content: "A cat", score: 0.9 }, { content: "Another" }] },
    });
    expect(openInference.read(span({ "openinference.span.kind": "AGENT" })).run_type).toBe("chain");
  });

  it("keeps an image part without a URL whole in extras.unmapped_content", () => {
    const r = openInference.read(
      span({
        "openinference.span.kind": "LLM",
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.contents.0.message_content.type": "image",
        "llm.input_messages.0.message.contents.0.message_content.image.type": "base64",
        "llm.input_messages.0.message.contents.0.message_content.image.media_type": "image/png",
        "llm.input_messages.0.message.contents.1.message_content.type": "text",
        "llm.input_messages.0.message.contents.1.message_content.text": "what is it?",
      }),
    );
    expect(r.input_messages).toEqual([
      {
        role: "user",
        content: [{ type: "text", text: "what is it?" }],
        extras: {
          unmapped_content: [
            { index: 0, part: { message_content: { type: "image", image: { type: "base64", media_type: "image/png" } } } },
          ],
        },
      },
    ]);
  });
});

/**
 * Issue 14 item 9: spans as @arizeai/openinference-instrumentation-anthropic
 * records them (attribute for attribute, from its getAnthropicInputMessageAttributes
 * and getAnthropicOutputMessagesAttributes). The package is not a dependency, so
 * the span is written out rather than recorded.
 */
describe("OpenInference spans of Anthropic calls", () => {
  const body = {
    model: "claude-sonnet-4-5",
    max_tokens: 1024,
    system: "You are a weather bot.",
    messages: [
      { role: "user", content: "Weather in Paris?" },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "Use the tool.", signature: "EqQB" },
          { type: "text", text: "Checking." },
          { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "18C, rain" }] },
          { type: "text", text: "And tomorrow?" },
        ],
      },
    ],
  };
  const anthropicSpan = span({
    "openinference.span.kind": "LLM",
    "llm.model_name": "claude-sonnet-4-5-20250929",
    "llm.system": "anthropic",
    "llm.provider": "anthropic",
    "input.value": JSON.stringify(body),
    "input.mime_type": "application/json",
    "llm.invocation_parameters": JSON.stringify({ model: "claude-sonnet-4-5", max_tokens: 1024, system: body.system }),
    "llm.input_messages.0.message.role": "user",
    "llm.input_messages.0.message.content": "Weather in Paris?",
    "llm.input_messages.1.message.role": "assistant",
    "llm.input_messages.1.message.contents.0.message_content.type": "reasoning",
    "llm.input_messages.1.message.contents.0.message_content.text": "Use the tool.",
    "llm.input_messages.1.message.contents.0.message_content.signature": "EqQB",
    "llm.input_messages.1.message.contents.1.message_content.type": "text",
    "llm.input_messages.1.message.contents.1.message_content.text": "Checking.",
    "llm.input_messages.1.message.tool_calls.0.tool_call.id": "toolu_1",
    "llm.input_messages.1.message.tool_calls.0.tool_call.function.name": "get_weather",
    "llm.input_messages.1.message.tool_calls.0.tool_call.function.arguments": '{"city":"Paris"}',
    "llm.input_messages.1.message.contents.2.message_content.type": "tool_use",
    "llm.input_messages.1.message.contents.2.tool_call.id": "toolu_1",
    "llm.input_messages.1.message.contents.2.tool_call.function.name": "get_weather",
    "llm.input_messages.1.message.contents.2.tool_call.function.arguments": '{"city":"Paris"}',
    "llm.input_messages.2.message.role": "user",
    "llm.input_messages.2.message.tool_call_id": "toolu_1",
    "llm.input_messages.2.message.content": JSON.stringify([{ type: "text", text: "18C, rain" }]),
    "llm.input_messages.2.message.contents.1.message_content.type": "text",
    "llm.input_messages.2.message.contents.1.message_content.text": "And tomorrow?",
    "llm.output_messages.0.message.role": "assistant",
    "llm.output_messages.0.message.contents.0.message_content.type": "tool_use",
    "llm.output_messages.0.message.contents.0.tool_call.id": "toolu_2",
    "llm.output_messages.0.message.contents.0.tool_call.function.name": "get_weather",
    "llm.output_messages.0.message.contents.0.tool_call.function.arguments": '{"city":"Paris","day":"tomorrow"}',
    "llm.output_messages.0.message.tool_calls.0.tool_call.id": "toolu_2",
    "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "get_weather",
    "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"city":"Paris","day":"tomorrow"}',
    "llm.token_count.prompt": 120,
    "llm.token_count.completion": 30,
    "llm.token_count.total": 150,
  });

  const cases: [string, (r: ReturnType<typeof openInference.read>) => unknown, unknown][] = [
    [
      "the system prompt comes from input.value",
      (r) => r.input_messages![0],
      { role: "system", content: [{ type: "text", text: "You are a weather bot." }] },
    ],
    [
      "a tool_use part is only its tool_call, in content order, not a text block of JSON",
      (r) => r.input_messages![2],
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "Use the tool.", extras: { signature: "EqQB" } },
          { type: "text", text: "Checking." },
          { type: "tool_call", id: "toolu_1", name: "get_weather", args: { city: "Paris" } },
        ],
      },
    ],
    [
      "a user turn's tool result is a tool message with its tool_call_id",
      (r) => r.input_messages![3],
      { role: "tool", tool_call_id: "toolu_1", content: [{ type: "text", text: "18C, rain" }], extras: { vendor_role: "user" } },
    ],
    [
      "the rest of that user turn follows as the user's message",
      (r) => r.input_messages![4],
      { role: "user", content: [{ type: "text", text: "And tomorrow?" }] },
    ],
    [
      "the output's tool_use is one tool_call",
      (r) => r.output_messages,
      [
        {
          role: "assistant",
          content: [{ type: "tool_call", id: "toolu_2", name: "get_weather", args: { city: "Paris", day: "tomorrow" } }],
        },
      ],
    ],
  ];
  it.each(cases)("%s", (_n, pick, expected) => {
    const r = openInference.read(anthropicSpan);
    expect(pick(r)).toEqual(expected);
    expect(validate(r.input_messages!)).toEqual([]);
    expect(validate(r.output_messages!)).toEqual([]);
  });
});
