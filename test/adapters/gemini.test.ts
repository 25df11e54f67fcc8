import { describe, expect, it } from "vitest";
import { Language, Outcome, ToolType, type Content, type GenerateContentParameters, type Part } from "@google/genai";
import { gemini, normalizeRequest, normalizeResponse, normalizeStream, createStreamAccumulator } from "../../adapters/gemini/index.js";
import { ADAPTERS } from "../../adapters/index.js";
import { normalize, detectFormat } from "../../src/normalize.js";
import { NormalizeError } from "../../src/errors.js";
import { expectValidNative } from "../helpers/native.js";
import { fixture } from "../helpers/replay-server.js";

/** A REST request body (the model lives in the URL; loggers often add it). */
const rest = (contents: Content[], extra: Record<string, unknown> = {}) => ({ model: "models/gemini-2.5-flash", contents, ...extra });
/** The SDK's parameters, type-checked against @google/genai. */
const sdk = (p: GenerateContentParameters) => p;
const user = (...parts: Part[]): Content => ({ role: "user", parts });
const model = (...parts: Part[]): Content => ({ role: "model", parts });
const res = (parts: Part[], extra: Record<string, unknown> = {}) => ({
  candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }],
  modelVersion: "gemini-2.5-flash",
  ...extra,
});

function issueOf(fn: () => unknown): { loc: (string | number)[]; type: string } {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(NormalizeError);
    return (e as NormalizeError).issues[0]!;
  }
  throw new Error("expected a NormalizeError");
}

describe("gemini request -> native", () => {
  const cases: [string, unknown, unknown][] = [
    [
      "SDK: contents as a string is one user message",
      sdk({ model: "gemini-2.5-flash", contents: "hi" }),
      [{ role: "user", content: [{ type: "text", text: "hi" }] }],
    ],
    [
      "SDK: one part is one user message",
      sdk({ model: "gemini-2.5-flash", contents: { text: "hi" } }),
      [{ role: "user", content: [{ type: "text", text: "hi" }] }],
    ],
    [
      "SDK: an array of parts and strings is one user turn",
      sdk({ model: "gemini-2.5-flash", contents: ["look", { inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" } }] }),
      [
        {
          role: "user",
          content: [
            { type: "text", text: "look" },
            { type: "image", base64: "iVBORw0KGgo=", mime_type: "image/png" },
          ],
        },
      ],
    ],
    [
      "SDK: a single Content",
      sdk({ model: "gemini-2.5-flash", contents: user({ text: "hi" }) }),
      [{ role: "user", content: [{ type: "text", text: "hi" }] }],
    ],
    [
      "SDK: config.systemInstruction string -> system message first",
      sdk({ model: "gemini-2.5-flash", contents: "hi", config: { systemInstruction: "Be brief." } }),
      [
        { role: "system", content: [{ type: "text", text: "Be brief." }] },
        { role: "user", content: [{ type: "text", text: "hi" }] },
      ],
    ],
    [
      "REST: systemInstruction Content -> system message first",
      rest([user({ text: "hi" })], { systemInstruction: { parts: [{ text: "Be brief." }, { text: "Use metric." }] } }),
      [
        {
          role: "system",
          content: [
            { type: "text", text: "Be brief." },
            { type: "text", text: "Use metric." },
          ],
        },
        { role: "user", content: [{ type: "text", text: "hi" }] },
      ],
    ],
    [
      "REST: model -> assistant",
      rest([user({ text: "hi" }), model({ text: "hello" })]),
      [
        { role: "user", content: [{ type: "text", text: "hi" }] },
        { role: "assistant", content: [{ type: "text", text: "hello" }] },
      ],
    ],
    [
      "a Content without a role is the user's (the API's default)",
      rest([{ parts: [{ text: "hi" }] }]),
      [{ role: "user", content: [{ type: "text", text: "hi" }] }],
    ],
    [
      "thought text -> reasoning, thoughtSignature -> extras.signature",
      rest([model({ text: "let me think", thought: true, thoughtSignature: "c2ln" }, { text: "answer" })]),
      [
        {
          role: "assistant",
          content: [
            { type: "reasoning", text: "let me think", extras: { signature: "c2ln" } },
            { type: "text", text: "answer" },
          ],
        },
      ],
    ],
    [
      "inlineData image",
      rest([user({ inlineData: { mimeType: "image/jpeg", data: "/9j/4AAQ" } })]),
      [{ role: "user", content: [{ type: "image", base64: "/9j/4AAQ", mime_type: "image/jpeg" }] }],
    ],
    [
      "inlineData audio",
      rest([user({ inlineData: { mimeType: "audio/wav", data: "UklGRg==" } })]),
      [{ role: "user", content: [{ type: "audio", base64: "UklGRg==", mime_type: "audio/wav" }] }],
    ],
    [
      "inlineData video keeps videoMetadata",
      rest([user({ inlineData: { mimeType: "video/mp4", data: "AAAAIGZ0eXA=" }, videoMetadata: { startOffset: "1s", endOffset: "5s" } })]),
      [
        {
          role: "user",
          content: [
            {
              type: "video",
              base64: "AAAAIGZ0eXA=",
              mime_type: "video/mp4",
              extras: { videoMetadata: { startOffset: "1s", endOffset: "5s" } },
            },
          ],
        },
      ],
    ],
    [
      "inlineData PDF -> file",
      rest([user({ inlineData: { mimeType: "application/pdf", data: "JVBERi0=", displayName: "r.pdf" } })]),
      [{ role: "user", content: [{ type: "file", base64: "JVBERi0=", mime_type: "application/pdf", extras: { displayName: "r.pdf" } }] }],
    ],
    [
      "inlineData without a MIME type is sniffed",
      rest([user({ inlineData: { data: "iVBORw0KGgo=" } })]),
      [{ role: "user", content: [{ type: "image", base64: "iVBORw0KGgo=", mime_type: "image/png" }] }],
    ],
    [
      "fileData -> url with its MIME type",
      rest([user({ fileData: { fileUri: "https://generativelanguage.googleapis.com/v1beta/files/abc", mimeType: "application/pdf" } })]),
      [
        {
          role: "user",
          content: [{ type: "file", url: "https://generativelanguage.googleapis.com/v1beta/files/abc", mime_type: "application/pdf" }],
        },
      ],
    ],
    [
      "fileData video (YouTube)",
      rest([user({ fileData: { fileUri: "https://www.youtube.com/watch?v=x", mimeType: "video/*" } })]),
      [{ role: "user", content: [{ type: "video", url: "https://www.youtube.com/watch?v=x", mime_type: "video/*" }] }],
    ],
    [
      "functionCall with an id and its functionResponse by id",
      rest([
        user({ text: "weather?" }),
        model({ functionCall: { id: "fc_1", name: "get_weather", args: { city: "Paris" } } }),
        user({ functionResponse: { id: "fc_1", name: "get_weather", response: { output: "18C" } } }),
      ]),
      [
        { role: "user", content: [{ type: "text", text: "weather?" }] },
        { role: "assistant", content: [{ type: "tool_call", id: "fc_1", name: "get_weather", args: { city: "Paris" } }] },
        { role: "tool", tool_call_id: "fc_1", content: [{ type: "text", text: '{"output":"18C"}' }], extras: { name: "get_weather" } },
      ],
    ],
    [
      "calls without ids get deterministic ids; responses link by name, in order",
      rest([
        model(
          { functionCall: { name: "get_weather", args: { city: "Paris" } } },
          { functionCall: { name: "get_time", args: {} } },
          { functionCall: { name: "get_weather", args: { city: "Oslo" } } },
        ),
        user(
          { functionResponse: { name: "get_time", response: { output: "noon" } } },
          { functionResponse: { name: "get_weather", response: { output: "18C" } } },
          { functionResponse: { name: "get_weather", response: { output: "2C" } } },
        ),
      ]),
      [
        {
          role: "assistant",
          content: [
            { type: "tool_call", id: "gemini_call_0_0", name: "get_weather", args: { city: "Paris" }, extras: { id_synthesized: true } },
            { type: "tool_call", id: "gemini_call_0_1", name: "get_time", args: {}, extras: { id_synthesized: true } },
            { type: "tool_call", id: "gemini_call_0_2", name: "get_weather", args: { city: "Oslo" }, extras: { id_synthesized: true } },
          ],
        },
        {
          role: "tool",
          tool_call_id: "gemini_call_0_1",
          content: [{ type: "text", text: '{"output":"noon"}' }],
          extras: { name: "get_time" },
        },
        {
          role: "tool",
          tool_call_id: "gemini_call_0_0",
          content: [{ type: "text", text: '{"output":"18C"}' }],
          extras: { name: "get_weather" },
        },
        {
          role: "tool",
          tool_call_id: "gemini_call_0_2",
          content: [{ type: "text", text: '{"output":"2C"}' }],
          extras: { name: "get_weather" },
        },
      ],
    ],
    [
      "a functionResponse reporting an error, amid other parts, keeps the order",
      rest([
        model({ functionCall: { name: "f", args: {} } }),
        user({ text: "before" }, { functionResponse: { name: "f", response: { error: "boom" } } }, { text: "after" }),
      ]),
      [
        {
          role: "assistant",
          content: [{ type: "tool_call", id: "gemini_call_0_0", name: "f", args: {}, extras: { id_synthesized: true } }],
        },
        { role: "user", content: [{ type: "text", text: "before" }] },
        {
          role: "tool",
          tool_call_id: "gemini_call_0_0",
          content: [{ type: "text", text: '{"error":"boom"}' }],
          extras: { name: "f", is_error: true },
        },
        { role: "user", content: [{ type: "text", text: "after" }] },
      ],
    ],
    [
      "a functionResponse whose call was trimmed is an orphan",
      rest([user({ functionResponse: { name: "f", response: { output: 1 } } })]),
      [
        {
          role: "tool",
          tool_call_id: "gemini_orphan_0_0",
          content: [{ type: "text", text: '{"output":1}' }],
          extras: { name: "f", orphan: true },
        },
      ],
    ],
    [
      "a functionResponse's media parts follow its JSON",
      rest([
        model({ functionCall: { id: "c", name: "shot", args: {} } }),
        user({
          functionResponse: {
            id: "c",
            name: "shot",
            response: {},
            parts: [{ inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" } }],
          },
        }),
      ]),
      [
        { role: "assistant", content: [{ type: "tool_call", id: "c", name: "shot", args: {} }] },
        {
          role: "tool",
          tool_call_id: "c",
          content: [
            { type: "text", text: "{}" },
            { type: "image", base64: "iVBORw0KGgo=", mime_type: "image/png" },
          ],
          extras: { name: "shot" },
        },
      ],
    ],
    [
      "executableCode -> server_tool_call code_execution; codeExecutionResult -> server_tool_result",
      rest([
        model(
          { executableCode: { language: Language.PYTHON, code: "print(2+2)" } },
          { codeExecutionResult: { outcome: Outcome.OUTCOME_OK, output: "4\n" } },
          { executableCode: { language: Language.PYTHON, code: "1/0" } },
          { codeExecutionResult: { outcome: Outcome.OUTCOME_FAILED, output: "ZeroDivisionError" } },
        ),
      ]),
      [
        {
          role: "assistant",
          content: [
            {
              type: "server_tool_call",
              id: "gemini_code_0_0",
              name: "code_execution",
              args: { language: "PYTHON", code: "print(2+2)" },
              extras: { id_synthesized: true },
            },
            {
              type: "server_tool_result",
              tool_call_id: "gemini_code_0_0",
              status: "success",
              output: "4\n",
              extras: { outcome: "OUTCOME_OK" },
            },
            {
              type: "server_tool_call",
              id: "gemini_code_0_2",
              name: "code_execution",
              args: { language: "PYTHON", code: "1/0" },
              extras: { id_synthesized: true },
            },
            {
              type: "server_tool_result",
              tool_call_id: "gemini_code_0_2",
              status: "error",
              output: "ZeroDivisionError",
              extras: { outcome: "OUTCOME_FAILED" },
            },
          ],
        },
      ],
    ],
    [
      "server toolCall / toolResponse -> server_tool_call / server_tool_result",
      rest([
        model(
          { toolCall: { id: "t1", toolType: ToolType.GOOGLE_SEARCH_WEB, args: { query: "paris weather" } } },
          { toolResponse: { id: "t1", toolType: ToolType.GOOGLE_SEARCH_WEB, response: { results: 3 } } },
        ),
      ]),
      [
        {
          role: "assistant",
          content: [
            {
              type: "server_tool_call",
              id: "t1",
              name: "google_search_web",
              args: { query: "paris weather" },
              extras: { tool_type: "GOOGLE_SEARCH_WEB" },
            },
            {
              type: "server_tool_result",
              tool_call_id: "t1",
              status: "success",
              output: { results: 3 },
              extras: { tool_type: "GOOGLE_SEARCH_WEB" },
            },
          ],
        },
      ],
    ],
    [
      "an unknown part is kept whole in extras.unmapped_content, in order",
      rest([user({ text: "a" }, { hologram: { x: 1 } } as Part, { text: "b" })]),
      [
        {
          role: "user",
          content: [
            { type: "text", text: "a" },
            { type: "text", text: "b" },
          ],
          extras: { unmapped_content: [{ index: 1, part: { hologram: { x: 1 } } }] },
        },
      ],
    ],
    ["a turn with no parts is still a turn", rest([{ role: "model", parts: [] }]), [{ role: "assistant", content: [] }]],
    [
      "the old `function` role carries responses",
      rest([
        model({ functionCall: { name: "f", args: {} } }),
        { role: "function", parts: [{ functionResponse: { name: "f", response: { output: 1 } } }] },
      ]),
      [
        {
          role: "assistant",
          content: [{ type: "tool_call", id: "gemini_call_0_0", name: "f", args: {}, extras: { id_synthesized: true } }],
        },
        {
          role: "tool",
          tool_call_id: "gemini_call_0_0",
          content: [{ type: "text", text: '{"output":1}' }],
          extras: { vendor_role: "function", name: "f" },
        },
      ],
    ],
  ];
  for (const [name, body, expected] of cases) {
    it(name, () => {
      const r = normalizeRequest(body);
      expect(r.messages).toEqual(expected);
      expectValidNative(r.messages);
      expect(r.trace_provider).toBe("google");
    });
  }

  it("REST: everything but contents, systemInstruction and model is invocation_params", () => {
    const body = rest([user({ text: "hi" })], {
      systemInstruction: { parts: [{ text: "x" }] },
      generationConfig: { temperature: 0.2, maxOutputTokens: 100, thinkingConfig: { thinkingBudget: 0 } },
      tools: [{ functionDeclarations: [{ name: "f" }] }, { codeExecution: {} }],
      toolConfig: { functionCallingConfig: { mode: "AUTO" } },
      safetySettings: [{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_NONE" }],
      cachedContent: "cachedContents/abc",
    });
    const r = normalizeRequest(body);
    expect(r.invocation_params).toEqual({
      generationConfig: { temperature: 0.2, maxOutputTokens: 100, thinkingConfig: { thinkingBudget: 0 } },
      tools: [{ functionDeclarations: [{ name: "f" }] }, { codeExecution: {} }],
      toolConfig: { functionCallingConfig: { mode: "AUTO" } },
      safetySettings: [{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_NONE" }],
      cachedContent: "cachedContents/abc",
    });
    expect(r.trace_model_name).toBe("gemini-2.5-flash");
  });

  it("SDK: config's parameters are invocation_params; the client-only httpOptions and abortSignal are not", () => {
    const r = normalizeRequest(
      sdk({
        model: "gemini-2.5-pro",
        contents: "hi",
        config: {
          systemInstruction: "x",
          temperature: 0.5,
          tools: [{ googleSearch: {} }],
          httpOptions: { headers: { "x-goog-api-key": "SECRET" } },
          abortSignal: new AbortController().signal,
        },
      }),
    );
    expect(r.invocation_params).toEqual({ temperature: 0.5, tools: [{ googleSearch: {} }] });
    expect(r.trace_model_name).toBe("gemini-2.5-pro");
  });

  it("names the bad field", () => {
    expect(issueOf(() => normalizeRequest(rest([user({ text: 3 } as unknown as Part)])))).toMatchObject({
      loc: ["contents", 0, "parts", 0, "text"],
      type: "string_type",
    });
    expect(issueOf(() => normalizeRequest({ contents: [{ role: "narrator", parts: [] }] }))).toMatchObject({
      loc: ["contents", 0, "role"],
      type: "unsupported_role",
    });
    expect(issueOf(() => normalizeRequest({ contents: [{ role: "user", parts: "x" }] }))).toMatchObject({
      loc: ["contents", 0, "parts"],
      type: "list_type",
    });
    expect(issueOf(() => normalizeRequest({ model: "gemini-2.5-flash" }))).toMatchObject({ loc: ["contents"], type: "missing" });
    expect(issueOf(() => normalizeRequest({ contents: [user({ inlineData: { mimeType: "image/png" } })] }))).toMatchObject({
      loc: ["contents", 0, "parts", 0, "inlineData", "data"],
    });
  });
});

describe("gemini response -> native", () => {
  it("maps the recorded response: reasoning, text with its signature, candidate and response fields, usage", () => {
    const r = normalizeResponse(fixture("gemini-response.json"));
    expect(r.trace_provider).toBe("google");
    expect(r.trace_model_name).toBe("gemini-2.5-flash");
    expect(r.stop_reason).toBe("STOP");
    expect(r.messages).toHaveLength(1);
    const m = r.messages[0]!;
    expect(m.content).toEqual([
      { type: "reasoning", text: "The user wants a short answer about the weather." },
      { type: "text", text: "Paris is 18°C and rainy.", extras: { signature: "CiQBVKhc7vZ3mGq2wJ0sYk1" } },
    ]);
    expect(m.extras).toEqual({
      responseId: "mSxBafa3LtWhz7IP0ebH0QQ",
      finishReason: "STOP",
      index: 0,
      safetyRatings: fixture("gemini-response.json").candidates[0].safetyRatings,
    });
    expect(m.usage_metadata).toEqual({
      input_tokens: 24,
      output_tokens: 21,
      total_tokens: 45,
      input_token_details: { cache_read: 16 },
      output_token_details: { reasoning: 12 },
      extras: { promptTokensDetails: [{ modality: "TEXT", tokenCount: 24 }], cacheTokensDetails: [{ modality: "TEXT", tokenCount: 16 }] },
    });
    expectValidNative(r.messages);
  });

  it("one assistant message per candidate; usage on the first", () => {
    const r = normalizeResponse({
      candidates: [
        { content: model({ text: "a" }), index: 0, finishReason: "STOP" },
        { content: model({ text: "b" }), index: 1, finishReason: "MAX_TOKENS" },
      ],
      usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2, totalTokenCount: 5 },
    });
    expect(r.messages.map((m) => m.content)).toEqual([[{ type: "text", text: "a" }], [{ type: "text", text: "b" }]]);
    expect(r.messages[1]!.extras).toEqual({ index: 1, finishReason: "MAX_TOKENS" });
    expect(r.messages[0]!.usage_metadata).toEqual({ input_tokens: 3, output_tokens: 2, total_tokens: 5 });
    expect(r.messages[1]!.usage_metadata).toBeUndefined();
  });

  it("a function call in a reply gets an id that differs from the request side's", () => {
    const r = normalizeResponse(fixture("gemini-function-call.json"));
    expect(r.messages[0]!.content).toEqual([
      {
        type: "tool_call",
        id: "gemini_call_c0_0",
        name: "get_weather",
        args: { city: "Paris", unit: "celsius" },
        extras: { signature: "CiIBVKhc7jq2k1yD8lXr0aQ", id_synthesized: true },
      },
    ]);
  });

  it("citations and grounding stay on the candidate's message", () => {
    const grounding = {
      webSearchQueries: ["paris weather"],
      groundingChunks: [{ web: { uri: "https://x.test", title: "x" } }],
      groundingSupports: [],
    };
    const citations = { citations: [{ startIndex: 0, endIndex: 5, uri: "https://y.test" }] };
    const r = normalizeResponse(
      res([{ text: "Sunny" }], {
        candidates: [{ content: model({ text: "Sunny" }), citationMetadata: citations, groundingMetadata: grounding }],
      }),
    );
    expect(r.messages[0]!.extras).toEqual({ citationMetadata: citations, groundingMetadata: grounding });
  });

  it("a blocked prompt is one empty assistant message with promptFeedback; the block reason is the stop reason", () => {
    const r = normalizeResponse({
      promptFeedback: { blockReason: "SAFETY", safetyRatings: [] },
      usageMetadata: { promptTokenCount: 7, totalTokenCount: 7 },
      modelVersion: "gemini-2.5-flash",
    });
    expect(r.messages).toEqual([
      {
        role: "assistant",
        content: [],
        extras: { promptFeedback: { blockReason: "SAFETY", safetyRatings: [] } },
        usage_metadata: { input_tokens: 7, output_tokens: 0, total_tokens: 7 },
      },
    ]);
    expect(r.stop_reason).toBe("SAFETY");
  });

  it("usage: tool-use prompt tokens are input, thoughts are output", () => {
    const r = normalizeResponse(
      res([{ text: "x" }], {
        usageMetadata: {
          promptTokenCount: 100,
          toolUsePromptTokenCount: 40,
          cachedContentTokenCount: 60,
          candidatesTokenCount: 10,
          thoughtsTokenCount: 30,
          totalTokenCount: 180,
          trafficType: "ON_DEMAND",
        },
      }),
    );
    expect(r.usage_metadata).toEqual({
      input_tokens: 140,
      output_tokens: 40,
      total_tokens: 180,
      input_token_details: { cache_read: 60, tool_use: 40 },
      output_token_details: { reasoning: 30 },
      extras: { trafficType: "ON_DEMAND" },
    });
  });

  it("a models/ prefix is not part of the model name", () => {
    expect(normalizeResponse(res([{ text: "x" }], { modelVersion: "models/gemini-2.0-flash-001" })).trace_model_name).toBe(
      "gemini-2.0-flash-001",
    );
  });

  it("names a bad usage count", () => {
    expect(issueOf(() => normalizeResponse(res([], { usageMetadata: { promptTokenCount: -1 } })))).toMatchObject({
      loc: ["usageMetadata", "promptTokenCount"],
      type: "int_type",
    });
  });
});

describe("gemini stream", () => {
  it("folds the recorded chunks: text concatenated, usage from the last chunk", () => {
    const r = normalizeStream(fixture("gemini-stream.json"));
    expect(r.messages[0]!.content).toEqual([{ type: "text", text: "Bonjour ! Comment allez-vous ?" }]);
    expect(r.messages[0]!.extras).toEqual({ responseId: "nSxBaZGyA8yoz7IPpMDZ2QM", index: 0, finishReason: "STOP" });
    expect(r.usage_metadata).toEqual({
      input_tokens: 8,
      output_tokens: 25,
      total_tokens: 33,
      output_token_details: { reasoning: 18 },
      extras: { promptTokensDetails: [{ modality: "TEXT", tokenCount: 8 }] },
    });
    expect(r.trace_model_name).toBe("gemini-2.5-flash");
    expect(r.stop_reason).toBe("STOP");
  });

  it("thoughts and answer stay apart; a signature closes its text; function calls arrive whole", () => {
    const chunk = (parts: Part[], extra: Record<string, unknown> = {}) => ({
      candidates: [{ content: { role: "model", parts }, index: 0, ...extra }],
    });
    const r = normalizeStream([
      chunk([{ text: "Think", thought: true }]),
      chunk([{ text: "ing.", thought: true }]),
      chunk([{ text: "Calling", thoughtSignature: "sig" }]),
      chunk([{ text: " now" }]),
      chunk([{ functionCall: { name: "f", args: { a: 1 } } }, { functionCall: { name: "g", args: {} } }], { finishReason: "STOP" }),
    ]);
    expect(r.messages[0]!.content).toEqual([
      { type: "reasoning", text: "Thinking." },
      { type: "text", text: "Calling", extras: { signature: "sig" } },
      { type: "text", text: " now" },
      { type: "tool_call", id: "gemini_call_c0_3", name: "f", args: { a: 1 }, extras: { id_synthesized: true } },
      { type: "tool_call", id: "gemini_call_c0_4", name: "g", args: {}, extras: { id_synthesized: true } },
    ]);
    expectValidNative(r.messages);
  });

  it("push() is true exactly once, at the first chunk with content", () => {
    const acc = createStreamAccumulator();
    const flags = [
      { usageMetadata: { promptTokenCount: 1 } },
      { candidates: [{ content: { role: "model", parts: [{ text: "" }] } }] },
      ...fixture("gemini-stream.json"),
    ].map((c) => acc.push(c));
    expect(flags).toEqual([false, false, true, false, false, false]);
  });

  it("a stream cut short keeps what arrived", () => {
    const acc = createStreamAccumulator();
    for (const c of fixture("gemini-stream.json").slice(0, 2)) acc.push(c);
    expect(acc.result().messages[0]!.content).toEqual([{ type: "text", text: "Bonjour ! Comment" }]);
  });

  it("several candidates are folded by index", () => {
    const r = normalizeStream([
      {
        candidates: [
          { content: model({ text: "a" }), index: 0 },
          { content: model({ text: "x" }), index: 1 },
        ],
      },
      { candidates: [{ content: model({ text: "b" }), index: 1 }] },
      { candidates: [{ content: model({ text: "c" }), index: 0 }] },
    ]);
    expect(r.messages.map((m) => m.content[0])).toEqual([
      { type: "text", text: "ac" },
      { type: "text", text: "xb" },
    ]);
  });

  it("names a bad chunk by its position", () => {
    expect(issueOf(() => normalizeStream([fixture("gemini-stream.json")[0], "nope"]))).toMatchObject({ loc: [1], type: "object_type" });
    expect(issueOf(() => normalizeStream([{ candidates: 3 }]))).toMatchObject({ loc: [0, "candidates"], type: "list_type" });
  });
});

describe("gemini detection", () => {
  it("auto-detects requests (REST and SDK), responses, streams and pairs", () => {
    expect(detectFormat(rest([user({ text: "hi" })]))).toBe("gemini");
    expect(detectFormat({ contents: [{ parts: [{ text: "hi" }] }] })).toBe("gemini");
    expect(detectFormat(sdk({ model: "gemini-2.5-flash", contents: "hi" }))).toBe("gemini");
    expect(detectFormat(fixture("gemini-response.json"))).toBe("gemini");
    expect(detectFormat(fixture("gemini-stream.json"))).toBe("gemini");
    expect(detectFormat({ promptFeedback: { blockReason: "SAFETY" }, usageMetadata: { promptTokenCount: 3 } })).toBe("gemini");
    const rec = normalize({
      request: sdk({ model: "gemini-2.5-flash", contents: "Weather?", config: { systemInstruction: "Be brief." } }),
      response: fixture("gemini-response.json"),
    });
    expect(rec.format).toBe("gemini");
    expect(rec.metadata).toEqual({ trace_provider: "google", trace_model_name: "gemini-2.5-flash" });
    expect(rec.inputs!.messages.map((m) => m.role)).toEqual(["system", "user"]);
    expect(
      normalize({ request: rest([user({ text: "hi" })]), response: fixture("gemini-stream.json") }).outputs!.messages[0]!.content[0],
    ).toEqual({ type: "text", text: "Bonjour ! Comment allez-vous ?" });
  });

  it("no other adapter claims a Gemini payload, and Gemini claims no other vendor's", () => {
    const ours = [
      rest([user({ text: "hi" })]),
      sdk({ model: "gemini-2.5-flash", contents: "hi" }),
      fixture("gemini-response.json"),
      fixture("gemini-stream.json"),
      { request: rest([user({ text: "hi" })]), response: fixture("gemini-response.json") },
    ];
    for (const a of ADAPTERS) if (a.name !== "gemini") for (const p of ours) expect(a.detect(p)).toBeNull();
    const theirs = [
      "openai-completion.json",
      "openai-stream.json",
      "openai-response.json",
      "openai-response-stream.json",
      "anthropic-message.json",
      "anthropic-stream.json",
    ].map(fixture);
    theirs.push(
      { model: "gpt-4o", messages: [{ role: "user", content: "hi" }] },
      { model: "gpt-4.1", input: "hi" },
      { model: "claude-sonnet-4-5", max_tokens: 10, messages: [{ role: "user", content: "hi" }] },
      { messages: [{ role: "user", content: "hi" }] },
    );
    for (const p of theirs) expect(gemini.detect(p)).toBeNull();
  });

  it("a Gemini model name alone does not make a chat request Gemini's", () => {
    expect(gemini.detect({ model: "gemini-2.5-flash", messages: [{ role: "user", content: "hi" }] })).toBeNull();
  });

  it("--format gemini names what it cannot read", () => {
    expect(issueOf(() => normalize({ foo: 1 }, { format: "gemini" }))).toMatchObject({ loc: [], type: "unknown_payload" });
    expect(issueOf(() => normalize({ request: { contents: [{ role: "x" }] } }, { format: "gemini" }))).toMatchObject({
      loc: ["request", "contents", 0, "role"],
    });
  });
});
