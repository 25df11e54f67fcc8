/**
 * Issue 14, payload adapters: one table per defect, on payloads shaped like the
 * `openai` 6.x and `@anthropic-ai/sdk` types. Every accepted output must also
 * pass non-strict validate (DESIGN: normalize never emits what validate rejects).
 */
import { describe, expect, it } from "vitest";
import { normalize } from "../../src/normalize.js";
import { NormalizeError } from "../../src/errors.js";
import { validate } from "../../src/format/validate.js";
import { openaiChat } from "../../adapters/openai-chat/index.js";
import { anthropicMessages } from "../../adapters/anthropic-messages/index.js";
import type { NormalizedRecord } from "../../adapters/types.js";

function valid(out: NormalizedRecord): NormalizedRecord {
  if (out.inputs) expect(validate(out.inputs.messages)).toEqual([]);
  if (out.outputs) expect(validate(out.outputs.messages)).toEqual([]);
  return out;
}

function issueOf(fn: () => unknown) {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(NormalizeError);
    return (err as NormalizeError).issues[0]!;
  }
  return expect.unreachable("expected a NormalizeError");
}

const text = (t: string) => ({ type: "text", text: t });

describe("1. vendor fields make a vendor record; the system prompt is never dropped", () => {
  const cases: [string, unknown, string, string, unknown[]][] = [
    [
      "Anthropic request with text blocks and a system string",
      {
        model: "claude-sonnet-4-5",
        max_tokens: 1024,
        system: "You are a tax assistant.",
        messages: [{ role: "user", content: [text("hi")] }],
      },
      "anthropic-messages",
      "anthropic",
      [
        { role: "system", content: [text("You are a tax assistant.")] },
        { role: "user", content: [text("hi")] },
      ],
    ],
    [
      "Anthropic request with system blocks and an unknown model name",
      {
        model: "my-proxy-model",
        max_tokens: 100,
        system: [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }],
        messages: [{ role: "user", content: [text("hi")] }],
      },
      "anthropic-messages",
      "anthropic",
      [
        { role: "system", content: [{ type: "text", text: "Be brief.", extras: { cache_control: { type: "ephemeral" } } }] },
        { role: "user", content: [text("hi")] },
      ],
    ],
    [
      "OpenAI request with text-part-only content",
      { model: "gpt-4o", messages: [{ role: "user", content: [text("hi")] }] },
      "openai-chat",
      "openai",
      [{ role: "user", content: [text("hi")] }],
    ],
    [
      "OpenAI request with sampling parameters and native-looking content",
      {
        model: "gpt-4.1-mini",
        temperature: 0.2,
        messages: [
          { role: "assistant", content: [text("a")] },
          { role: "user", content: [text("b")] },
        ],
      },
      "openai-chat",
      "openai",
      [
        { role: "assistant", content: [text("a")] },
        { role: "user", content: [text("b")] },
      ],
    ],
  ];
  it.each(cases)("%s", (_n, payload, format, provider, messages) => {
    const out = valid(normalize(payload));
    expect(out.format).toBe(format);
    expect(out.metadata.trace_provider).toBe(provider);
    expect(out.inputs!.messages).toEqual(messages);
  });

  it("keeps a record with only native fields native", () => {
    expect(normalize({ messages: [{ role: "user", content: [text("hi")] }] }).format).toBe("native");
    expect(
      normalize({
        message: { role: "assistant", content: [text("hi")] },
        usage_metadata: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
      }).format,
    ).toBe("native");
  });

  it("refuses to guess when vendor fields name no vendor", () => {
    expect(issueOf(() => normalize({ model: "llama-3", messages: [{ role: "user", content: [text("hi")] }] }))).toMatchObject({
      type: "unknown_format",
    });
  });
});

describe("2. an unknown part or block is kept in extras.unmapped_content, the rest normalized", () => {
  const hologram = { type: "hologram", frames: 3 };
  const cases: [string, () => NormalizedRecord, (out: NormalizedRecord) => unknown, unknown][] = [
    [
      "OpenAI request part",
      () => normalize({ model: "gpt-4o", messages: [{ role: "user", content: [text("a"), hologram, text("b")] }] }),
      (o) => o.inputs!.messages[0],
      { role: "user", content: [text("a"), text("b")], extras: { unmapped_content: [{ index: 1, part: hologram }] } },
    ],
    [
      "OpenAI reply content part",
      () =>
        normalize({
          object: "chat.completion",
          model: "gpt-4o",
          choices: [{ index: 0, message: { role: "assistant", content: [hologram, text("x")] }, finish_reason: "stop" }],
        }),
      (o) => o.outputs!.messages[0]!.extras!.unmapped_content,
      [{ index: 0, part: hologram }],
    ],
    [
      "Anthropic request block among tool results",
      () =>
        normalize({
          model: "claude-sonnet-4-5",
          max_tokens: 10,
          messages: [
            { role: "assistant", content: [{ type: "tool_use", id: "tu1", name: "f", input: {} }] },
            { role: "user", content: [{ type: "tool_result", tool_use_id: "tu1", content: "ok" }, hologram, text("next")] },
          ],
        }),
      (o) => o.inputs!.messages.slice(1),
      [
        { role: "tool", tool_call_id: "tu1", content: [text("ok")] },
        { role: "user", content: [text("next")], extras: { unmapped_content: [{ index: 1, part: hologram }] } },
      ],
    ],
    [
      "Anthropic reply block",
      () =>
        normalize({
          id: "msg_1",
          type: "message",
          role: "assistant",
          model: "claude-sonnet-4-5",
          content: [{ type: "fancy_block", x: 1 }, text("hi")],
          stop_reason: "end_turn",
          usage: { input_tokens: 1, output_tokens: 1 },
        }),
      (o) => [o.outputs!.messages[0]!.content, o.outputs!.messages[0]!.extras!.unmapped_content],
      [[text("hi")], [{ index: 0, part: { type: "fancy_block", x: 1 } }]],
    ],
    [
      "Anthropic stream content_block_start",
      () =>
        normalize([
          {
            type: "message_start",
            message: {
              id: "msg_1",
              type: "message",
              role: "assistant",
              model: "claude-sonnet-4-5",
              content: [],
              usage: { input_tokens: 5, output_tokens: 1 },
            },
          },
          { type: "content_block_start", index: 0, content_block: { type: "fancy_block", x: 1 } },
          { type: "content_block_stop", index: 0 },
          { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
          { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "hi" } },
          { type: "content_block_stop", index: 1 },
          { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 3 } },
          { type: "message_stop" },
        ]),
      (o) => [o.outputs!.messages[0]!.content, o.outputs!.messages[0]!.extras!.unmapped_content],
      [[text("hi")], [{ index: 0, part: { type: "fancy_block", x: 1 } }]],
    ],
  ];
  it.each(cases)("%s", (_n, run, pick, expected) => {
    expect(pick(valid(run()))).toEqual(expected);
  });
});

describe("3. OpenAI audio replies carry base64 and the transcript as text", () => {
  const audio = { id: "audio_abc", data: "UklGRiQAAABXQVZF", expires_at: 1763900000, transcript: "Hello there." };
  const request = {
    model: "gpt-4o-audio-preview",
    modalities: ["text", "audio"],
    audio: { voice: "alloy", format: "mp3" },
    messages: [{ role: "user", content: "hi" }],
  };
  const response = {
    id: "c1",
    object: "chat.completion",
    model: "gpt-4o-audio-preview",
    choices: [{ index: 0, message: { role: "assistant", content: null, refusal: null, audio }, finish_reason: "stop" }],
  };
  const expected = (mime: string) => [
    { type: "audio", base64: audio.data, mime_type: mime, extras: { id: "audio_abc", expires_at: 1763900000 } },
    { type: "text", text: "Hello there.", extras: { audio_transcript: true } },
  ];
  const chunks = [
    {
      id: "c1",
      object: "chat.completion.chunk",
      model: "gpt-4o-audio-preview",
      choices: [{ index: 0, delta: { role: "assistant", audio: { id: "audio_abc", transcript: "Hello " } } }],
    },
    {
      id: "c1",
      object: "chat.completion.chunk",
      model: "gpt-4o-audio-preview",
      choices: [{ index: 0, delta: { audio: { data: "UklGRiQA", transcript: "there." } } }],
    },
    {
      id: "c1",
      object: "chat.completion.chunk",
      model: "gpt-4o-audio-preview",
      choices: [{ index: 0, delta: { audio: { data: "AABXQVZF", expires_at: 1763900000 } }, finish_reason: "stop" }],
    },
  ];
  const cases: [string, unknown, string][] = [
    ["a response with its request: the request's format names the MIME type", { request, response }, "audio/mpeg"],
    ["a response alone: the MIME type from the bytes' header", response, "audio/wav"],
    ["a stream with its request", { request, response: chunks }, "audio/mpeg"],
    ["a stream alone", chunks, "audio/wav"],
  ];
  it.each(cases)("%s", (_n, payload, mime) => {
    const out = valid(normalize(payload));
    expect(out.outputs!.messages[0]!.content).toEqual(expected(mime));
  });

  it("keeps an id-only history reference as an id source", () => {
    const out = valid(
      normalize({
        ...request,
        messages: [
          { role: "assistant", audio: { id: "audio_abc" } },
          { role: "user", content: "again" },
        ],
      }),
    );
    expect(out.inputs!.messages[0]!.content).toEqual([{ type: "audio", id: "audio_abc" }]);
  });
});

describe("4. SPEC §2.6's four reply shapes carry any assistant content", () => {
  const openaiMsg = {
    role: "assistant",
    content: null,
    tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }],
  };
  const openaiBlocks = [{ type: "tool_call", id: "call_1", name: "get_weather", args: { city: "Paris" } }];
  const anthropicContent = [
    { type: "thinking", thinking: "t", signature: "sig" },
    { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
  ];
  const anthropicBlocks = [
    { type: "reasoning", text: "t", extras: { signature: "sig" } },
    { type: "tool_call", id: "toolu_1", name: "get_weather", args: { city: "Paris" } },
  ];
  const cases: [string, unknown, string, unknown[]][] = [
    ["OpenAI {choices:[{message}]}", { choices: [{ message: openaiMsg }] }, "openai-chat", openaiBlocks],
    ["OpenAI {message}", { message: openaiMsg }, "openai-chat", openaiBlocks],
    ["OpenAI {role, content, tool_calls}", openaiMsg, "openai-chat", openaiBlocks],
    [
      "OpenAI refusal as {message}",
      { message: { role: "assistant", content: null, refusal: "No." } },
      "openai-chat",
      [{ type: "text", text: "No.", extras: { refusal: true } }],
    ],
    [
      "Anthropic {choices:[{message}]}",
      { choices: [{ message: { role: "assistant", content: anthropicContent } }] },
      "anthropic-messages",
      anthropicBlocks,
    ],
    ["Anthropic {message}", { message: { role: "assistant", content: anthropicContent } }, "anthropic-messages", anthropicBlocks],
    ["Anthropic {role, content}", { role: "assistant", content: anthropicContent }, "anthropic-messages", anthropicBlocks],
    ["Anthropic [role, content]", ["assistant", anthropicContent], "anthropic-messages", anthropicBlocks],
  ];
  it.each(cases)("%s (auto-detected)", (_n, payload, format, blocks) => {
    const out = valid(normalize(payload));
    expect(out.format).toBe(format);
    expect(out.outputs!.messages[0]!.content).toEqual(blocks);
  });

  it.each([
    ["{message}", { message: openaiMsg }],
    ["{role, content}", openaiMsg],
    ["[role, content]", ["assistant", [{ type: "text", text: "hi" }]]],
  ])("openai-chat with --format accepts %s", (_n, payload) => {
    expect(valid(normalize(payload, { format: "openai-chat" })).outputs!.messages).toHaveLength(1);
  });
});

describe("5. tool results whose call is not in the record are orphans, and valid", () => {
  const cases: [string, unknown, string][] = [
    [
      "legacy function message, call trimmed",
      {
        model: "gpt-3.5-turbo",
        messages: [
          { role: "function", name: "lookup", content: "found" },
          { role: "user", content: "and?" },
        ],
      },
      "call_legacy_orphan_0",
    ],
    [
      "tool message, call trimmed",
      { model: "gpt-4o", messages: [{ role: "tool", tool_call_id: "call_gone", content: "18C" }] },
      "call_gone",
    ],
    [
      "Anthropic tool_result, tool_use trimmed",
      {
        model: "claude-sonnet-4-5",
        max_tokens: 5,
        messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_gone", content: "ok" }] }],
      },
      "toolu_gone",
    ],
    ["native tool message, call trimmed", { messages: [{ role: "tool", tool_call_id: "x", content: [text("r")] }] }, "x"],
  ];
  it.each(cases)("%s", (_n, payload, id) => {
    const out = valid(normalize(payload));
    const tool = out.inputs!.messages.find((m) => m.role === "tool")!;
    expect(tool.tool_call_id).toBe(id);
    expect(tool.extras).toMatchObject({ orphan: true });
    expect(validate(out.inputs!.messages, { strict: true }).map((i) => i.type)).toContain("unknown_tool_call_id");
  });

  it("does not mark a linked result", () => {
    const out = normalize({
      model: "gpt-4o",
      messages: [
        { role: "assistant", tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "c", content: "ok" },
      ],
    });
    expect(out.inputs!.messages[1]!.extras).toBeUndefined();
  });

  it("rejects a native record validate rejects, with validate's location", () => {
    expect(issueOf(() => normalize({ messages: [{ role: "user", tool_call_id: "x", content: [text("r")] }] }))).toMatchObject({
      loc: ["messages", 0, "tool_call_id"],
      type: "tool_call_id_role",
    });
  });
});

describe("6. streams keep what non-streams keep", () => {
  it("keeps unknown delta, choice, fragment and chunk fields as a response keeps them", () => {
    const nonStream = openaiChat.normalize({
      id: "c1",
      object: "chat.completion",
      model: "m",
      system_fingerprint: "fp",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: "hi",
            reasoning: "because",
            provider_specific: { a: 1 },
            tool_calls: [{ id: "t", type: "function", function: { name: "f", arguments: "{}" }, extra_content: { sig: "s" } }],
          },
          finish_reason: "stop",
          native_finish_reason: "STOP",
        },
      ],
    });
    const stream = openaiChat.normalize([
      {
        id: "c1",
        object: "chat.completion.chunk",
        model: "m",
        system_fingerprint: "fp",
        choices: [{ index: 0, delta: { role: "assistant", content: "h", reasoning: "bec" } }],
      },
      {
        id: "c1",
        object: "chat.completion.chunk",
        model: "m",
        choices: [
          {
            index: 0,
            delta: {
              content: "i",
              reasoning: "ause",
              provider_specific: { a: 1 },
              tool_calls: [{ index: 0, id: "t", type: "function", function: { name: "f", arguments: "{}" }, extra_content: { sig: "s" } }],
            },
          },
        ],
      },
      {
        id: "c1",
        object: "chat.completion.chunk",
        model: "m",
        choices: [{ index: 0, delta: { reasoning: null }, finish_reason: "stop", native_finish_reason: "STOP" }],
      },
    ]);
    const { object: _o, ...nonStreamExtras } = nonStream.outputs!.messages[0]!.extras!;
    expect(stream.outputs!.messages[0]!.extras).toEqual(nonStreamExtras);
    expect(stream.outputs!.messages[0]!.content).toEqual(nonStream.outputs!.messages[0]!.content);
  });

  it("attaches streamed annotations to the text as a response does", () => {
    const ann = { type: "url_citation", url_citation: { url: "https://x.test", title: "x", start_index: 0, end_index: 2 } };
    const out = openaiChat.normalize([
      { object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: "hi" } }] },
      { object: "chat.completion.chunk", choices: [{ index: 0, delta: { annotations: [ann] } }] },
    ]);
    expect(out.outputs!.messages[0]!.content).toEqual([{ type: "text", text: "hi", annotations: [ann] }]);
  });
});

describe("7. error locations name the field", () => {
  const cases: [string, () => unknown, unknown][] = [
    [
      "messages not an array (openai-chat)",
      () => normalize({ model: "gpt-4o", messages: "hello" }, { format: "openai-chat" }),
      { loc: ["messages"], type: "list_type", msg: expect.stringContaining("expected an array") },
    ],
    [
      "messages not an array (anthropic-messages)",
      () => normalize({ model: "claude-sonnet-4-5", messages: "hello" }, { format: "anthropic-messages" }),
      { loc: ["messages"], type: "list_type" },
    ],
    ["choices not an array", () => normalize({ choices: {} }, { format: "openai-chat" }), { loc: ["choices"], type: "list_type" }],
    [
      "message_start without a message object",
      () => anthropicMessages.normalize([{ type: "message_start", message: "oops" }, { type: "message_stop" }]),
      { loc: [0, "message"], type: "object_type" },
    ],
    [
      "message_start with a null message, in a pair",
      () => anthropicMessages.normalize({ response: [{ type: "message_start", message: null }] }),
      { loc: ["response", 0, "message"], type: "object_type" },
    ],
  ];
  it.each(cases)("%s", (_n, run, expected) => {
    expect(issueOf(run)).toMatchObject(expected as object);
  });
});

describe("8. Anthropic content documents stay readable", () => {
  it.each([
    [
      "text and image blocks, with title and context",
      {
        type: "document",
        title: "Q3 report",
        context: "internal",
        citations: { enabled: true },
        source: {
          type: "content",
          content: [
            text("Revenue rose."),
            { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
            text("Costs fell."),
          ],
        },
      },
      [
        {
          type: "text",
          text: "Revenue rose.",
          extras: { document: { title: "Q3 report", context: "internal", citations: { enabled: true } }, document_part: 0 },
        },
        {
          type: "image",
          base64: "iVBORw0KGgo=",
          mime_type: "image/png",
          extras: { document: { title: "Q3 report", context: "internal", citations: { enabled: true } }, document_part: 1 },
        },
        {
          type: "text",
          text: "Costs fell.",
          extras: { document: { title: "Q3 report", context: "internal", citations: { enabled: true } }, document_part: 2 },
        },
      ],
    ],
    [
      "string content",
      { type: "document", source: { type: "content", content: "Plain words." } },
      [{ type: "text", text: "Plain words.", extras: { document: {}, document_part: 0 } }],
    ],
  ])("%s", (_n, block, expected) => {
    const out = valid(
      normalize({ model: "claude-sonnet-4-5", max_tokens: 10, messages: [{ role: "user", content: [block, text("Summarize.")] }] }),
    );
    expect(out.inputs!.messages[0]!.content).toEqual([...expected, text("Summarize.")]);
  });
});
