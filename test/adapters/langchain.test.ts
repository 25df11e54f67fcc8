/**
 * The LangChain adapter on payloads as langchain_core writes them: Python's
 * `dumpd` constructor records (load/serializable.py: required, truthy or
 * non-default fields only; namespace `langchain.schema.messages` from
 * messages/base.py), `messages_to_dict`'s `{type, data}` dicts (messages/utils.py:
 * `data` is the whole model dump), the `LLMResult` the tracer sends as outputs,
 * and LangChain.js's writings (namespace `langchain_core.messages`, camelCase
 * standard blocks, `llmOutput`).
 */
import { describe, expect, it } from "vitest";
import { langchain } from "../../adapters/langchain/index.js";
import { normalize } from "../../src/normalize.js";
import { validate } from "../../src/format/validate.js";
import { NormalizeError } from "../../src/errors.js";
import type { Message } from "../../src/format/schema.js";

const PY = ["langchain", "schema", "messages"];
const JS = ["langchain_core", "messages"];
const ctor = (ns: string[], cls: string, kwargs: Record<string, unknown>) => ({ lc: 1, type: "constructor", id: [...ns, cls], kwargs });

const toolCall = { name: "get_weather", args: { city: "Paris" }, id: "call_1", type: "tool_call" };
const usage = {
  input_tokens: 61,
  output_tokens: 15,
  total_tokens: 76,
  input_token_details: { audio: 0, cache_read: 0 },
  output_token_details: { audio: 0, reasoning: 0 },
};
const tokenUsage = {
  completion_tokens: 15,
  prompt_tokens: 61,
  total_tokens: 76,
  completion_tokens_details: { reasoning_tokens: 0 },
  prompt_tokens_details: { cached_tokens: 0 },
};
const responseMetadata = {
  token_usage: tokenUsage,
  model_name: "gpt-4o-2024-08-06",
  system_fingerprint: "fp_x",
  finish_reason: "tool_calls",
  logprobs: null,
};

/** Python `dumpd` of a conversation: defaults left out, `type` kept (it is truthy). */
const pyConversation = [
  ctor(PY, "SystemMessage", { content: "Be brief.", type: "system" }),
  ctor(PY, "HumanMessage", { content: "Weather in Paris?", type: "human" }),
  ctor(PY, "AIMessage", {
    content: "",
    additional_kwargs: {
      tool_calls: [{ id: "call_1", function: { arguments: '{"city": "Paris"}', name: "get_weather" }, type: "function" }],
      refusal: null,
    },
    response_metadata: responseMetadata,
    type: "ai",
    id: "run-1-0",
    tool_calls: [toolCall],
    usage_metadata: usage,
  }),
  ctor(PY, "ToolMessage", { content: "18°C, rain", type: "tool", tool_call_id: "call_1", status: "success" }),
];

/** `messages_to_dict` of the same conversation: `data` is the full model dump. */
const dump = (type: string, fields: Record<string, unknown>) => ({
  type,
  data: { additional_kwargs: {}, response_metadata: {}, type, name: null, id: null, example: false, ...fields },
});
const pyDicts = [
  dump("system", { content: "Be brief." }),
  dump("human", { content: "Weather in Paris?" }),
  dump("ai", {
    content: "",
    response_metadata: responseMetadata,
    id: "run-1-0",
    tool_calls: [toolCall],
    invalid_tool_calls: [],
    usage_metadata: usage,
  }),
  dump("tool", { content: "18°C, rain", tool_call_id: "call_1", artifact: null, status: "success" }),
];

const expectedConversation: Message[] = [
  { role: "system", content: [{ type: "text", text: "Be brief." }] },
  { role: "user", content: [{ type: "text", text: "Weather in Paris?" }] },
  {
    role: "assistant",
    content: [{ type: "tool_call", id: "call_1", name: "get_weather", args: { city: "Paris" } }],
    usage_metadata: usage,
    extras: expect.objectContaining({ id: "run-1-0", response_metadata: responseMetadata }) as never,
  },
  { role: "tool", tool_call_id: "call_1", content: [{ type: "text", text: "18°C, rain" }], extras: { status: "success" } },
];

function valid(messages: readonly Message[] | undefined): Message[] {
  expect(messages).toBeDefined();
  expect(validate(messages)).toEqual([]);
  return messages as Message[];
}

describe("Python-shaped LangChain payloads", () => {
  it.each([
    ["dumpd constructor records", pyConversation],
    ["messages_to_dict {type, data} dicts", pyDicts],
  ])("reads %s of a tool round: tool_calls -> tool_call blocks, ToolMessage -> tool with its tool_call_id", (_name, conversation) => {
    const rec = normalize({ messages: [conversation] });
    expect(rec.format).toBe("langchain");
    expect(valid(rec.inputs?.messages)).toEqual(expectedConversation);
  });

  it("keeps additional_kwargs and response_metadata in extras, nothing dropped", () => {
    const [, , ai] = normalize({ messages: [pyConversation] }).inputs!.messages;
    expect(ai!.extras).toEqual({
      additional_kwargs: pyConversation[2]!.kwargs.additional_kwargs,
      response_metadata: responseMetadata,
      id: "run-1-0",
    });
  });

  it("reads an LLMResult: the ChatGeneration's message, its generation_info, and llm_output beside it", () => {
    const outputs = {
      generations: [
        [
          {
            text: "",
            generation_info: { finish_reason: "tool_calls", logprobs: null },
            type: "ChatGeneration",
            message: pyConversation[2],
          },
        ],
      ],
      llm_output: { token_usage: tokenUsage, model_name: "gpt-4o-2024-08-06", system_fingerprint: "fp_x" },
      run: null,
      type: "LLMResult",
    };
    const rec = normalize({ request: { messages: [pyConversation.slice(0, 2)] }, response: outputs });
    expect(rec.format).toBe("langchain");
    expect(rec.metadata).toEqual({ trace_model_name: "gpt-4o-2024-08-06" });
    const [reply] = valid(rec.outputs?.messages);
    expect(reply).toMatchObject({
      role: "assistant",
      content: [{ type: "tool_call", id: "call_1", name: "get_weather", args: { city: "Paris" } }],
      usage_metadata: usage,
    });
    expect(reply!.extras).toMatchObject({
      generation_info: { finish_reason: "tool_calls", logprobs: null },
      llm_output: outputs.llm_output,
    });
    expect(langchain.normalizeResponse(outputs).stop_reason).toBe("tool_calls");
  });

  it("reads a completion model's run: prompts in, Generation text out, usage and model from llm_output", () => {
    const rec = normalize({
      request: { prompts: ["Tell me a joke"] },
      response: {
        generations: [
          [{ text: "Why did the chicken cross the road?", generation_info: { finish_reason: "stop", logprobs: null }, type: "Generation" }],
        ],
        llm_output: { token_usage: { prompt_tokens: 4, completion_tokens: 9, total_tokens: 13 }, model_name: "gpt-3.5-turbo-instruct" },
        run: null,
        type: "LLMResult",
      },
    });
    expect(rec.format).toBe("langchain");
    expect(valid(rec.inputs?.messages)).toEqual([{ role: "user", content: [{ type: "text", text: "Tell me a joke" }] }]);
    const [reply] = valid(rec.outputs?.messages);
    expect(reply).toMatchObject({
      role: "assistant",
      content: [{ type: "text", text: "Why did the chicken cross the road?" }],
      usage_metadata: { input_tokens: 4, output_tokens: 9, total_tokens: 13 },
    });
    expect(rec.metadata.trace_model_name).toBe("gpt-3.5-turbo-instruct");
  });

  it("links an older message's OpenAI function_call (only in additional_kwargs) to the FunctionMessage answering it", () => {
    const rec = normalize({
      messages: [
        [
          ctor(PY, "HumanMessage", { content: "Weather?" }),
          ctor(PY, "AIMessage", {
            content: "",
            additional_kwargs: { function_call: { name: "get_weather", arguments: '{"city":"Paris"}' } },
          }),
          ctor(PY, "FunctionMessage", { content: "18°C", name: "get_weather" }),
        ],
      ],
    });
    const [, ai, fn] = valid(rec.inputs?.messages);
    const call = ai!.content[0] as { type: string; id: string; args: unknown };
    expect(call).toMatchObject({ type: "tool_call", name: "get_weather", args: { city: "Paris" } });
    expect(fn).toMatchObject({ role: "tool", tool_call_id: call.id, extras: { vendor_role: "function", name: "get_weather" } });
  });

  it("reads a streamed AIMessageChunk (Python dict form) like the finished message, its tool_call_chunks as the calls", () => {
    const chunk = dump("AIMessageChunk", {
      content: "",
      tool_call_chunks: [
        { name: "get_weather", args: '{"city": ', id: "call_1", index: 0, type: "tool_call_chunk" },
        { name: null, args: '"Paris"}', id: null, index: 0, type: "tool_call_chunk" },
      ],
      usage_metadata: usage,
    });
    const [msg] = valid(normalize({ messages: [[dump("human", { content: "Weather?" }), chunk]] }).inputs!.messages.slice(1));
    expect(msg).toEqual({
      role: "assistant",
      content: [{ type: "tool_call", id: "call_1", name: "get_weather", args: { city: "Paris" } }],
      usage_metadata: usage,
    });
  });

  it("maps ChatMessage roles, keeps the role, and reads plain {role, content} / {type, content} dicts", () => {
    const rec = normalize({
      messages: [
        [
          { role: "user", content: "hi" },
          { type: "ai", content: "hello" },
          ctor(PY, "ChatMessage", { content: "Looks fine.", role: "critic" }),
          { role: "developer", content: "Stay on topic." },
        ],
      ],
    });
    expect(valid(rec.inputs?.messages)).toEqual([
      { role: "user", content: [{ type: "text", text: "hi" }] },
      { role: "assistant", content: [{ type: "text", text: "hello" }] },
      { role: "user", content: [{ type: "text", text: "Looks fine." }], extras: { vendor_role: "critic" } },
      { role: "system", content: [{ type: "text", text: "Stay on topic." }], extras: { vendor_role: "developer" } },
    ]);
  });

  it("marks each message of a batch of prompts with its batch_index", () => {
    const rec = normalize({ request: { messages: [[dump("human", { content: "a" })], [dump("human", { content: "b" })]] } });
    expect(rec.inputs!.messages.map((m) => m.extras)).toEqual([{ batch_index: 0 }, { batch_index: 1 }]);
  });
});

describe("content blocks", () => {
  const blocksOf = (content: unknown[]) => {
    const [m] = valid(normalize({ messages: [[ctor(JS, "HumanMessage", { content })]] }).inputs!.messages);
    return m!;
  };

  it("reads v1 standard data blocks, Python and JS spellings, with exactly one source each", () => {
    const m = blocksOf([
      { type: "image", base64: "iVBORw0KGgo=", mime_type: "image/png", id: "lc_1" },
      { type: "image", url: "https://x.test/cat.png" },
      { type: "file", file_id: "file-abc", mime_type: "application/pdf" },
      { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
      { type: "file", fileId: "file-js" },
      { type: "audio", url: "data:audio/wav;base64,UklGRg==" },
      { type: "text-plain", text: "hello", mime_type: "text/plain", title: "notes" },
    ]);
    expect(m.content).toEqual([
      { type: "image", base64: "iVBORw0KGgo=", mime_type: "image/png", extras: { id: "lc_1" } },
      { type: "image", url: "https://x.test/cat.png" },
      { type: "file", id: "file-abc", mime_type: "application/pdf" },
      { type: "image", base64: "iVBORw0KGgo=", mime_type: "image/png" },
      { type: "file", id: "file-js" },
      { type: "audio", base64: "UklGRg==", mime_type: "audio/wav" },
      {
        type: "file",
        base64: Buffer.from("hello").toString("base64"),
        mime_type: "text/plain",
        extras: { title: "notes", source_type: "text", langchain_type: "text-plain" },
      },
    ]);
  });

  it("reads v0 data blocks by their source_type", () => {
    const m = blocksOf([
      { type: "image", source_type: "url", url: "https://x.test/a.png" },
      { type: "audio", source_type: "base64", data: "UklGRg==", mime_type: "audio/wav" },
      { type: "file", source_type: "id", id: "file-1" },
    ]);
    expect(m.content).toEqual([
      { type: "image", url: "https://x.test/a.png", extras: { source_type: "url" } },
      { type: "audio", base64: "UklGRg==", mime_type: "audio/wav", extras: { source_type: "base64" } },
      { type: "file", id: "file-1", extras: { source_type: "id" } },
    ]);
  });

  it("sends provider-native blocks through that vendor's part reader, and keeps unknown blocks whole in unmapped_content", () => {
    const ai = valid(
      normalize({
        messages: [
          [
            ctor(JS, "AIMessage", {
              content: [
                { type: "thinking", thinking: "Paris first.", signature: "sig1" },
                { type: "reasoning", reasoning: "Then the weather." },
                { type: "text", text: "Checking." },
                { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
                { type: "hologram", data: 1 },
              ],
              tool_calls: [{ name: "get_weather", args: { city: "Paris" }, id: "toolu_1", type: "tool_call" }],
            }),
          ],
        ],
      }).inputs!.messages,
    )[0]!;
    expect(ai.content).toEqual([
      { type: "reasoning", text: "Paris first.", extras: { signature: "sig1" } },
      { type: "reasoning", text: "Then the weather." },
      { type: "text", text: "Checking." },
      { type: "tool_call", id: "toolu_1", name: "get_weather", args: { city: "Paris" } },
    ]);
    expect(ai.extras).toEqual({ unmapped_content: [{ index: 4, part: { type: "hologram", data: 1 } }] });
    const user = blocksOf([
      { type: "image_url", image_url: { url: "data:image/jpeg;base64,/9j/" } },
      { type: "input_audio", input_audio: { data: "UklG", format: "wav" } },
    ]);
    expect(user.content).toEqual([
      { type: "image", base64: "/9j/", mime_type: "image/jpeg" },
      { type: "audio", base64: "UklG", mime_type: "audio/wav" },
    ]);
  });

  it("puts reasoning a provider kept in additional_kwargs first: reasoning_content, or a Responses reasoning item's summary", () => {
    const ai = (additional_kwargs: Record<string, unknown>) =>
      valid(normalize({ messages: [[ctor(JS, "AIMessage", { content: "42", additional_kwargs })]] }).inputs!.messages)[0]!;
    expect(ai({ reasoning_content: "Six times seven." }).content).toEqual([
      { type: "reasoning", text: "Six times seven." },
      { type: "text", text: "42" },
    ]);
    const fromItem = ai({
      reasoning: {
        id: "rs_1",
        type: "reasoning",
        summary: [
          { type: "summary_text", text: "Multiply." },
          { type: "summary_text", text: "Done." },
        ],
      },
    });
    expect(fromItem.content).toEqual([
      { type: "reasoning", text: "Multiply.\n\nDone." },
      { type: "text", text: "42" },
    ]);
    expect(fromItem.extras).toMatchObject({ additional_kwargs: { reasoning: { id: "rs_1" } } });
  });

  it("reads an invalid tool call as a tool_call that keeps its raw arguments and error", () => {
    const [ai] = valid(
      normalize({
        messages: [
          [
            ctor(JS, "AIMessage", {
              content: "",
              invalid_tool_calls: [{ name: "f", args: "{bad", id: "c9", error: "bad JSON", type: "invalid_tool_call" }],
            }),
          ],
        ],
      }).inputs!.messages,
    );
    expect(ai!.content[0]).toMatchObject({
      type: "tool_call",
      id: "c9",
      name: "f",
      args: {},
      extras: { raw_args: "{bad", error: "bad JSON", invalid: true },
    });
  });
});

describe("LangChain.js writings", () => {
  it("folds a stream of AIMessageChunk records: text joined, tool_call_chunks merged by index, usage summed; the first token is reported once", () => {
    const chunk = (kwargs: Record<string, unknown>) =>
      ctor(JS, "AIMessageChunk", {
        content: "",
        tool_call_chunks: [],
        tool_calls: [],
        invalid_tool_calls: [],
        additional_kwargs: {},
        response_metadata: {},
        ...kwargs,
      });
    const chunks = [
      chunk({ id: "chatcmpl-s1", response_metadata: { model_provider: "openai" } }),
      chunk({ content: "Hello" }),
      chunk({ content: " there" }),
      chunk({ tool_call_chunks: [{ name: "f", args: '{"a":', id: "c1", index: 0, type: "tool_call_chunk" }] }),
      chunk({ tool_call_chunks: [{ args: "1}", index: 0, type: "tool_call_chunk" }] }),
      chunk({
        usage_metadata: { input_tokens: 12, output_tokens: 7, total_tokens: 19 },
        response_metadata: { model_name: "gpt-4o-mini-2024-07-18", finish_reason: "stop" },
      }),
    ];
    const acc = langchain.createStreamAccumulator();
    expect(chunks.map((c) => acc.push(c))).toEqual([false, true, false, false, false, false]);
    const res = acc.result();
    expect(valid(res.messages)[0]).toMatchObject({
      role: "assistant",
      content: [
        { type: "text", text: "Hello there" },
        { type: "tool_call", id: "c1", name: "f", args: { a: 1 } },
      ],
      usage_metadata: { input_tokens: 12, output_tokens: 7, total_tokens: 19 },
    });
    expect([res.trace_provider, res.trace_model_name, res.stop_reason]).toEqual(["openai", "gpt-4o-mini-2024-07-18", "stop"]);
    expect(normalize(chunks)).toMatchObject({ format: "langchain", outputs: { messages: res.messages } });
  });

  it("reads LangChain.js's llmOutput.tokenUsage when the message carries no usage_metadata", () => {
    const res = langchain.normalizeResponse({
      generations: [[{ text: "hi", message: ctor(JS, "AIMessage", { content: "hi" }), generationInfo: { finish_reason: "stop" } }]],
      llmOutput: { tokenUsage: { promptTokens: 3, completionTokens: 1, totalTokens: 4 } },
    });
    expect(res.messages[0]!.usage_metadata).toEqual({ input_tokens: 3, output_tokens: 1, total_tokens: 4 });
    expect(res.messages[0]!.extras).toEqual({
      generation_info: { finish_reason: "stop" },
      llmOutput: { tokenUsage: { promptTokens: 3, completionTokens: 1, totalTokens: 4 } },
    });
  });
});

describe("detection and errors", () => {
  it("leaves a flat list of {role, content} messages to the other formats", () => {
    expect(langchain.detect({ messages: [{ role: "user", content: "hi" }] })).toBeNull();
    expect(normalize({ messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] }).format).toBe("native");
  });

  it("names the field of a record that is not a message", () => {
    const doc = { lc: 1, type: "constructor", id: ["langchain", "schema", "document", "Document"], kwargs: { page_content: "x" } };
    let err: unknown;
    try {
      langchain.normalize({ messages: [[ctor(JS, "HumanMessage", { content: "hi" }), doc]] });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(NormalizeError);
    expect((err as NormalizeError).issues[0]).toMatchObject({ loc: ["messages", 0, 1, "id"], type: "unsupported_message" });
  });

  it("reads a lone AI message as a reply, and names the field of a bad one where it is", () => {
    const reply = ctor(JS, "AIMessage", {
      content: "Hi",
      response_metadata: { model_name: "claude-opus-4-6", model_provider: "anthropic" },
    });
    expect(normalize(reply)).toMatchObject({
      format: "langchain",
      outputs: { messages: [{ role: "assistant", content: [{ type: "text", text: "Hi" }] }] },
      metadata: { trace_provider: "anthropic", trace_model_name: "claude-opus-4-6" },
    });
    let err: unknown;
    try {
      normalize(ctor(JS, "AIMessage", { content: 5 }));
    } catch (e) {
      err = e;
    }
    expect((err as NormalizeError).issues[0]).toMatchObject({ loc: ["content"], type: "content_type" });
  });

  it("requires a ToolMessage's tool_call_id", () => {
    expect(() => langchain.normalize({ messages: [[dump("tool", { content: "x" })]] })).toThrow(NormalizeError);
  });
});
