import { describe, expect, it } from "vitest";
import type {
  ResponseCreateParamsNonStreaming,
  ResponseInputItem,
  ResponseOutputItem,
  ResponseStreamEvent,
} from "openai/resources/responses/responses";
import {
  openaiResponses,
  normalizeRequest,
  normalizeResponse,
  normalizeStream,
  createStreamAccumulator,
} from "../../adapters/openai-responses/index.js";
import { openaiChat } from "../../adapters/openai-chat/index.js";
import { normalize, detectFormat } from "../../src/normalize.js";
import { NormalizeError } from "../../src/errors.js";
import { expectValidNative } from "../helpers/native.js";
import { fixture } from "../helpers/replay-server.js";

const req = (input: ResponseInputItem[] | string, extra: Partial<ResponseCreateParamsNonStreaming> = {}) =>
  ({ model: "gpt-4.1", input, ...extra }) satisfies ResponseCreateParamsNonStreaming;
const res = (output: ResponseOutputItem[], extra: Record<string, unknown> = {}) => ({
  id: "resp_1",
  object: "response",
  created_at: 1,
  status: "completed",
  model: "gpt-4.1-2025-04-14",
  output,
  ...extra,
});

describe("openai-responses request -> native", () => {
  const cases: [string, unknown, unknown][] = [
    ["input string is one user message", req("hi"), [{ role: "user", content: [{ type: "text", text: "hi" }] }]],
    [
      "instructions become a system message first",
      req("hi", { instructions: "be brief" }),
      [
        { role: "system", content: [{ type: "text", text: "be brief" }] },
        { role: "user", content: [{ type: "text", text: "hi" }] },
      ],
    ],
    [
      "developer message becomes system with vendor_role",
      req([{ role: "developer", content: "rules" }]),
      [{ role: "system", content: [{ type: "text", text: "rules" }], extras: { vendor_role: "developer" } }],
    ],
    [
      "input_text part",
      req([{ type: "message", role: "user", content: [{ type: "input_text", text: "look" }] }]),
      [{ role: "user", content: [{ type: "text", text: "look" }] }],
    ],
    [
      "input_image by URL keeps detail",
      req([{ role: "user", content: [{ type: "input_image", detail: "high", image_url: "https://x.test/a.png" }] }]),
      [{ role: "user", content: [{ type: "image", url: "https://x.test/a.png", extras: { detail: "high" } }] }],
    ],
    [
      "input_image data URL -> base64",
      req([{ role: "user", content: [{ type: "input_image", detail: "auto", image_url: "data:image/png;base64,iVBORw0KGgo=" }] }]),
      [{ role: "user", content: [{ type: "image", base64: "iVBORw0KGgo=", mime_type: "image/png", extras: { detail: "auto" } }] }],
    ],
    [
      "input_image by file id",
      req([{ role: "user", content: [{ type: "input_image", detail: "low", file_id: "file-img" }] }]),
      [{ role: "user", content: [{ type: "image", id: "file-img", extras: { detail: "low" } }] }],
    ],
    [
      "input_file data URL with filename",
      req([{ role: "user", content: [{ type: "input_file", file_data: "data:application/pdf;base64,JVBERi0=", filename: "a.pdf" }] }]),
      [{ role: "user", content: [{ type: "file", base64: "JVBERi0=", mime_type: "application/pdf", extras: { filename: "a.pdf" } }] }],
    ],
    [
      "input_file by id",
      req([{ role: "user", content: [{ type: "input_file", file_id: "file-abc" }] }]),
      [{ role: "user", content: [{ type: "file", id: "file-abc" }] }],
    ],
    [
      "input_file by URL",
      req([{ role: "user", content: [{ type: "input_file", file_url: "https://x.test/r.pdf" }] }]),
      [{ role: "user", content: [{ type: "file", url: "https://x.test/r.pdf" }] }],
    ],
    [
      "input_audio",
      { model: "gpt-4o", input: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } }] }] },
      [{ role: "user", content: [{ type: "audio", base64: "UklGRg==", mime_type: "audio/wav" }] }],
    ],
    [
      "function_call then function_call_output link by call_id",
      req([
        { type: "function_call", id: "fc_1", call_id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' },
        { type: "function_call_output", call_id: "call_1", output: "18C" },
      ]),
      [
        {
          role: "assistant",
          content: [{ type: "tool_call", id: "call_1", name: "get_weather", args: { city: "Paris" }, extras: { item_id: "fc_1" } }],
        },
        { role: "tool", tool_call_id: "call_1", content: [{ type: "text", text: "18C" }] },
      ],
    ],
    [
      "a function_call_output whose call was trimmed is an orphan",
      req([{ type: "function_call_output", call_id: "call_gone", output: [{ type: "input_text", text: "done" }] }]),
      [{ role: "tool", tool_call_id: "call_gone", content: [{ type: "text", text: "done" }], extras: { orphan: true } }],
    ],
    [
      "consecutive assistant-side items form one assistant turn",
      req([
        { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "think" }], encrypted_content: "gAAA" },
        {
          type: "message",
          id: "msg_1",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: "answer", annotations: [] }],
        },
        { role: "user", content: "thanks" },
      ]),
      [
        {
          role: "assistant",
          content: [
            { type: "reasoning", text: "think", extras: { summary: true, item_id: "rs_1", encrypted_content: "gAAA" } },
            { type: "text", text: "answer", extras: { item_id: "msg_1", item_status: "completed" } },
          ],
        },
        { role: "user", content: [{ type: "text", text: "thanks" }] },
      ],
    ],
    [
      "unknown item kept whole on the message it follows",
      req([
        { role: "user", content: "hi" },
        { type: "item_reference", id: "msg_old" },
      ]),
      [
        {
          role: "user",
          content: [{ type: "text", text: "hi" }],
          extras: { unmapped_content: [{ index: 1, part: { type: "item_reference", id: "msg_old" } }] },
        },
      ],
    ],
    [
      "unknown content part kept in unmapped_content",
      {
        model: "gpt-4.1",
        input: [
          {
            role: "user",
            content: [
              { type: "input_text", text: "a" },
              { type: "input_hologram", data: 1 },
            ],
          },
        ],
      },
      [
        {
          role: "user",
          content: [{ type: "text", text: "a" }],
          extras: { unmapped_content: [{ index: 1, part: { type: "input_hologram", data: 1 } }] },
        },
      ],
    ],
    [
      "custom tool call keeps its free-form input; its output answers it",
      req([
        { type: "custom_tool_call", call_id: "cc_1", name: "grep", input: "foo.*bar" },
        { type: "custom_tool_call_output", call_id: "cc_1", output: "3 matches" },
      ]),
      [
        {
          role: "assistant",
          content: [{ type: "tool_call", id: "cc_1", name: "grep", args: {}, extras: { tool_type: "custom", input: "foo.*bar" } }],
        },
        {
          role: "tool",
          tool_call_id: "cc_1",
          content: [{ type: "text", text: "3 matches" }],
          extras: { vendor_type: "custom_tool_call_output" },
        },
      ],
    ],
    [
      "computer_call is a caller-run tool call; its screenshot output is an image",
      req([
        {
          type: "computer_call",
          id: "cu_1",
          call_id: "call_cu",
          action: { type: "click", button: "left", x: 10, y: 20 },
          pending_safety_checks: [],
          status: "completed",
        },
        {
          type: "computer_call_output",
          call_id: "call_cu",
          output: { type: "computer_screenshot", image_url: "data:image/png;base64,iVBORw0KGgo=" },
        },
      ]),
      [
        {
          role: "assistant",
          content: [
            {
              type: "tool_call",
              id: "call_cu",
              name: "computer",
              args: { action: { type: "click", button: "left", x: 10, y: 20 } },
              extras: { tool_type: "computer", item_id: "cu_1", pending_safety_checks: [], item_status: "completed" },
            },
          ],
        },
        {
          role: "tool",
          tool_call_id: "call_cu",
          content: [{ type: "image", base64: "iVBORw0KGgo=", mime_type: "image/png" }],
          extras: { vendor_type: "computer_call_output" },
        },
      ],
    ],
    [
      "previous_response_id marks the first message",
      req("more", { previous_response_id: "resp_prev" }),
      [{ role: "user", content: [{ type: "text", text: "more" }], extras: { previous_response_id: "resp_prev" } }],
    ],
  ];
  for (const [name, body, expected] of cases) {
    it(name, () => {
      const r = normalizeRequest(body);
      expect(r.messages).toEqual(expected);
      expectValidNative(r.messages);
      expect(r.trace_provider).toBe("openai");
    });
  }

  it("keeps everything but input, instructions and model in invocation_params", () => {
    const r = normalizeRequest(
      req("hi", { instructions: "x", temperature: 0.2, previous_response_id: "resp_prev", max_output_tokens: 50 }),
    );
    expect(r.invocation_params).toEqual({ temperature: 0.2, previous_response_id: "resp_prev", max_output_tokens: 50 });
    expect(r.trace_model_name).toBe("gpt-4.1");
  });

  it("names the bad field", () => {
    const err = (() => {
      try {
        normalizeRequest({ model: "gpt-4.1", input: [{ role: "user", content: [{ type: "input_text", text: 3 }] }] });
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(NormalizeError);
    expect((err as NormalizeError).issues[0]!.loc).toEqual(["input", 0, "content", 0, "text"]);
  });
});

describe("openai-responses response -> native", () => {
  it("maps the recorded response: reasoning, function call, text with annotations, usage", () => {
    const r = normalizeResponse(fixture("openai-response.json"));
    const [msg] = r.messages;
    expect(msg!.content).toEqual([
      {
        type: "reasoning",
        text: "The user wants the weather; call the tool.",
        extras: { summary: true, item_id: "rs_67ccd2bf0b8c8190a9e9c8f2c1a0b7f1" },
      },
      {
        type: "tool_call",
        id: "call_12345xyz",
        name: "get_weather",
        args: { location: "Paris, France" },
        extras: { item_id: "fc_67ccd2bf17f0819081ff3bb2cf6508e6", item_status: "completed" },
      },
      {
        type: "text",
        text: "Checking the weather in Paris.",
        annotations: [{ type: "url_citation", start_index: 0, end_index: 8, title: "Weather", url: "https://weather.test/paris" }],
        extras: { item_id: "msg_67ccd2bf17f0819081ff3bb2cf6508e6", item_status: "completed" },
      },
    ]);
    expect(r.usage_metadata).toEqual({
      input_tokens: 328,
      output_tokens: 52,
      total_tokens: 380,
      input_token_details: { cache_read: 256 },
      output_token_details: { reasoning: 32 },
    });
    expect(msg!.usage_metadata).toEqual(r.usage_metadata);
    expect(r.trace_model_name).toBe("gpt-4.1-2025-04-14");
    expect(r.trace_provider).toBe("openai");
    expect(r.stop_reason).toBe("completed");
    expect(msg!.extras).toMatchObject({
      id: "resp_67ccd2bed1ec8190b14f964abc054267",
      previous_response_id: "resp_previous_1",
      status: "completed",
    });
    expectValidNative(r.messages);
  });

  const cases: [string, unknown[], unknown[]][] = [
    [
      "refusal -> text flagged refusal",
      [{ type: "message", id: "m", role: "assistant", status: "completed", content: [{ type: "refusal", refusal: "No." }] }],
      [{ type: "text", text: "No.", extras: { refusal: true, item_id: "m", item_status: "completed" } }],
    ],
    [
      "unparseable arguments keep raw_args",
      [{ type: "function_call", call_id: "c", name: "f", arguments: "{bad" }],
      [
        {
          type: "tool_call",
          id: "c",
          name: "f",
          args: {},
          extras: { raw_args: "{bad", args_error: expect.stringContaining("invalid JSON") },
        },
      ],
    ],
    [
      "encrypted-only reasoning keeps its content",
      [{ type: "reasoning", id: "rs", summary: [], encrypted_content: "gAAAA" }],
      [{ type: "reasoning", text: "", extras: { item_id: "rs", encrypted_content: "gAAAA" } }],
    ],
    [
      "web_search_call -> server_tool_call (no result in the item)",
      [{ type: "web_search_call", id: "ws_1", status: "completed", action: { type: "search", query: "paris weather" } }],
      [
        {
          type: "server_tool_call",
          id: "ws_1",
          name: "web_search",
          args: { action: { type: "search", query: "paris weather" } },
          extras: { item_status: "completed" },
        },
      ],
    ],
    [
      "file_search_call with results -> call + result",
      [{ type: "file_search_call", id: "fs_1", status: "completed", queries: ["q"], results: [{ file_id: "f1", text: "t", score: 0.9 }] }],
      [
        { type: "server_tool_call", id: "fs_1", name: "file_search", args: { queries: ["q"] }, extras: { item_status: "completed" } },
        { type: "server_tool_result", tool_call_id: "fs_1", status: "success", output: [{ file_id: "f1", text: "t", score: 0.9 }] },
      ],
    ],
    [
      "code_interpreter_call with outputs",
      [
        {
          type: "code_interpreter_call",
          id: "ci_1",
          status: "completed",
          code: "print(1)",
          container_id: "cntr_1",
          outputs: [{ type: "logs", logs: "1\n" }],
        },
      ],
      [
        {
          type: "server_tool_call",
          id: "ci_1",
          name: "code_interpreter",
          args: { code: "print(1)", container_id: "cntr_1" },
          extras: { item_status: "completed" },
        },
        { type: "server_tool_result", tool_call_id: "ci_1", status: "success", output: [{ type: "logs", logs: "1\n" }] },
      ],
    ],
    [
      "image_generation_call with its image",
      [{ type: "image_generation_call", id: "ig_1", status: "completed", result: "iVBORw0KGgo=" }],
      [
        { type: "server_tool_call", id: "ig_1", name: "image_generation", args: {}, extras: { item_status: "completed" } },
        { type: "server_tool_result", tool_call_id: "ig_1", status: "success", output: "iVBORw0KGgo=" },
      ],
    ],
    [
      "a failed built-in call has an error result",
      [{ type: "web_search_call", id: "ws_2", status: "failed", action: { type: "search", query: "x" } }],
      [
        {
          type: "server_tool_call",
          id: "ws_2",
          name: "web_search",
          args: { action: { type: "search", query: "x" } },
          extras: { item_status: "failed" },
        },
        { type: "server_tool_result", tool_call_id: "ws_2", status: "error" },
      ],
    ],
    [
      "mcp_call with an error",
      [{ type: "mcp_call", id: "mcp_1", server_label: "docs", name: "search", arguments: '{"q":"a"}', error: "timeout" }],
      [
        {
          type: "server_tool_call",
          id: "mcp_1",
          name: "search",
          args: { q: "a" },
          extras: { vendor_type: "mcp_call", server_label: "docs" },
        },
        { type: "server_tool_result", tool_call_id: "mcp_1", status: "error", output: "timeout" },
      ],
    ],
  ];
  for (const [name, output, expected] of cases) {
    it(name, () => {
      const r = normalizeResponse(res(output as ResponseOutputItem[]));
      expect(r.messages[0]!.content).toEqual(expected);
      expectValidNative(r.messages);
    });
  }

  it("keeps an unknown output item whole in unmapped_content", () => {
    const item = {
      type: "local_shell_call",
      id: "ls_1",
      call_id: "c",
      action: { type: "exec", command: ["ls"], env: {} },
      status: "completed",
    };
    const r = normalizeResponse(res([item as ResponseOutputItem]));
    expect(r.messages[0]!.content).toEqual([]);
    expect(r.messages[0]!.extras?.unmapped_content).toEqual([{ index: 0, part: item }]);
  });

  it("keeps unknown usage detail counts under their own names", () => {
    const r = normalizeResponse(
      res([], {
        usage: {
          input_tokens: 5,
          output_tokens: 2,
          total_tokens: 7,
          input_tokens_details: { cached_tokens: 1, cache_write_tokens: 2, constructor: 3 },
          output_tokens_details: { reasoning_tokens: 1 },
        },
      }),
    );
    expect(r.usage_metadata).toEqual({
      input_tokens: 5,
      output_tokens: 2,
      total_tokens: 7,
      input_token_details: { cache_read: 1, cache_creation: 2, constructor: 3 },
      output_token_details: { reasoning: 1 },
    });
  });

  it("an incomplete response's reason is the stop reason", () => {
    expect(normalizeResponse(res([], { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } })).stop_reason).toBe(
      "max_output_tokens",
    );
  });
});

describe("openai-responses stream", () => {
  const events = fixture("openai-response-stream.json") as ResponseStreamEvent[];

  it("folds the recorded event sequence into the final response, with usage", () => {
    const r = normalizeStream(events);
    expect(r.messages[0]!.content).toEqual([
      { type: "text", text: "Hi there!", extras: { item_id: "msg_stream_1", item_status: "completed" } },
      {
        type: "tool_call",
        id: "call_stream_1",
        name: "get_weather",
        args: { location: "Paris" },
        extras: { item_id: "fc_stream_1", item_status: "completed" },
      },
    ]);
    expect(r.usage_metadata).toEqual({
      input_tokens: 37,
      output_tokens: 11,
      total_tokens: 48,
      input_token_details: { cache_read: 0 },
      output_token_details: { reasoning: 0 },
    });
    expect(r.trace_model_name).toBe("gpt-4.1-2025-04-14");
    expectValidNative(r.messages);
  });

  it("push() is true exactly once, at the first content delta", () => {
    const acc = createStreamAccumulator();
    const firsts = events.map((e) => acc.push(e));
    expect(firsts.indexOf(true)).toBe(events.findIndex((e) => e.type === "response.output_text.delta"));
    expect(firsts.filter(Boolean)).toHaveLength(1);
  });

  it("a stream cut before response.completed keeps the partial text and arguments", () => {
    const cut = events.slice(0, 11); // through the first argument delta
    const r = normalizeStream(cut);
    expect(r.messages[0]!.content).toEqual([
      { type: "text", text: "Hi there!", extras: { item_id: "msg_stream_1", item_status: "completed" } },
      {
        type: "tool_call",
        id: "call_stream_1",
        name: "get_weather",
        args: {},
        extras: {
          item_id: "fc_stream_1",
          item_status: "in_progress",
          raw_args: '{"location":',
          args_error: expect.stringContaining("invalid JSON"),
        },
      },
    ]);
    expect(r.usage_metadata).toBeUndefined();
    const early = normalizeStream(events.slice(0, 5));
    expect(early.messages[0]!.content).toEqual([
      { type: "text", text: "Hi", extras: { item_id: "msg_stream_1", item_status: "in_progress" } },
    ]);
  });

  it("reasoning summary deltas build reasoning blocks", () => {
    const r = normalizeStream([
      { type: "response.output_item.added", sequence_number: 0, output_index: 0, item: { type: "reasoning", id: "rs_1", summary: [] } },
      {
        type: "response.reasoning_summary_text.delta",
        sequence_number: 1,
        item_id: "rs_1",
        output_index: 0,
        summary_index: 0,
        delta: "Think",
      },
      {
        type: "response.reasoning_summary_text.delta",
        sequence_number: 2,
        item_id: "rs_1",
        output_index: 0,
        summary_index: 0,
        delta: "ing",
      },
    ] satisfies ResponseStreamEvent[]);
    expect(r.messages[0]!.content).toEqual([{ type: "reasoning", text: "Thinking", extras: { summary: true, item_id: "rs_1" } }]);
  });

  it("a failed response keeps its error and status; an error event is kept too", () => {
    const failed = {
      ...fixture("openai-response.json"),
      status: "failed",
      output: [],
      usage: null,
      error: { code: "server_error", message: "boom" },
    };
    const r = normalizeStream([events[0], { type: "response.failed", sequence_number: 1, response: failed }]);
    expect(r.stop_reason).toBe("failed");
    expect(r.messages[0]!.extras).toMatchObject({ error: { code: "server_error", message: "boom" } });
    const e = normalizeStream([
      events[0],
      events[4],
      { type: "error", sequence_number: 5, code: "rate_limit_exceeded", message: "slow", param: null },
    ]);
    expect(e.messages[0]!.content[0]).toMatchObject({ type: "text", text: "Hi" });
    expect(e.messages[0]!.extras).toMatchObject({ error: { type: "error", code: "rate_limit_exceeded", message: "slow" } });
  });

  it("types named like Object.prototype members are unknown, not crashes", () => {
    for (const type of ["constructor", "toString", "__proto__", "hasOwnProperty"]) {
      expect(normalizeStream([{ type, output_index: 0, delta: "x" }]).messages[0]!.content).toEqual([]);
      expect(
        normalizeResponse(res([{ type, id: "x" } as unknown as ResponseOutputItem])).messages[0]!.extras?.unmapped_content,
      ).toHaveLength(1);
      expect(() => normalizeRequest({ model: "gpt-4.1", input: [{ role: type, content: "x" }] })).toThrow(NormalizeError);
      expect(normalizeRequest({ model: "gpt-4.1", input: [{ type, id: "x" }] }).messages[0]!.extras?.unmapped_content).toHaveLength(1);
    }
  });

  it("names a bad event by its position", () => {
    expect(() => normalizeStream([events[0], 3])).toThrow(NormalizeError);
    let caught: unknown;
    try {
      normalizeStream([events[0], { type: 3 }]);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(NormalizeError);
    expect((caught as NormalizeError).issues[0]!.loc).toEqual([1, "type"]);
  });
});

describe("openai-responses detection", () => {
  it("auto-detects requests, responses, streams and pairs", () => {
    expect(detectFormat(req("hi"))).toBe("openai-responses");
    expect(detectFormat(req([{ role: "user", content: "hi" }], { instructions: "x" }))).toBe("openai-responses");
    expect(detectFormat(fixture("openai-response.json"))).toBe("openai-responses");
    expect(detectFormat(fixture("openai-response-stream.json"))).toBe("openai-responses");
    expect(detectFormat({ request: req("hi"), response: fixture("openai-response.json") })).toBe("openai-responses");
    const rec = normalize({ request: req("hi", { instructions: "be brief" }), response: fixture("openai-response.json") });
    expect(rec.format).toBe("openai-responses");
    expect(rec.metadata).toEqual({ trace_provider: "openai", trace_model_name: "gpt-4.1-2025-04-14" });
    expect(rec.inputs!.messages.map((m) => m.role)).toEqual(["system", "user"]);
  });

  it("does not claim chat-completions payloads, and chat does not claim Responses payloads", () => {
    const chatReq = { model: "gpt-4o", messages: [{ role: "user", content: "hi" }] };
    const chatRes = fixture("openai-completion.json");
    const chatStream = fixture("openai-stream.json");
    for (const p of [chatReq, chatRes, chatStream, { request: chatReq, response: chatRes }]) expect(openaiResponses.detect(p)).toBeNull();
    for (const p of [req("hi"), fixture("openai-response.json"), fixture("openai-response-stream.json")])
      expect(openaiChat.detect(p)).toBeNull();
  });

  it("does not claim an embeddings or moderations request", () => {
    expect(openaiResponses.detect({ model: "text-embedding-3-small", input: "hello" })).toBeNull();
    expect(openaiResponses.detect({ model: "custom", input: ["a", "b"], dimensions: 256 })).toBeNull();
    expect(openaiResponses.detect({ model: "omni-moderation-latest", input: "text" })).toBeNull();
  });
});
