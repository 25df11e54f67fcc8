/**
 * Issue 35's three defects, each pinned with payloads shaped as the vendors
 * document them: Responses events a stream cut before `response.output_item.done`
 * used to lose, Gemini REST bodies in proto spelling, and members of Bedrock's
 * open unions inside ConverseStream blocks.
 */
import { describe, expect, it } from "vitest";
import type { ResponseStreamEvent } from "openai/resources/responses/responses";
import { normalizeStream as responsesStream } from "../../adapters/openai-responses/index.js";
import {
  gemini,
  normalizeRequest as geminiRequest,
  normalizeResponse as geminiResponse,
  normalizeStream as geminiStream,
} from "../../adapters/gemini/index.js";
import { normalizeStream as converseStream } from "../../adapters/bedrock-converse/index.js";
import { anthropicMessages } from "../../adapters/anthropic-messages/index.js";
import { detectFormat, normalize } from "../../src/normalize.js";
import { NormalizeError } from "../../src/errors.js";
import { expectValidNative } from "../helpers/native.js";
import { fixture } from "../helpers/replay-server.js";
import { protoSpelled } from "../helpers/recorded-style.js";

const created = {
  type: "response.created",
  sequence_number: 0,
  response: { id: "resp_1", object: "response", created_at: 1741290958, status: "in_progress", model: "gpt-4.1", output: [], usage: null },
} as const;

describe("Responses: a stream cut before output_item.done keeps what the deltas carried", () => {
  const cases: [string, unknown[], unknown][] = [
    [
      "code interpreter code deltas",
      [
        created,
        {
          type: "response.output_item.added",
          sequence_number: 1,
          output_index: 0,
          item: { type: "code_interpreter_call", id: "ci_123", status: "in_progress", code: "", container_id: "cntr_1", outputs: null },
        },
        { type: "response.code_interpreter_call_code.delta", sequence_number: 2, output_index: 0, item_id: "ci_123", delta: "print('hel" },
        { type: "response.code_interpreter_call_code.delta", sequence_number: 3, output_index: 0, item_id: "ci_123", delta: "lo')" },
      ],
      [
        {
          type: "server_tool_call",
          id: "ci_123",
          name: "code_interpreter",
          args: { code: "print('hello')", container_id: "cntr_1" },
          extras: { item_status: "in_progress" },
        },
      ],
    ],
    [
      "code interpreter code .done total, then the interpreting status",
      [
        created,
        {
          type: "response.output_item.added",
          sequence_number: 1,
          output_index: 0,
          item: { type: "code_interpreter_call", id: "ci_123", status: "in_progress", code: null, container_id: "cntr_1", outputs: null },
        },
        { type: "response.code_interpreter_call_code.done", sequence_number: 2, output_index: 0, item_id: "ci_123", code: "print(1 + 1)" },
        { type: "response.code_interpreter_call.interpreting", sequence_number: 3, output_index: 0, item_id: "ci_123" },
      ],
      [
        {
          type: "server_tool_call",
          id: "ci_123",
          name: "code_interpreter",
          args: { code: "print(1 + 1)", container_id: "cntr_1" },
          extras: { item_status: "interpreting" },
        },
      ],
    ],
    [
      "MCP call argument deltas, parsed",
      [
        created,
        {
          type: "response.output_item.added",
          sequence_number: 1,
          output_index: 0,
          item: { type: "mcp_call", id: "mcp_1", server_label: "deepwiki", name: "ask_question", arguments: "" },
        },
        { type: "response.mcp_call_arguments.delta", sequence_number: 2, output_index: 0, item_id: "mcp_1", delta: '{"repoName":' },
        {
          type: "response.mcp_call_arguments.delta",
          sequence_number: 3,
          output_index: 0,
          item_id: "mcp_1",
          delta: '"openai/openai-node"}',
        },
      ],
      [
        {
          type: "server_tool_call",
          id: "mcp_1",
          name: "ask_question",
          args: { repoName: "openai/openai-node" },
          extras: { vendor_type: "mcp_call", server_label: "deepwiki" },
        },
      ],
    ],
    [
      "MCP call arguments cut mid-JSON keep the raw text",
      [
        created,
        {
          type: "response.output_item.added",
          sequence_number: 1,
          output_index: 0,
          item: { type: "mcp_call", id: "mcp_1", server_label: "deepwiki", name: "ask_question", arguments: "" },
        },
        { type: "response.mcp_call_arguments.delta", sequence_number: 2, output_index: 0, item_id: "mcp_1", delta: '{"repoName":' },
      ],
      [
        {
          type: "server_tool_call",
          id: "mcp_1",
          name: "ask_question",
          args: {},
          extras: {
            vendor_type: "mcp_call",
            raw_args: '{"repoName":',
            args_error: expect.stringContaining("invalid JSON"),
            server_label: "deepwiki",
          },
        },
      ],
    ],
    [
      "a streamed citation reaches its text block",
      [
        created,
        {
          type: "response.output_item.added",
          sequence_number: 1,
          output_index: 0,
          item: { type: "message", id: "msg_1", status: "in_progress", role: "assistant", content: [] },
        },
        {
          type: "response.content_part.added",
          sequence_number: 2,
          output_index: 0,
          item_id: "msg_1",
          content_index: 0,
          part: { type: "output_text", text: "", annotations: [] },
        },
        {
          type: "response.output_text.delta",
          sequence_number: 3,
          output_index: 0,
          item_id: "msg_1",
          content_index: 0,
          delta: "See the report.",
          logprobs: [],
        },
        {
          type: "response.output_text.annotation.added",
          sequence_number: 4,
          output_index: 0,
          item_id: "msg_1",
          content_index: 0,
          annotation_index: 0,
          annotation: { type: "url_citation", url: "https://example.com/report", title: "Report", start_index: 8, end_index: 14 },
        },
      ],
      [
        {
          type: "text",
          text: "See the report.",
          annotations: [{ type: "url_citation", url: "https://example.com/report", title: "Report", start_index: 8, end_index: 14 }],
          extras: { item_id: "msg_1", item_status: "in_progress" },
        },
      ],
    ],
  ];
  it.each(cases)("%s", (_name, events, content) => {
    const r = responsesStream(events as ResponseStreamEvent[]);
    expect(r.messages[0]!.content).toEqual(content);
    expectValidNative(r.messages);
  });

  it("keeps an event type it does not know in extras.unmapped_events, in order", () => {
    const future = { type: "response.hologram.delta", sequence_number: 2, output_index: 0, delta: "x" };
    const r = responsesStream([
      created,
      {
        type: "response.output_item.added",
        sequence_number: 1,
        output_index: 0,
        item: { type: "message", id: "m", role: "assistant", content: [] },
      },
      future,
    ]);
    expect(r.messages[0]!.extras?.unmapped_events).toEqual([future]);
  });

  it("keeps a delta that does not fit its item (text into a function call) instead of dropping it", () => {
    const odd = {
      type: "response.output_text.delta",
      sequence_number: 2,
      output_index: 0,
      content_index: 0,
      item_id: "fc",
      delta: "stray",
    };
    const r = responsesStream([
      created,
      {
        type: "response.output_item.added",
        sequence_number: 1,
        output_index: 0,
        item: { type: "function_call", id: "fc", call_id: "c", name: "f", arguments: "" },
      },
      odd,
    ]);
    expect(r.messages[0]!.extras?.unmapped_events).toEqual([odd]);
  });
});

/** Google's REST documentation and cookbook write request bodies with the proto field names. */
const protoRequest = {
  system_instruction: { parts: [{ text: "You are a cat. Your name is Neko." }] },
  contents: [
    {
      role: "user",
      parts: [
        { inline_data: { mime_type: "image/jpeg", data: "/9j/4AAQSkZJRg==" } },
        { file_data: { mime_type: "video/mp4", file_uri: "https://generativelanguage.googleapis.com/v1beta/files/abc-123" } },
        { text: "Dim the lights" },
      ],
    },
    { role: "model", parts: [{ function_call: { name: "set_light_values", args: { brightness: 25, color_temp: "warm" } } }] },
    { role: "user", parts: [{ function_response: { name: "set_light_values", response: { brightness: 25, color_temp: "warm" } } }] },
  ],
  generation_config: { temperature: 1.0, max_output_tokens: 800, thinking_config: { thinking_budget: 0 } },
};
const camelRequest = {
  systemInstruction: { parts: [{ text: "You are a cat. Your name is Neko." }] },
  contents: [
    {
      role: "user",
      parts: [
        { inlineData: { mimeType: "image/jpeg", data: "/9j/4AAQSkZJRg==" } },
        { fileData: { mimeType: "video/mp4", fileUri: "https://generativelanguage.googleapis.com/v1beta/files/abc-123" } },
        { text: "Dim the lights" },
      ],
    },
    { role: "model", parts: [{ functionCall: { name: "set_light_values", args: { brightness: 25, color_temp: "warm" } } }] },
    { role: "user", parts: [{ functionResponse: { name: "set_light_values", response: { brightness: 25, color_temp: "warm" } } }] },
  ],
  generationConfig: { temperature: 1.0, maxOutputTokens: 800, thinkingConfig: { thinkingBudget: 0 } },
};

describe("Gemini: proto field names read as the lowerCamelCase ones", () => {
  it("a REST body in proto spelling keeps its system prompt, media and tool round", () => {
    const r = geminiRequest(protoRequest);
    expect(r.messages).toEqual([
      { role: "system", content: [{ type: "text", text: "You are a cat. Your name is Neko." }] },
      {
        role: "user",
        content: [
          { type: "image", base64: "/9j/4AAQSkZJRg==", mime_type: "image/jpeg" },
          { type: "video", url: "https://generativelanguage.googleapis.com/v1beta/files/abc-123", mime_type: "video/mp4" },
          { type: "text", text: "Dim the lights" },
        ],
      },
      {
        role: "assistant",
        content: [
          {
            type: "tool_call",
            id: "gemini_call_1_0",
            name: "set_light_values",
            args: { brightness: 25, color_temp: "warm" },
            extras: { id_synthesized: true },
          },
        ],
      },
      {
        role: "tool",
        tool_call_id: "gemini_call_1_0",
        content: [{ type: "text", text: '{"brightness":25,"color_temp":"warm"}' }],
        extras: { name: "set_light_values" },
      },
    ]);
    expect(r.invocation_params).toEqual({
      generationConfig: { temperature: 1.0, maxOutputTokens: 800, thinkingConfig: { thinkingBudget: 0 } },
    });
    expect(r).toEqual(geminiRequest(camelRequest));
    expectValidNative(r.messages);
  });

  it("auto-detects proto-spelled requests, responses, streams and pairs", () => {
    const res = protoSpelled(fixture("gemini-function-call.json"));
    expect(detectFormat(protoRequest)).toBe("gemini");
    expect(detectFormat(res)).toBe("gemini");
    expect(detectFormat(protoSpelled(fixture("gemini-stream.json")))).toBe("gemini");
    expect(detectFormat({ request: protoRequest, response: res })).toBe("gemini");
    expect(detectFormat({ usage_metadata: { prompt_token_count: 3 }, prompt_feedback: { block_reason: "SAFETY" } })).toBe("gemini");
  });

  it.each(["gemini-response.json", "gemini-function-call.json", "gemini-function-reply.json"])(
    "%s in proto spelling normalizes exactly as sent in lowerCamelCase",
    (name) => {
      expect(geminiResponse(protoSpelled(fixture(name)))).toEqual(geminiResponse(fixture(name)));
    },
  );

  it("a proto-spelled stream folds exactly as the lowerCamelCase one, usage included", () => {
    const camel = geminiStream(fixture("gemini-stream.json"));
    expect(geminiStream(protoSpelled(fixture("gemini-stream.json")) as unknown[])).toEqual(camel);
    expect(camel.usage_metadata).toBeDefined();
  });

  it("usage in proto spelling counts the same tokens", () => {
    const r = geminiResponse({
      candidates: [],
      usage_metadata: {
        prompt_token_count: 10,
        cached_content_token_count: 4,
        candidates_token_count: 2,
        thoughts_token_count: 3,
        total_token_count: 15,
      },
      model_version: "gemini-2.5-flash",
    });
    expect(r.usage_metadata).toEqual({
      input_tokens: 10,
      output_tokens: 5,
      total_tokens: 15,
      input_token_details: { cache_read: 4 },
      output_token_details: { reasoning: 3 },
    });
    expect(r.trace_model_name).toBe("gemini-2.5-flash");
  });

  it("leaves the caller's data inside function args and responses as sent, and a body in both spellings reads the lowerCamelCase field", () => {
    const r = geminiRequest({
      contents: [{ role: "model", parts: [{ function_call: { name: "f", args: { snake_key: { inner_key: 1 } } } }] }],
      systemInstruction: { parts: [{ text: "camel" }] },
      system_instruction: { parts: [{ text: "proto" }] },
    });
    expect(r.messages[0]!.content).toEqual([{ type: "text", text: "camel" }]);
    expect(r.messages[1]!.content[0]).toMatchObject({ type: "tool_call", args: { snake_key: { inner_key: 1 } } });
    expect(r.invocation_params).toEqual({ system_instruction: { parts: [{ text: "proto" }] } });
  });

  it("names a bad field as the body spells it", () => {
    let caught: unknown;
    try {
      gemini.normalize({ contents: [{ role: "user", parts: [{ inline_data: { mime_type: 7, data: "AAAA" } }] }] });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(NormalizeError);
    expect((caught as NormalizeError).issues[0]!.loc).toEqual(["contents", 0, "parts", 0, "inline_data", "mime_type"]);
    expect(normalize({ contents: "hi", generation_config: {} }).format).toBe("gemini");
  });
});

describe("Bedrock ConverseStream: members of the open unions it does not know are kept", () => {
  const start = (i: number, s: unknown) => ({ contentBlockStart: { contentBlockIndex: i, start: s } });
  const delta = (i: number, d: unknown) => ({ contentBlockDelta: { contentBlockIndex: i, delta: d } });

  it("a block that starts with an unknown member is kept at its place in extras.unmapped_content", () => {
    const r = converseStream([
      { messageStart: { role: "assistant" } },
      delta(0, { text: "Hello" }),
      start(1, { video: { format: "mp4" } }),
      { contentBlockStop: { contentBlockIndex: 1 } },
      { messageStop: { stopReason: "end_turn" } },
    ]);
    expect(r.messages[0]!.content).toEqual([{ type: "text", text: "Hello" }]);
    expect(r.messages[0]!.extras?.unmapped_content).toEqual([{ index: 1, part: { video: { format: "mp4" } } }]);
    expectValidNative(r.messages);
  });

  it("an unknown delta member goes to extras.unmapped_events with only that member, the known ones are folded", () => {
    const r = converseStream([
      { messageStart: { role: "assistant" } },
      delta(0, { text: "Hi" }),
      delta(0, { text: "!", annotation: { label: "x" } }),
      delta(0, { hologram: { frame: 1 } }),
    ]);
    expect(r.messages[0]!.content).toEqual([{ type: "text", text: "Hi!" }]);
    expect(r.messages[0]!.extras?.unmapped_events).toEqual([
      delta(0, { annotation: { label: "x" } }),
      delta(0, { hologram: { frame: 1 } }),
    ]);
  });

  it("unknown start members beside a known one, and a known member of the wrong shape, are kept too", () => {
    const r = converseStream([
      start(0, { toolUse: { toolUseId: "t1", name: "f" }, hint: "h" }),
      delta(0, { toolUse: { input: '{"a":1}' } }),
      delta(0, { toolUse: { input: 5 } }),
    ]);
    expect(r.messages[0]!.content).toEqual([{ type: "tool_call", id: "t1", name: "f", args: { a: 1 } }]);
    expect(r.messages[0]!.extras?.unmapped_events).toEqual([delta(0, { toolUse: { input: 5 } }), start(0, { hint: "h" })]);
  });

  it("a documented citation delta still folds into a citations block", () => {
    const r = converseStream([
      delta(0, { text: "Paris" }),
      delta(0, { citation: { title: "Atlas", location: { documentChar: { documentIndex: 0, start: 0, end: 5 } } } }),
    ]);
    expect(r.messages[0]!.extras?.unmapped_events).toBeUndefined();
    expect(r.messages[0]!.content[0]).toMatchObject({ type: "text", text: "Paris" });
  });
});

describe("Anthropic streams: event and delta types the adapter does not know are kept", () => {
  it("keeps them whole in extras.unmapped_events, in order, beside the folded text", () => {
    const start = {
      type: "message_start",
      message: {
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: "claude-sonnet-4-5",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 5, output_tokens: 1 },
      },
    };
    const hologram = { type: "content_block_delta", index: 0, delta: { type: "hologram_delta", frame: 3 } };
    const future = { type: "message_annotation", note: "x" };
    const r = anthropicMessages.normalizeStream([
      start,
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hi" } },
      hologram,
      future,
      { type: "ping" },
      { type: "message_stop" },
    ]);
    expect(r.messages[0]!.content).toEqual([{ type: "text", text: "Hi" }]);
    expect(r.messages[0]!.extras?.unmapped_events).toEqual([hologram, future]);
  });
});
