import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  openaiChat,
  normalizeRequest,
  normalizeResponse,
  normalizeStream,
  createStreamAccumulator,
} from "../../adapters/openai-chat/index.js";
import { NormalizeError } from "../../src/errors.js";
import { expectValidNative } from "../helpers/native.js";

const user = (content: unknown) => ({ model: "gpt-4o", messages: [{ role: "user", content }] });

describe("openai-chat request -> native", () => {
  const cases: [string, unknown, unknown][] = [
    [
      "system string",
      { model: "gpt-4o", messages: [{ role: "system", content: "be brief" }] },
      [{ role: "system", content: [{ type: "text", text: "be brief" }] }],
    ],
    [
      "developer becomes system with vendor_role",
      { model: "o3", messages: [{ role: "developer", content: [{ type: "text", text: "rules" }] }] },
      [{ role: "system", content: [{ type: "text", text: "rules" }], extras: { vendor_role: "developer" } }],
    ],
    [
      "user name goes to extras",
      { model: "gpt-4o", messages: [{ role: "user", name: "ann", content: "hi" }] },
      [{ role: "user", content: [{ type: "text", text: "hi" }], extras: { name: "ann" } }],
    ],
    [
      "image_url http stays a url with detail",
      user([{ type: "image_url", image_url: { url: "https://x.test/a.png", detail: "high" } }]),
      [{ role: "user", content: [{ type: "image", url: "https://x.test/a.png", extras: { detail: "high" } }] }],
    ],
    [
      "data URL with + in the MIME type",
      user([{ type: "image_url", image_url: { url: "data:image/svg+xml;base64,PHN2Zy8+" } }]),
      [{ role: "user", content: [{ type: "image", base64: "PHN2Zy8+", mime_type: "image/svg+xml" }] }],
    ],
    [
      "data URL with - and . in the MIME type",
      user([{ type: "image_url", image_url: { url: "data:image/vnd.microsoft-icon;base64,AAAB" } }]),
      [{ role: "user", content: [{ type: "image", base64: "AAAB", mime_type: "image/vnd.microsoft-icon" }] }],
    ],
    [
      "data URL with parameters",
      user([{ type: "image_url", image_url: { url: "data:image/svg+xml;charset=utf-8;base64,PHN2Zy8+" } }]),
      [
        {
          role: "user",
          content: [{ type: "image", base64: "PHN2Zy8+", mime_type: "image/svg+xml", extras: { mime_params: { charset: "utf-8" } } }],
        },
      ],
    ],
    [
      "input_audio wav",
      user([{ type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } }]),
      [{ role: "user", content: [{ type: "audio", base64: "UklGRg==", mime_type: "audio/wav" }] }],
    ],
    [
      "input_audio mp3",
      user([{ type: "input_audio", input_audio: { data: "SUQz", format: "mp3" } }]),
      [{ role: "user", content: [{ type: "audio", base64: "SUQz", mime_type: "audio/mpeg" }] }],
    ],
    [
      "file by id",
      user([{ type: "file", file: { file_id: "file-abc" } }]),
      [{ role: "user", content: [{ type: "file", id: "file-abc" }] }],
    ],
    [
      "file by data URL with filename",
      user([{ type: "file", file: { file_data: "data:application/pdf;base64,JVBERi0=", filename: "a.pdf" } }]),
      [{ role: "user", content: [{ type: "file", base64: "JVBERi0=", mime_type: "application/pdf", extras: { filename: "a.pdf" } }] }],
    ],
    [
      "file by raw base64 takes the MIME type from the file name",
      user([{ type: "file", file: { file_data: "JVBERi0=", filename: "r.pdf" } }]),
      [{ role: "user", content: [{ type: "file", base64: "JVBERi0=", mime_type: "application/pdf", extras: { filename: "r.pdf" } }] }],
    ],
    [
      "assistant tool_calls (function) and a tool reply",
      {
        model: "gpt-4o",
        messages: [
          { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: '{"a":1}' } }] },
          { role: "tool", tool_call_id: "c1", content: "ok" },
        ],
      },
      [
        { role: "assistant", content: [{ type: "tool_call", id: "c1", name: "f", args: { a: 1 } }] },
        { role: "tool", tool_call_id: "c1", content: [{ type: "text", text: "ok" }] },
      ],
    ],
    [
      "custom tool call keeps its free-form input",
      {
        model: "gpt-5",
        messages: [
          { role: "assistant", content: null, tool_calls: [{ id: "c2", type: "custom", custom: { name: "grep", input: "foo.*bar" } }] },
        ],
      },
      [
        {
          role: "assistant",
          content: [{ type: "tool_call", id: "c2", name: "grep", args: {}, extras: { tool_type: "custom", input: "foo.*bar" } }],
        },
      ],
    ],
    [
      'tool arguments "" are {}',
      {
        model: "gpt-4o",
        messages: [{ role: "assistant", tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "" } }] }],
      },
      [{ role: "assistant", content: [{ type: "tool_call", id: "c", name: "f", args: {} }] }],
    ],
    [
      "invalid JSON arguments keep raw_args and args_error",
      {
        model: "gpt-4o",
        messages: [{ role: "assistant", tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: '{"a":' } }] }],
      },
      [
        {
          role: "assistant",
          content: [
            {
              type: "tool_call",
              id: "c",
              name: "f",
              args: {},
              extras: { raw_args: '{"a":', args_error: expect.stringContaining("invalid JSON") },
            },
          ],
        },
      ],
    ],
    [
      "refusal becomes a text block flagged refusal",
      { model: "gpt-4o", messages: [{ role: "assistant", content: null, refusal: "I can't help with that." }] },
      [{ role: "assistant", content: [{ type: "text", text: "I can't help with that.", extras: { refusal: true } }] }],
    ],
    [
      "assistant audio by id",
      { model: "gpt-4o-audio-preview", messages: [{ role: "assistant", audio: { id: "audio_1" } }] },
      [{ role: "assistant", content: [{ type: "audio", id: "audio_1" }] }],
    ],
    [
      "reasoning_content from compatible vendors",
      { model: "gpt-4o", messages: [{ role: "assistant", reasoning_content: "think", content: "answer" }] },
      [
        {
          role: "assistant",
          content: [
            { type: "reasoning", text: "think" },
            { type: "text", text: "answer" },
          ],
        },
      ],
    ],
    [
      "legacy function_call and function role get linked synthesized ids",
      {
        model: "gpt-3.5-turbo",
        messages: [
          { role: "user", content: "q" },
          { role: "assistant", content: null, function_call: { name: "lookup", arguments: '{"q":"x"}' } },
          { role: "function", name: "lookup", content: "found" },
        ],
      },
      [
        { role: "user", content: [{ type: "text", text: "q" }] },
        {
          role: "assistant",
          content: [{ type: "tool_call", id: "call_legacy_1", name: "lookup", args: { q: "x" }, extras: { legacy_function_call: true } }],
        },
        {
          role: "tool",
          tool_call_id: "call_legacy_1",
          content: [{ type: "text", text: "found" }],
          extras: { name: "lookup", vendor_role: "function" },
        },
      ],
    ],
  ];
  it.each(cases)("%s", (_name, input, expected) => {
    const out = normalizeRequest(input);
    expect(out.messages).toEqual(expected);
    expectValidNative(out.messages);
  });

  it("puts every body key but messages and model into invocation params", () => {
    const out = normalizeRequest({ model: "gpt-4o", messages: [], temperature: 0.1, max_completion_tokens: 10, stop: ["x"], tools: [] });
    expect(out.invocation_params).toEqual({ temperature: 0.1, max_completion_tokens: 10, stop: ["x"], tools: [] });
    expect(out.trace_model_name).toBe("gpt-4o");
    expect(out.trace_provider).toBe("openai");
  });

  it("rejects an unknown role with its location", () => {
    expect(() => normalizeRequest({ messages: [{ role: "wizard", content: "x" }] })).toThrow(/messages\.0\.role/);
  });
});

describe("openai-chat response -> native", () => {
  const response = {
    id: "chatcmpl-9",
    object: "chat.completion",
    created: 1,
    model: "gpt-4o-2024-08-06",
    system_fingerprint: "fp_1",
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: "See [1].",
          refusal: null,
          annotations: [{ type: "url_citation", url_citation: { url: "https://a.test", title: "A", start_index: 4, end_index: 7 } }],
        },
        finish_reason: "stop",
        logprobs: null,
      },
      { index: 1, message: { role: "assistant", content: null, refusal: "No." }, finish_reason: "stop", logprobs: null },
    ],
    usage: {
      prompt_tokens: 100,
      completion_tokens: 20,
      total_tokens: 120,
      prompt_tokens_details: { cached_tokens: 64, audio_tokens: 3 },
      completion_tokens_details: { reasoning_tokens: 8, audio_tokens: 2, accepted_prediction_tokens: 1, rejected_prediction_tokens: 0 },
    },
  };

  it("returns one assistant message per choice with annotations and refusal", () => {
    const out = normalizeResponse(response);
    expect(out.messages).toHaveLength(2);
    expect(out.messages[0]!.content).toEqual([
      {
        type: "text",
        text: "See [1].",
        annotations: [{ type: "url_citation", url_citation: { url: "https://a.test", title: "A", start_index: 4, end_index: 7 } }],
      },
    ]);
    expect(out.messages[1]!.content).toEqual([{ type: "text", text: "No.", extras: { refusal: true } }]);
    expect(out.messages[1]!.extras).toEqual({ finish_reason: "stop", choice_index: 1 });
    expect(out.trace_model_name).toBe("gpt-4o-2024-08-06");
    expect(out.stop_reason).toBe("stop");
    expectValidNative(out.messages);
  });

  it("keeps cached tokens inside input_tokens and maps reasoning and audio details", () => {
    const out = normalizeResponse(response);
    expect(out.messages[0]!.usage_metadata).toEqual({
      input_tokens: 100,
      output_tokens: 20,
      total_tokens: 120,
      input_token_details: { cache_read: 64, audio: 3 },
      output_token_details: { reasoning: 8, audio: 2, accepted_prediction_tokens: 1, rejected_prediction_tokens: 0 },
    });
    expect(out.messages[1]!.usage_metadata).toBeUndefined();
  });

  it("keeps response metadata on the first message", () => {
    const out = normalizeResponse(response);
    expect(out.messages[0]!.extras).toMatchObject({
      id: "chatcmpl-9",
      object: "chat.completion",
      created: 1,
      system_fingerprint: "fp_1",
      finish_reason: "stop",
      choice_index: 0,
    });
  });

  it("maps response tool calls and audio", () => {
    const out = normalizeResponse({
      model: "gpt-4o-audio-preview",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: null,
            audio: { id: "au_1", data: "UklGRg==", transcript: "hi", expires_at: 9 },
            tool_calls: [{ id: "t", type: "function", function: { name: "f", arguments: "{}" } }],
          },
          finish_reason: "tool_calls",
        },
      ],
    });
    expect(out.messages[0]!.content).toEqual([
      { type: "audio", base64: "UklGRg==", mime_type: "audio/wav", extras: { id: "au_1", expires_at: 9 } },
      { type: "text", text: "hi", extras: { audio_transcript: true } },
      { type: "tool_call", id: "t", name: "f", args: {} },
    ]);
  });
});

describe("openai-chat stream -> native", () => {
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({
    id: "c",
    object: "chat.completion.chunk",
    created: 1,
    model: "gpt-4o-mini",
    choices,
    ...extra,
  });

  it("assembles interleaved tool-call fragments keyed by index", () => {
    const out = normalizeStream([
      chunk([{ index: 0, delta: { role: "assistant", content: null } }]),
      chunk([{ index: 0, delta: { tool_calls: [{ index: 0, id: "a", type: "function", function: { name: "f", arguments: "" } }] } }]),
      chunk([{ index: 0, delta: { tool_calls: [{ index: 1, id: "b", type: "function", function: { name: "g", arguments: '{"y"' } }] } }]),
      chunk([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"x":1}' } }] } }]),
      chunk([{ index: 0, delta: { tool_calls: [{ index: 1, function: { arguments: ":2}" } }] }, finish_reason: "tool_calls" }]),
    ]);
    expect(out.messages[0]!.content).toEqual([
      { type: "tool_call", id: "a", name: "f", args: { x: 1 } },
      { type: "tool_call", id: "b", name: "g", args: { y: 2 } },
    ]);
    expect(out.stop_reason).toBe("tool_calls");
  });

  it("reads usage from the final chunk with empty choices", () => {
    const out = normalizeStream([
      chunk([{ index: 0, delta: { content: "Hi" } }]),
      chunk([], { usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6, prompt_tokens_details: { cached_tokens: 2 } } }),
    ]);
    expect(out.messages[0]!.usage_metadata).toEqual({
      input_tokens: 5,
      output_tokens: 1,
      total_tokens: 6,
      input_token_details: { cache_read: 2 },
    });
  });

  it("tolerates a chunk with no choices key at all", () => {
    const out = normalizeStream([
      { id: "c", object: "chat.completion.chunk", model: "m" },
      chunk([{ index: 0, delta: { content: "ok" } }]),
    ]);
    expect(out.messages[0]!.content).toEqual([{ type: "text", text: "ok" }]);
  });

  it("separates n > 1 choices by index", () => {
    const out = normalizeStream([
      chunk([
        { index: 0, delta: { content: "A" } },
        { index: 1, delta: { content: "B" } },
      ]),
      chunk([
        { index: 1, delta: { content: "b" }, finish_reason: "stop" },
        { index: 0, delta: { content: "a" }, finish_reason: "length" },
      ]),
    ]);
    expect(out.messages.map((m) => m.content)).toEqual([[{ type: "text", text: "Aa" }], [{ type: "text", text: "Bb" }]]);
    expect(out.messages[1]!.extras).toMatchObject({ choice_index: 1, finish_reason: "stop" });
    expectValidNative(out.messages);
  });

  it("reports the first content token exactly once", () => {
    const acc = createStreamAccumulator();
    expect(acc.push(chunk([{ index: 0, delta: { role: "assistant", content: "" } }]))).toBe(false);
    expect(acc.push(chunk([{ index: 0, delta: { content: "H" } }]))).toBe(true);
    expect(acc.push(chunk([{ index: 0, delta: { content: "i" } }]))).toBe(false);
    expect(acc.result().messages[0]!.content).toEqual([{ type: "text", text: "Hi" }]);
  });

  it("keeps each unknown chunk field's last non-null value, in first-seen key order, whatever the chunks' key orders", () => {
    // The rule as it reads chunk by chunk: a value replaces, a null only where nothing was yet.
    const byRule = (chunks: Record<string, unknown>[]) => {
      const meta: Record<string, unknown> = {};
      for (const c of chunks)
        for (const k in c) {
          if (k === "choices" || k === "model" || k === "object" || k === "usage") continue;
          if (c[k] !== null || meta[k] === undefined) Object.defineProperty(meta, k, { value: c[k], enumerable: true, writable: true });
        }
      return meta;
    };
    const keys = ["id", "created", "system_fingerprint", "service_tier", "obfuscation", "object", "model", "__proto__"];
    const chunkArb = fc
      .tuple(
        fc.uniqueArray(fc.constantFrom(...keys), { maxLength: keys.length }),
        fc.array(fc.oneof(fc.constant(null), fc.string({ maxLength: 3 }), fc.integer()), {
          minLength: keys.length,
          maxLength: keys.length,
        }),
        fc.nat(8),
      )
      .map(([ks, vs, at]) => {
        const c: Record<string, unknown> = {};
        // choices anywhere in the key order, or missing
        const order = [...ks];
        if (at % 3 !== 0) order.splice(at % (order.length + 1), 0, "choices");
        order.forEach((k, i) => {
          const v = k === "choices" ? [{ index: 0, delta: { content: "x" } }] : k === "object" || k === "model" ? "m" : vs[i % vs.length];
          Object.defineProperty(c, k, { value: v, enumerable: true, writable: true, configurable: true });
        });
        return c;
      });
    fc.assert(
      fc.property(fc.array(chunkArb, { minLength: 1, maxLength: 12 }), (chunks) => {
        const acc = createStreamAccumulator();
        for (const c of chunks) acc.push(c);
        const extras: Record<string, unknown> = { ...acc.result().messages[0]?.extras };
        delete extras.finish_reason;
        const want = byRule(chunks);
        expect(JSON.stringify(Object.entries(extras))).toBe(JSON.stringify(Object.entries(want)));
      }),
      { numRuns: 500 },
    );
  });

  it("collects refusal and reasoning deltas", () => {
    const out = normalizeStream([
      chunk([{ index: 0, delta: { reasoning_content: "hm" } }]),
      chunk([{ index: 0, delta: { refusal: "No" } }]),
    ]);
    expect(out.messages[0]!.content).toEqual([
      { type: "reasoning", text: "hm" },
      { type: "text", text: "No", extras: { refusal: true } },
    ]);
  });
});

describe("openai-chat detect and normalize", () => {
  it("tells requests, responses, streams and pairs apart", () => {
    expect(openaiChat.detect({ model: "gpt-4o", messages: [{ role: "user", content: "x" }] })).toBe("request");
    expect(openaiChat.detect({ object: "chat.completion", choices: [{ message: { role: "assistant", content: "x" } }] })).toBe("response");
    expect(openaiChat.detect([{ object: "chat.completion.chunk", choices: [{ index: 0, delta: {} }] }])).toBe("stream");
    expect(
      openaiChat.detect({
        request: { model: "gpt-4o", messages: [] },
        response: { object: "chat.completion", choices: [{ message: { role: "assistant", content: "" } }] },
      }),
    ).toBe("pair");
  });

  it("does not claim Anthropic payloads", () => {
    expect(
      openaiChat.detect({ model: "claude-sonnet-4-5", max_tokens: 5, system: "s", messages: [{ role: "user", content: "x" }] }),
    ).toBeNull();
    expect(openaiChat.detect({ type: "message", role: "assistant", content: [], model: "claude" })).toBeNull();
    expect(openaiChat.detect([{ type: "message_start", message: {} }])).toBeNull();
  });

  it("takes trace_model_name from the response, else the request", () => {
    const both = openaiChat.normalize({
      request: { model: "gpt-4o", messages: [] },
      response: { model: "gpt-4o-2024-08-06", choices: [] },
    });
    expect(both.metadata).toEqual({ trace_provider: "openai", trace_model_name: "gpt-4o-2024-08-06" });
    const reqOnly = openaiChat.normalize({ model: "gpt-4o", messages: [] });
    expect(reqOnly.metadata.trace_model_name).toBe("gpt-4o");
    expect(reqOnly.outputs).toBeUndefined();
  });

  it("prefixes error locations with request or response in a pair", () => {
    try {
      openaiChat.normalize({ request: { messages: [{ role: "user", content: 5 }] } });
      expect.unreachable();
    } catch (err) {
      expect((err as NormalizeError).issues[0]!.loc).toEqual(["request", "messages", 0, "content"]);
    }
  });
});
