import { describe, expect, it } from "vitest";
import {
  anthropicMessages,
  normalizeRequest,
  normalizeResponse,
  normalizeStream,
  createStreamAccumulator,
} from "../../adapters/anthropic-messages/index.js";
import { NormalizeError } from "../../src/errors.js";
import { expectValidNative } from "../helpers/native.js";

const req = (messages: unknown[], extra: Record<string, unknown> = {}) => ({
  model: "claude-sonnet-4-5",
  max_tokens: 1024,
  messages,
  ...extra,
});
const userBlocks = (...content: unknown[]) => req([{ role: "user", content }]);

describe("anthropic-messages request -> native", () => {
  const cases: [string, unknown, unknown][] = [
    ["system as a string", req([], { system: "be brief" }), [{ role: "system", content: [{ type: "text", text: "be brief" }] }]],
    [
      "system as blocks keeps cache_control",
      req([], {
        system: [
          { type: "text", text: "a" },
          { type: "text", text: "b", cache_control: { type: "ephemeral" } },
        ],
      }),
      [
        {
          role: "system",
          content: [
            { type: "text", text: "a" },
            { type: "text", text: "b", extras: { cache_control: { type: "ephemeral" } } },
          ],
        },
      ],
    ],
    ["user string content", req([{ role: "user", content: "hi" }]), [{ role: "user", content: [{ type: "text", text: "hi" }] }]],
    [
      "text with citations becomes annotations",
      req([
        {
          role: "assistant",
          content: [
            {
              type: "text",
              text: "Grass is green.",
              citations: [{ type: "char_location", cited_text: "green", document_index: 0, start_char_index: 0, end_char_index: 5 }],
            },
          ],
        },
      ]),
      [
        {
          role: "assistant",
          content: [
            {
              type: "text",
              text: "Grass is green.",
              annotations: [{ type: "char_location", cited_text: "green", document_index: 0, start_char_index: 0, end_char_index: 5 }],
            },
          ],
        },
      ],
    ],
    [
      "image base64",
      userBlocks({ type: "image", source: { type: "base64", media_type: "image/jpeg", data: "/9j/" } }),
      [{ role: "user", content: [{ type: "image", base64: "/9j/", mime_type: "image/jpeg" }] }],
    ],
    [
      "image url",
      userBlocks({ type: "image", source: { type: "url", url: "https://x.test/i.png" } }),
      [{ role: "user", content: [{ type: "image", url: "https://x.test/i.png" }] }],
    ],
    [
      "image file",
      userBlocks({ type: "image", source: { type: "file", file_id: "file_011" } }),
      [{ role: "user", content: [{ type: "image", id: "file_011" }] }],
    ],
    [
      "document base64 pdf with title and citations config",
      userBlocks({
        type: "document",
        source: { type: "base64", media_type: "application/pdf", data: "JVBERi0=" },
        title: "Spec",
        citations: { enabled: true },
      }),
      [
        {
          role: "user",
          content: [
            { type: "file", base64: "JVBERi0=", mime_type: "application/pdf", extras: { title: "Spec", citations: { enabled: true } } },
          ],
        },
      ],
    ],
    [
      "document url",
      userBlocks({ type: "document", source: { type: "url", url: "https://x.test/d.pdf" } }),
      [{ role: "user", content: [{ type: "file", url: "https://x.test/d.pdf" }] }],
    ],
    [
      "document file",
      userBlocks({ type: "document", source: { type: "file", file_id: "file_9" } }),
      [{ role: "user", content: [{ type: "file", id: "file_9" }] }],
    ],
    [
      "document text source becomes base64 text with source_type",
      userBlocks({ type: "document", source: { type: "text", media_type: "text/plain", data: "hello" } }),
      [{ role: "user", content: [{ type: "file", base64: "aGVsbG8=", mime_type: "text/plain", extras: { source_type: "text" } }] }],
    ],
    [
      "tool_use and tool_result with string content",
      req([
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "get", input: { q: 1 } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "42" }] },
      ]),
      [
        { role: "assistant", content: [{ type: "tool_call", id: "toolu_1", name: "get", args: { q: 1 } }] },
        { role: "tool", tool_call_id: "toolu_1", content: [{ type: "text", text: "42" }] },
      ],
    ],
    [
      "tool_result with blocks and is_error, followed by user text, keeps order",
      req([
        {
          role: "assistant",
          content: [
            { type: "tool_use", id: "a", name: "f", input: {} },
            { type: "tool_use", id: "b", name: "g", input: {} },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "a", content: [{ type: "text", text: "boom" }], is_error: true },
            { type: "tool_result", tool_use_id: "b" },
            { type: "text", text: "continue" },
          ],
        },
      ]),
      [
        {
          role: "assistant",
          content: [
            { type: "tool_call", id: "a", name: "f", args: {} },
            { type: "tool_call", id: "b", name: "g", args: {} },
          ],
        },
        { role: "tool", tool_call_id: "a", content: [{ type: "text", text: "boom" }], extras: { is_error: true } },
        { role: "tool", tool_call_id: "b", content: [] },
        { role: "user", content: [{ type: "text", text: "continue" }] },
      ],
    ],
    [
      "thinking keeps its signature",
      req([{ role: "assistant", content: [{ type: "thinking", thinking: "hmm", signature: "sig" }] }]),
      [{ role: "assistant", content: [{ type: "reasoning", text: "hmm", extras: { signature: "sig" } }] }],
    ],
    [
      "redacted_thinking is empty reasoning flagged redacted",
      req([{ role: "assistant", content: [{ type: "redacted_thinking", data: "enc" }] }]),
      [{ role: "assistant", content: [{ type: "reasoning", text: "", extras: { redacted: true, data: "enc" } }] }],
    ],
    [
      "server_tool_use and a web_search_tool_result",
      req([
        {
          role: "assistant",
          content: [
            { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "q" } },
            {
              type: "web_search_tool_result",
              tool_use_id: "srvtoolu_1",
              content: [{ type: "web_search_result", url: "https://a.test", title: "A", encrypted_content: "e" }],
            },
          ],
        },
      ]),
      [
        {
          role: "assistant",
          content: [
            { type: "server_tool_call", id: "srvtoolu_1", name: "web_search", args: { query: "q" } },
            {
              type: "server_tool_result",
              tool_call_id: "srvtoolu_1",
              status: "success",
              output: [{ type: "web_search_result", url: "https://a.test", title: "A", encrypted_content: "e" }],
              extras: { vendor_type: "web_search_tool_result" },
            },
          ],
        },
      ],
    ],
    [
      "a server tool error object gives status error",
      req([
        {
          role: "assistant",
          content: [
            {
              type: "code_execution_tool_result",
              tool_use_id: "s",
              content: { type: "code_execution_tool_result_error", error_code: "unavailable" },
            },
          ],
        },
      ]),
      [
        {
          role: "assistant",
          content: [
            {
              type: "server_tool_result",
              tool_call_id: "s",
              status: "error",
              output: { type: "code_execution_tool_result_error", error_code: "unavailable" },
              extras: { vendor_type: "code_execution_tool_result" },
            },
          ],
        },
      ],
    ],
    [
      "search_result is citable text with its source kept",
      userBlocks({
        type: "search_result",
        source: "https://kb.test/1",
        title: "KB",
        content: [
          { type: "text", text: "one" },
          { type: "text", text: "two" },
        ],
        citations: { enabled: true },
      }),
      [
        {
          role: "user",
          content: [
            {
              type: "text",
              text: "one\n\ntwo",
              extras: {
                vendor_type: "search_result",
                source: "https://kb.test/1",
                title: "KB",
                content: [
                  { type: "text", text: "one" },
                  { type: "text", text: "two" },
                ],
                citations: { enabled: true },
              },
            },
          ],
        },
      ],
    ],
  ];
  it.each(cases)("%s", (_name, input, expected) => {
    const out = normalizeRequest(input);
    expect(out.messages).toEqual(expected);
    expectValidNative(out.messages);
  });

  it("puts every body key but messages, system and model into invocation params", () => {
    const out = normalizeRequest(
      req([], { system: "s", temperature: 0.5, stop_sequences: ["x"], tools: [{ name: "f", input_schema: {} }] }),
    );
    expect(out.invocation_params).toEqual({
      max_tokens: 1024,
      temperature: 0.5,
      stop_sequences: ["x"],
      tools: [{ name: "f", input_schema: {} }],
    });
    expect(out).toMatchObject({ trace_provider: "anthropic", trace_model_name: "claude-sonnet-4-5" });
  });

  it("names the field of a bad image source", () => {
    try {
      normalizeRequest(userBlocks({ type: "text", text: "x" }, { type: "image", source: { type: "base64", data: "AA" } }));
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(NormalizeError);
      expect((err as NormalizeError).issues[0]!.loc).toEqual(["messages", 0, "content", 1, "source", "media_type"]);
    }
  });
});

describe("anthropic-messages response -> native", () => {
  const response = {
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "claude-sonnet-4-5-20250929",
    content: [
      { type: "thinking", thinking: "plan", signature: "s1" },
      {
        type: "text",
        text: "Answer",
        citations: [{ type: "page_location", cited_text: "x", document_index: 0, start_page_number: 1, end_page_number: 2 }],
      },
      { type: "tool_use", id: "toolu_2", name: "f", input: { a: [1] } },
    ],
    stop_reason: "tool_use",
    stop_sequence: null,
    usage: {
      input_tokens: 50,
      output_tokens: 30,
      cache_creation_input_tokens: 20,
      cache_read_input_tokens: 1000,
      cache_creation: { ephemeral_5m_input_tokens: 20, ephemeral_1h_input_tokens: 0 },
      service_tier: "standard",
    },
  };

  it("adds cache read and creation tokens into input_tokens with details", () => {
    const out = normalizeResponse(response);
    expect(out.messages[0]!.usage_metadata).toEqual({
      input_tokens: 1070,
      output_tokens: 30,
      total_tokens: 1100,
      input_token_details: { cache_read: 1000, cache_creation: 20 },
      extras: { cache_creation: { ephemeral_5m_input_tokens: 20, ephemeral_1h_input_tokens: 0 }, service_tier: "standard" },
    });
  });

  it("keeps stop_reason, citations and blocks in order", () => {
    const out = normalizeResponse(response);
    expect(out.stop_reason).toBe("tool_use");
    expect(out.trace_model_name).toBe("claude-sonnet-4-5-20250929");
    expect(out.messages[0]!.extras).toEqual({ id: "msg_1", stop_reason: "tool_use", stop_sequence: null });
    expect(out.messages[0]!.content.map((b) => b.type)).toEqual(["reasoning", "text", "tool_call"]);
    expect(out.messages[0]!.content[1]).toMatchObject({ annotations: [{ type: "page_location" }] });
    expectValidNative(out.messages);
  });
});

describe("anthropic-messages stream -> native", () => {
  const start = {
    type: "message_start",
    message: {
      id: "msg_s",
      type: "message",
      role: "assistant",
      model: "claude-haiku-4-5",
      content: [],
      stop_reason: null,
      usage: { input_tokens: 10, output_tokens: 1, cache_read_input_tokens: 4, cache_creation_input_tokens: 0 },
    },
  };

  it("replaces usage with the cumulative message_delta values instead of adding", () => {
    const out = normalizeStream([
      start,
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hi" } },
      { type: "content_block_stop", index: 0 },
      { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 15 } },
      { type: "message_delta", delta: {}, usage: { output_tokens: 22, input_tokens: 10, cache_read_input_tokens: 4 } },
      { type: "message_stop" },
    ]);
    expect(out.messages[0]!.usage_metadata).toEqual({
      input_tokens: 14,
      output_tokens: 22,
      total_tokens: 36,
      input_token_details: { cache_read: 4, cache_creation: 0 },
    });
    expect(out.stop_reason).toBe("end_turn");
  });

  it("joins input_json_delta fragments, and an empty input is {}", () => {
    const out = normalizeStream([
      start,
      { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "t1", name: "f", input: {} } },
      { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: '{"ci' } },
      { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: 'ty":"Paris"}' } },
      { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "t2", name: "g", input: {} } },
      { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: "" } },
    ]);
    expect(out.messages[0]!.content).toEqual([
      { type: "tool_call", id: "t1", name: "f", args: { city: "Paris" } },
      { type: "tool_call", id: "t2", name: "g", args: {} },
    ]);
  });

  it("folds thinking, signature and citations deltas", () => {
    const citation = { type: "char_location", cited_text: "c", document_index: 0, start_char_index: 0, end_char_index: 1 };
    const out = normalizeStream([
      start,
      { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "a" } },
      { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "b" } },
      { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "SIG" } },
      { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 1, delta: { type: "citations_delta", citation } },
      { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "cited" } },
    ]);
    expect(out.messages[0]!.content).toEqual([
      { type: "reasoning", text: "ab", extras: { signature: "SIG" } },
      { type: "text", text: "cited", annotations: [citation] },
    ]);
  });

  it("keeps partial output and records an error event that arrives mid-stream", () => {
    const out = normalizeStream([
      start,
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "partial" } },
      { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
    ]);
    expect(out.messages[0]!.content).toEqual([{ type: "text", text: "partial" }]);
    expect(out.messages[0]!.extras!.stream_error).toEqual({ type: "overloaded_error", message: "Overloaded" });
  });

  it("reports the first content token exactly once", () => {
    const acc = createStreamAccumulator();
    expect(acc.push(start)).toBe(false);
    expect(acc.push({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } })).toBe(false);
    expect(acc.push({ type: "ping" })).toBe(false);
    expect(acc.push({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "H" } })).toBe(true);
    expect(acc.push({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "i" } })).toBe(false);
  });
});

describe("anthropic-messages detect and normalize", () => {
  it("recognises Anthropic requests, responses and streams", () => {
    expect(anthropicMessages.detect(req([{ role: "user", content: "x" }], { system: "s" }))).toBe("request");
    expect(anthropicMessages.detect({ model: "claude-opus-4-1", max_tokens: 1, messages: [{ role: "user", content: "x" }] })).toBe(
      "request",
    );
    expect(anthropicMessages.detect({ type: "message", role: "assistant", content: [] })).toBe("response");
    expect(anthropicMessages.detect([{ type: "message_start", message: {} }, { type: "message_stop" }])).toBe("stream");
  });

  it("does not claim OpenAI payloads", () => {
    expect(anthropicMessages.detect({ model: "gpt-4o", messages: [{ role: "system", content: "x" }] })).toBeNull();
    expect(anthropicMessages.detect({ choices: [{ message: { role: "assistant", content: "x" } }] })).toBeNull();
    expect(
      anthropicMessages.detect({ messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "u" } }] }] }),
    ).toBeNull();
  });

  it("normalizes a request/stream pair with the response model", () => {
    const out = anthropicMessages.normalize({
      request: req([{ role: "user", content: "hi" }]),
      response: [{ type: "message_start", message: { model: "claude-sonnet-4-5-20250929", usage: { input_tokens: 1, output_tokens: 1 } } }],
    });
    expect(out.metadata).toEqual({ trace_provider: "anthropic", trace_model_name: "claude-sonnet-4-5-20250929" });
    expect(out.inputs!.messages).toHaveLength(1);
  });
});
