import { describe, expect, it } from "vitest";
import type { Completion, CompletionCreateParamsNonStreaming } from "openai/resources/completions";
import {
  openaiCompletions,
  normalizeRequest,
  normalizeResponse,
  normalizeStream,
  createStreamAccumulator,
} from "../../adapters/openai-completions/index.js";
import { getAdapter } from "../../adapters/index.js";
import { normalize, detectFormat } from "../../src/normalize.js";
import { NormalizeError } from "../../src/errors.js";
import { expectValidNative } from "../helpers/native.js";

const MODEL = "gpt-3.5-turbo-instruct";
const req = (prompt: CompletionCreateParamsNonStreaming["prompt"], extra: Partial<CompletionCreateParamsNonStreaming> = {}) =>
  ({ model: MODEL, prompt, ...extra }) satisfies CompletionCreateParamsNonStreaming;
const completion = (choices: Partial<Completion["choices"][number]>[], extra: Partial<Completion> = {}): Completion =>
  ({
    id: "cmpl-1",
    object: "text_completion",
    created: 1763800000,
    model: MODEL,
    system_fingerprint: "fp_44709d6fcb",
    choices: choices.map((c, i) => ({ text: "", index: i, logprobs: null, finish_reason: "stop", ...c })),
    usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 },
    ...extra,
  }) as Completion;
/** The first issue of the NormalizeError fn throws; fails the test when it throws nothing or something else. */
function issueOf(fn: () => unknown) {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(NormalizeError);
    return (e as NormalizeError).issues[0]!;
  }
  throw new Error("expected a NormalizeError, nothing was thrown");
}
const chunk = (choices: Record<string, unknown>[], extra: Record<string, unknown> = {}) => ({
  id: "cmpl-s",
  object: "text_completion",
  created: 1763800001,
  model: MODEL,
  choices,
  ...extra,
});

describe("openai-completions request -> native", () => {
  const cases: [string, unknown, unknown][] = [
    [
      "a string prompt is one user message",
      req("Say this is a test"),
      [{ role: "user", content: [{ type: "text", text: "Say this is a test" }] }],
    ],
    [
      "a batch is one user message per prompt, each with its prompt_index",
      req(["one", "two"]),
      [
        { role: "user", content: [{ type: "text", text: "one" }], extras: { prompt_index: 0 } },
        { role: "user", content: [{ type: "text", text: "two" }], extras: { prompt_index: 1 } },
      ],
    ],
    [
      "token ids are kept in extras (no text to show)",
      req([1212, 318, 257]),
      [{ role: "user", content: [], extras: { prompt_token_ids: [1212, 318, 257] } }],
    ],
    [
      "a batch of token-id prompts",
      req([[1, 2], [3]]),
      [
        { role: "user", content: [], extras: { prompt_index: 0, prompt_token_ids: [1, 2] } },
        { role: "user", content: [], extras: { prompt_index: 1, prompt_token_ids: [3] } },
      ],
    ],
    [
      "suffix is a marked text block after the prompt",
      req("def f(", { suffix: "\n    return x" }),
      [
        {
          role: "user",
          content: [
            { type: "text", text: "def f(" },
            { type: "text", text: "\n    return x", extras: { suffix: true } },
          ],
        },
      ],
    ],
    [
      "suffix goes with every prompt of a batch",
      req(["a", "b"], { suffix: "Z" }),
      [
        {
          role: "user",
          content: [
            { type: "text", text: "a" },
            { type: "text", text: "Z", extras: { suffix: true } },
          ],
          extras: { prompt_index: 0 },
        },
        {
          role: "user",
          content: [
            { type: "text", text: "b" },
            { type: "text", text: "Z", extras: { suffix: true } },
          ],
          extras: { prompt_index: 1 },
        },
      ],
    ],
    ["no prompt: no input messages", { model: MODEL, max_tokens: 5 }, []],
    ["an empty batch: no input messages", req([]), []],
  ];
  it.each(cases)("%s", (_name, body, expected) => {
    const out = normalizeRequest(body);
    expect(out.messages).toEqual(expected);
    expectValidNative(out.messages);
    expect(out.trace_provider).toBe("openai");
  });

  it("keeps every other parameter as an invocation param; prompt, suffix and model are not params", () => {
    const out = normalizeRequest(
      req("x", {
        suffix: "y",
        max_tokens: 16,
        temperature: 0,
        echo: true,
        logprobs: 2,
        best_of: 3,
        n: 2,
        stop: ["\n"],
        stream: false,
        user: "u1",
        logit_bias: { "50256": -100 },
        seed: 7,
      }),
    );
    expect(out.invocation_params).toEqual({
      max_tokens: 16,
      temperature: 0,
      echo: true,
      logprobs: 2,
      best_of: 3,
      n: 2,
      stop: ["\n"],
      stream: false,
      user: "u1",
      logit_bias: { "50256": -100 },
      seed: 7,
    });
    expect(out.trace_model_name).toBe(MODEL);
  });

  const bad: [string, unknown, (string | number)[], string][] = [
    ["prompt of the wrong type", { model: MODEL, prompt: 42 }, ["prompt"], "prompt_type"],
    ["a non-string in a batch of strings", { model: MODEL, prompt: ["a", 3] }, ["prompt", 1], "string_type"],
    ["a negative token id", { model: MODEL, prompt: [1, -2] }, ["prompt", 1], "int_type"],
    ["a fractional token id in a nested list", { model: MODEL, prompt: [[1], [2.5]] }, ["prompt", 1, 0], "int_type"],
    ["a non-list in a batch of token lists", { model: MODEL, prompt: [[1], "x"] }, ["prompt", 1], "list_type"],
    ["a suffix that is not text", { model: MODEL, prompt: "a", suffix: 3 }, ["suffix"], "string_type"],
    ["a body that is not an object", "prompt", [], "object_type"],
  ];
  it.each(bad)("rejects %s with a NormalizeError naming the field", (_name, body, loc, type) => {
    expect(issueOf(() => normalizeRequest(body))).toMatchObject({ loc, type });
  });
});

describe("openai-completions response -> native", () => {
  it("one assistant message with the text, usage, finish reason and the response's ids in extras", () => {
    const out = normalizeResponse(completion([{ text: "\n\nThis is indeed a test", finish_reason: "length" }]));
    expect(out.messages).toEqual([
      {
        role: "assistant",
        content: [{ type: "text", text: "\n\nThis is indeed a test" }],
        extras: {
          id: "cmpl-1",
          object: "text_completion",
          created: 1763800000,
          system_fingerprint: "fp_44709d6fcb",
          finish_reason: "length",
        },
        usage_metadata: { input_tokens: 5, output_tokens: 7, total_tokens: 12 },
      },
    ]);
    expect(out).toMatchObject({
      trace_provider: "openai",
      trace_model_name: MODEL,
      stop_reason: "length",
      usage_metadata: { input_tokens: 5 },
    });
    expectValidNative(out.messages);
  });

  it("one message per choice, with choice_index; logprobs kept as sent", () => {
    const logprobs = { tokens: [" yes"], token_logprobs: [-0.1], top_logprobs: [{ " yes": -0.1, " no": -2.3 }], text_offset: [0] };
    const out = normalizeResponse(completion([{ text: " yes", logprobs }, { text: " no" }]));
    expect(out.messages.map((m) => m.content)).toEqual([[{ type: "text", text: " yes" }], [{ type: "text", text: " no" }]]);
    expect(out.messages[0]!.extras).toMatchObject({ choice_index: 0, logprobs });
    expect(out.messages[1]!.extras).toEqual({ finish_reason: "stop", choice_index: 1 });
    expect(out.messages[1]!.usage_metadata).toBeUndefined();
  });

  it("a batch's choices name their prompt (n per prompt)", () => {
    const res = completion([{ text: "a1" }, { text: "a2" }, { text: "b1" }, { text: "b2" }]);
    const out = normalizeResponse(res, { request: req(["a", "b"], { n: 2 }) });
    expect(out.messages.map((m) => m.extras?.prompt_index)).toEqual([0, 0, 1, 1]);
    expect(out.messages.map((m) => m.extras?.choice_index)).toEqual([0, 1, 2, 3]);
  });

  it("echo: the prompt and the completion are two text blocks that join to the text as sent", () => {
    const out = normalizeResponse(completion([{ text: "Once upon a time, there was" }]), {
      request: req("Once upon a time", { echo: true }),
    });
    expect(out.messages[0]!.content).toEqual([
      { type: "text", text: "Once upon a time", extras: { echo: true } },
      { type: "text", text: ", there was" },
    ]);
    // Without the request (or without echo) the text stays whole.
    expect(normalizeResponse(completion([{ text: "Once upon a time, there was" }])).messages[0]!.content).toEqual([
      { type: "text", text: "Once upon a time, there was" },
    ]);
    // Echo of a token-id prompt cannot be split by text: whole.
    expect(normalizeResponse(completion([{ text: "Hi there" }]), { request: req([1, 2], { echo: true }) }).messages[0]!.content).toEqual([
      { type: "text", text: "Hi there" },
    ]);
  });

  it("usage details map as for chat (cached -> cache_read)", () => {
    const out = normalizeResponse(
      completion([{ text: "x" }], {
        usage: {
          prompt_tokens: 10,
          completion_tokens: 2,
          total_tokens: 12,
          prompt_tokens_details: { cached_tokens: 4 },
        } as Completion["usage"],
      }),
    );
    expect(out.usage_metadata).toEqual({ input_tokens: 10, output_tokens: 2, total_tokens: 12, input_token_details: { cache_read: 4 } });
  });

  it("unknown choice fields are kept in the message's extras", () => {
    const out = normalizeResponse({
      object: "text_completion",
      model: MODEL,
      choices: [{ text: "x", index: 0, finish_reason: "stop", stop_reason: 50256 }],
    });
    expect(out.messages[0]!.extras).toEqual({ object: "text_completion", finish_reason: "stop", stop_reason: 50256 });
  });

  it("no choices but usage: one empty reply keeps it", () => {
    const out = normalizeResponse(completion([]));
    expect(out.messages).toHaveLength(1);
    expect(out.messages[0]!.usage_metadata).toMatchObject({ total_tokens: 12 });
    expectValidNative(out.messages);
  });

  const bad: [string, unknown, (string | number)[]][] = [
    ["choices not a list", { object: "text_completion", choices: {} }, ["choices"]],
    ["a choice that is not an object", { object: "text_completion", choices: [1] }, ["choices", 0]],
    ["text that is not a string", { object: "text_completion", choices: [{ text: 5 }] }, ["choices", 0, "text"]],
    ["a negative token count", { object: "text_completion", choices: [], usage: { prompt_tokens: -1 } }, ["usage", "prompt_tokens"]],
  ];
  it.each(bad)("rejects %s, naming the field", (_n, body, loc) => {
    expect(issueOf(() => normalizeResponse(body)).loc).toEqual(loc);
  });
});

describe("openai-completions stream -> native", () => {
  const pieces = ["Hello", " there", "!"];
  const chunks = [
    ...pieces.map((t, i) => chunk([{ text: t, index: 0, logprobs: null, finish_reason: i === 2 ? "stop" : null }])),
    chunk([], { usage: { prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 } }),
  ];

  it("folds text pieces into the same result as a response, usage from the final chunk", () => {
    const out = normalizeStream(chunks);
    expect(out.messages).toEqual([
      {
        role: "assistant",
        content: [{ type: "text", text: "Hello there!" }],
        extras: { id: "cmpl-s", object: "text_completion", created: 1763800001, finish_reason: "stop" },
        usage_metadata: { input_tokens: 3, output_tokens: 3, total_tokens: 6 },
      },
    ]);
    expect(out).toMatchObject({ trace_model_name: MODEL, stop_reason: "stop" });
  });

  it("push() says which chunk carried the first text", () => {
    const acc = createStreamAccumulator();
    expect([chunk([{ text: "", index: 0 }]), ...chunks].map((c) => acc.push(c))).toEqual([false, true, false, false, false]);
    expect(acc.result().messages[0]!.content).toEqual([{ type: "text", text: "Hello there!" }]);
  });

  it("interleaved choices of n > 1 and a batch fold by index; logprobs arrays concatenate", () => {
    const s = [
      chunk([
        { text: "a", index: 0, logprobs: { tokens: ["a"], token_logprobs: [-1], top_logprobs: null, text_offset: [0] } },
        { text: "b", index: 1 },
      ]),
      chunk([
        {
          text: "A",
          index: 0,
          logprobs: { tokens: ["A"], token_logprobs: [-2], top_logprobs: null, text_offset: [1] },
          finish_reason: "stop",
        },
        { text: "B", index: 1, finish_reason: "length" },
      ]),
    ];
    const out = normalizeStream(s, { request: req(["p", "q"]) });
    expect(out.messages.map((m) => m.content)).toEqual([[{ type: "text", text: "aA" }], [{ type: "text", text: "bB" }]]);
    expect(out.messages[0]!.extras).toMatchObject({
      choice_index: 0,
      prompt_index: 0,
      finish_reason: "stop",
      logprobs: { tokens: ["a", "A"], token_logprobs: [-1, -2], text_offset: [0, 1] },
    });
    expect(out.messages[1]!.extras).toMatchObject({ choice_index: 1, prompt_index: 1, finish_reason: "length" });
    // The chunks themselves are not changed by folding.
    expect((s[0]!.choices[0] as { logprobs: { tokens: string[] } }).logprobs.tokens).toEqual(["a"]);
  });

  it("an echoed prompt is split off the streamed text as for a response", () => {
    const out = normalizeStream([chunk([{ text: "Say", index: 0 }]), chunk([{ text: " hi. Hi!", index: 0 }])], {
      request: req("Say hi.", { echo: true }),
    });
    expect(out.messages[0]!.content).toEqual([
      { type: "text", text: "Say hi.", extras: { echo: true } },
      { type: "text", text: " Hi!" },
    ]);
  });

  it("a bad chunk is named by its position", () => {
    expect(issueOf(() => normalizeStream([chunk([{ text: "a", index: 0 }]), 7])).loc).toEqual([1]);
    expect(issueOf(() => normalizeStream([chunk([{ text: "a", index: 0 }]), chunk([{ text: 3, index: 0 }])])).loc).toEqual([
      1,
      "choices",
      0,
      "text",
    ]);
  });
});

describe("openai-completions detection", () => {
  const res = completion([{ text: "ok" }]);
  const stream = [chunk([{ text: "a", index: 0 }]), chunk([], { usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } })];
  const claimed: [string, unknown][] = [
    ["a request with an OpenAI model", req("hi")],
    ["a request with an unknown model but an OpenAI-only parameter", { model: "my-finetune", prompt: "hi", echo: true }],
    ["a response", res],
    ["a response without the object marker", { model: "x", choices: [{ text: "ok", index: 0, finish_reason: "stop" }] }],
    ["a stream", stream],
    ["a pair", { request: req("hi"), response: res }],
    ["a pair whose request has no vendor evidence", { request: { model: "local", prompt: "hi" }, response: res }],
    ["a pair with a streamed reply", { request: { model: MODEL, prompt: "hi", stream: true }, response: stream }],
  ];
  it.each(claimed)("auto-detects %s", (_n, payload) => {
    expect(detectFormat(payload)).toBe("openai-completions");
    const out = normalize(payload);
    expect(out.format).toBe("openai-completions");
    if (out.inputs) expectValidNative(out.inputs.messages);
    if (out.outputs) expectValidNative(out.outputs.messages);
  });

  const unclaimed: [string, unknown][] = [
    ["Ollama's generate body", { model: "llama3", prompt: "hi", stream: false }],
    ["Anthropic's legacy text completion", { model: "claude-2.1", prompt: "\n\nHuman: hi\n\nAssistant:", max_tokens_to_sample: 5 }],
    ["a Bedrock Llama body", { prompt: "hi", max_gen_len: 5, temperature: 0.5 }],
    ["a chat request", { model: "gpt-4o", messages: [{ role: "user", content: "hi" }] }],
    ["a Responses request", { model: "gpt-4.1", input: "hi" }],
    [
      "a chat completion",
      {
        object: "chat.completion",
        model: "gpt-4o",
        choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }],
      },
    ],
    ["a chat stream", [{ object: "chat.completion.chunk", model: "gpt-4o", choices: [{ index: 0, delta: { content: "hi" } }] }]],
  ];
  it.each(unclaimed)("does not claim %s", (_n, payload) => {
    expect(openaiCompletions.detect(payload)).toBeNull();
  });

  it("is registered under its name", () => {
    expect(getAdapter("openai-completions")).toBe(openaiCompletions);
    expect(normalize(req("hi"), { format: "openai-completions" }).inputs?.messages).toHaveLength(1);
  });

  it("normalize() of a pair uses the request for echo and batches", () => {
    const out = normalize({ request: req(["a", "b"], { echo: true }), response: completion([{ text: "a!" }, { text: "b?" }]) });
    expect(out.outputs?.messages.map((m) => m.content)).toEqual([
      [
        { type: "text", text: "a", extras: { echo: true } },
        { type: "text", text: "!" },
      ],
      [
        { type: "text", text: "b", extras: { echo: true } },
        { type: "text", text: "?" },
      ],
    ]);
    expect(out.outputs?.messages.map((m) => m.extras?.prompt_index)).toEqual([0, 1]);
  });

  it("a record that is neither is a NormalizeError naming the format", () => {
    expect(() => openaiCompletions.normalize({ foo: 1 })).toThrow(/OpenAI completions/);
  });
});
