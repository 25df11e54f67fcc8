import { describe, expect, it } from "vitest";
import { vercelAi } from "../../adapters/vercel-ai/index.js";
import { ADAPTERS } from "../../adapters/span-index.js";
import type { SpanLike } from "../../adapters/spans.js";
import { validate } from "../../src/format/validate.js";

const span = (
  attributes: SpanLike["attributes"],
  events: SpanLike["events"] = [],
  name = String(attributes["ai.operationId"]),
): SpanLike => ({ name, attributes, events });
const j = (v: unknown) => JSON.stringify(v);

describe("Vercel AI SDK span adapter", () => {
  it("reads v5+ prompts (input, output, mediaType) and the response's tool calls; wins over the gen_ai attributes on the same span", () => {
    const s = span(
      {
        "ai.operationId": "ai.streamText.doStream",
        "ai.model.provider": "anthropic.messages",
        "ai.model.id": "claude-sonnet-4-5",
        "ai.settings.maxOutputTokens": 512,
        "ai.prompt.tools": [j({ type: "function", name: "weather", inputSchema: { type: "object" } })],
        "ai.prompt.toolChoice": j({ type: "auto" }),
        "ai.prompt.messages": j([
          { role: "system", content: "Be terse." },
          {
            role: "user",
            content: [
              { type: "text", text: "Weather here?" },
              { type: "file", mediaType: "image/jpeg", data: "/9j/4AAQ" },
              { type: "file", mediaType: "application/pdf", data: "https://example.com/a.pdf" },
            ],
          },
          {
            role: "assistant",
            content: [
              { type: "reasoning", text: "need tool" },
              { type: "tool-call", toolCallId: "t1", toolName: "weather", input: { city: "Oslo" } },
            ],
          },
          {
            role: "tool",
            content: [{ type: "tool-result", toolCallId: "t1", toolName: "weather", output: { type: "json", value: { c: 3 } } }],
          },
          {
            role: "tool",
            content: [{ type: "tool-result", toolCallId: "t0", toolName: "weather", output: { type: "error-text", value: "boom" } }],
          },
        ]),
        "ai.response.text": "3°C.",
        "ai.response.toolCalls": j([{ toolCallId: "t2", toolName: "weather", input: '{"city":"Bergen"}' }]),
        "ai.response.finishReason": "tool-calls",
        "ai.response.model": "claude-sonnet-4-5-20250929",
        "ai.usage.inputTokens": 40,
        "ai.usage.outputTokens": 12,
        "ai.usage.cachedInputTokens": 30,
        "ai.usage.reasoningTokens": 5,
        "gen_ai.system": "anthropic.messages",
        "gen_ai.usage.input_tokens": 40,
      },
      [{ name: "ai.stream.firstChunk", offsetMs: 87, attributes: {} }],
    );
    expect(ADAPTERS.find((a) => a.detect(s))?.name).toBe("vercel-ai");
    const r = vercelAi.read(s);
    expect(r).toMatchObject({
      run_type: "llm",
      trace_provider: "anthropic",
      trace_model_name: "claude-sonnet-4-5-20250929",
      time_to_first_token_ms: 87,
    });
    expect(r.invocation_params).toEqual({
      maxOutputTokens: 512,
      tools: [{ type: "function", name: "weather", inputSchema: { type: "object" } }],
      tool_choice: { type: "auto" },
    });
    expect(r.usage_metadata).toEqual({
      input_tokens: 40,
      output_tokens: 12,
      total_tokens: 52,
      input_token_details: { cache_read: 30 },
      output_token_details: { reasoning: 5 },
    });
    expect(r.input_messages).toEqual([
      { role: "system", content: [{ type: "text", text: "Be terse." }] },
      {
        role: "user",
        content: [
          { type: "text", text: "Weather here?" },
          { type: "image", base64: "/9j/4AAQ", mime_type: "image/jpeg" },
          { type: "file", url: "https://example.com/a.pdf", mime_type: "application/pdf" },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "need tool" },
          { type: "tool_call", id: "t1", name: "weather", args: { city: "Oslo" } },
        ],
      },
      { role: "tool", tool_call_id: "t1", content: [{ type: "text", text: '{"c":3}' }], extras: { name: "weather" } },
      {
        role: "tool",
        tool_call_id: "t0",
        content: [{ type: "text", text: "boom" }],
        extras: { name: "weather", is_error: true, orphan: true },
      },
    ]);
    expect(r.output_messages).toEqual([
      {
        role: "assistant",
        content: [
          { type: "text", text: "3°C." },
          { type: "tool_call", id: "t2", name: "weather", args: { city: "Bergen" } },
        ],
        extras: { finish_reason: "tool-calls" },
      },
    ]);
    expect(validate([...r.input_messages!, ...r.output_messages!])).toEqual([]);
  });

  it("reads v4 prompts (args, result, image, mimeType) and v4 usage names; msToFirstChunk as an attribute", () => {
    const r = vercelAi.read(
      span({
        "ai.operationId": "ai.generateText.doGenerate",
        "ai.model.provider": "openai.chat",
        "ai.model.id": "gpt-4o",
        "ai.prompt.messages": j([
          {
            role: "user",
            content: [
              { type: "image", image: "data:image/png;base64,iVBOR" },
              { type: "file", data: "JVBER", mimeType: "application/pdf" },
            ],
          },
          { role: "assistant", content: [{ type: "tool-call", toolCallId: "a", toolName: "f", args: { x: 1 } }] },
          { role: "tool", content: [{ type: "tool-result", toolCallId: "a", toolName: "f", result: { ok: true } }] },
        ]),
        "ai.response.text": "done",
        "ai.usage.promptTokens": 9,
        "ai.usage.completionTokens": 1,
        "ai.response.msToFirstChunk": 42.5,
      }),
    );
    expect(r).toMatchObject({
      trace_provider: "openai",
      trace_model_name: "gpt-4o",
      usage_metadata: { input_tokens: 9, output_tokens: 1, total_tokens: 10 },
      time_to_first_token_ms: 42.5,
    });
    expect(r.input_messages).toEqual([
      {
        role: "user",
        content: [
          { type: "image", base64: "iVBOR", mime_type: "image/png" },
          { type: "file", base64: "JVBER", mime_type: "application/pdf" },
        ],
      },
      { role: "assistant", content: [{ type: "tool_call", id: "a", name: "f", args: { x: 1 } }] },
      { role: "tool", tool_call_id: "a", content: [{ type: "text", text: '{"ok":true}' }], extras: { name: "f" } },
    ]);
  });

  it("reads the outer call as a chain, tool calls as tools; leaves spans without ai.operationId to the GenAI adapter", () => {
    expect(
      vercelAi.read(span({ "ai.operationId": "ai.generateText", "ai.prompt": j({ system: "s", prompt: "p" }), "ai.response.text": "t" })),
    ).toMatchObject({ run_type: "chain", inputs: { system: "s", prompt: "p" }, outputs: { text: "t" } });
    expect(
      vercelAi.read(
        span({
          "ai.operationId": "ai.toolCall",
          "ai.toolCall.name": "f",
          "ai.toolCall.id": "c",
          "ai.toolCall.args": '{"a":1}',
          "ai.toolCall.result": '{"r":2}',
        }),
      ),
    ).toMatchObject({ run_type: "tool", inputs: { name: "f", tool_call_id: "c", args: { a: 1 } }, outputs: { output: { r: 2 } } });
    expect(vercelAi.read(span({ "ai.operationId": "ai.embedMany.doEmbed", "ai.values": ["a", "b"] }))).toMatchObject({
      run_type: "embedding",
      inputs: { values: ["a", "b"] },
    });
    const v7 = span(
      {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.input.messages": j([{ role: "user", parts: [{ type: "text", content: "hi" }] }]),
      },
      [],
      "chat gpt-4o",
    );
    expect(vercelAi.detect(v7)).toBe(false);
    expect(ADAPTERS.find((a) => a.detect(v7))?.name).toBe("otel-genai");
  });
});

describe("AI SDK v7 spans (GenAI conventions through @ai-sdk/otel)", () => {
  // Shaped after the v7 telemetry documentation (the v7 packages need Node 22, so no real run here).
  it("become an agent chain, a step chain, an llm run with time to first chunk, and a tool run", async () => {
    const { traceToRuns } = await import("../../src/otlp/convert.js");
    const T = 1_800_000_000_000_000; // µs
    const span = (
      spanId: string,
      parentSpanId: string | undefined,
      name: string,
      startUs: number,
      attributes: Record<string, unknown>,
    ) => ({
      traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
      spanId,
      parentSpanId,
      name,
      startUs,
      endUs: startUs + 900_000,
      attributes: attributes as Record<string, string>,
      events: [],
      status: { code: 0 },
    });
    const msgs = j([{ role: "user", parts: [{ type: "text", content: "Weather in Oslo?" }] }]);
    const runs = traceToRuns([
      span("a000000000000001", undefined, "invoke_agent gpt-4o", T, {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o",
        "gen_ai.input.messages": msgs,
        "gen_ai.usage.input_tokens": 30,
        "gen_ai.usage.output_tokens": 8,
      }),
      span("a000000000000002", "a000000000000001", "step 0", T + 10, { "gen_ai.operation.name": "agent_step" }),
      span("a000000000000003", "a000000000000002", "chat gpt-4o", T + 20, {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o",
        "gen_ai.input.messages": msgs,
        "gen_ai.output.messages": j([
          {
            role: "assistant",
            finish_reason: "tool_call",
            parts: [{ type: "tool_call", id: "c1", name: "weather", arguments: { city: "Oslo" } }],
          },
        ]),
        "gen_ai.usage.input_tokens": 30,
        "gen_ai.usage.output_tokens": 8,
        "gen_ai.client.operation.time_to_first_chunk": 0.2,
      }),
      span("a000000000000004", "a000000000000002", "execute_tool weather", T + 500_000, {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "weather",
        "gen_ai.tool.call.id": "c1",
        "gen_ai.tool.call.arguments": '{"city":"Oslo"}',
        "gen_ai.tool.call.result": '{"c":3}',
      }),
    ]);
    const by = Object.fromEntries(runs.map((r) => [r.name, r]));
    expect(by["invoke_agent gpt-4o"]).toMatchObject({
      run_type: "chain",
      inputs: { messages: [{ role: "user", content: [{ type: "text", text: "Weather in Oslo?" }] }] },
    });
    expect((by["invoke_agent gpt-4o"]!.extra as { metadata: Record<string, unknown> }).metadata.usage_metadata).toEqual({
      input_tokens: 30,
      output_tokens: 8,
      total_tokens: 38,
    });
    expect(by["step 0"]).toMatchObject({ run_type: "chain", parent_run_id: by["invoke_agent gpt-4o"]!.id });
    const chat = by["chat gpt-4o"]!;
    expect(chat).toMatchObject({ run_type: "llm", parent_run_id: by["step 0"]!.id, trace_id: by["invoke_agent gpt-4o"]!.id });
    expect(chat.events).toEqual([{ name: "new_token", time: "2027-01-15T08:00:00.200020Z" }]);
    expect(by["execute_tool weather"]).toMatchObject({
      run_type: "tool",
      parent_run_id: by["step 0"]!.id,
      inputs: { name: "weather", tool_call_id: "c1", args: { city: "Oslo" } },
      outputs: { output: { c: 3 } },
    });
  });
});
