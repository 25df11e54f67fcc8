import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { ADAPTERS } from "../../adapters/index.js";
import { normalize } from "../../src/normalize.js";
import { NormalizeError } from "../../src/errors.js";
import { validate } from "../../src/format/validate.js";
import { ADAPTERS as SPAN_ADAPTERS, type SpanLike } from "../../adapters/span-index.js";
import type { NormalizedRecord } from "../../adapters/types.js";

/** Call fn; anything thrown must be a NormalizeError with well-formed issues. */
function onlyNormalizeError(fn: () => unknown): void {
  try {
    fn();
  } catch (err) {
    if (!(err instanceof NormalizeError)) throw new Error(`threw ${String(err)} instead of NormalizeError`, { cause: err });
    expect(err.issues.length).toBeGreaterThan(0);
    for (const i of err.issues) expect(Array.isArray(i.loc) && typeof i.msg === "string" && typeof i.type === "string").toBe(true);
  }
}

// Shapes close to real payloads reach deep code paths that pure random JSON never does.
const part = fc.oneof(
  fc.record(
    {
      type: fc.constantFrom(
        "text",
        "image_url",
        "input_audio",
        "file",
        "refusal",
        "image",
        "document",
        "tool_use",
        "tool_result",
        "thinking",
        "redacted_thinking",
        "server_tool_use",
        "web_search_tool_result",
        "search_result",
        "tool_call",
        "reasoning",
        "input_text",
        "output_text",
        "input_image",
        "input_file",
      ),
      file_id: fc.jsonValue(),
      file_data: fc.jsonValue(),
      annotations: fc.jsonValue(),
      text: fc.jsonValue(),
      image_url: fc.jsonValue(),
      source: fc.jsonValue(),
      input: fc.jsonValue(),
      content: fc.jsonValue(),
      id: fc.jsonValue(),
      tool_use_id: fc.jsonValue(),
      name: fc.jsonValue(),
    },
    { requiredKeys: ["type"] },
  ),
  fc.jsonValue(),
);
const message = fc.record(
  {
    role: fc.oneof(fc.constantFrom("system", "developer", "user", "assistant", "tool", "function", "reasoning"), fc.jsonValue()),
    content: fc.oneof(fc.string(), fc.array(part, { maxLength: 4 }), fc.jsonValue()),
    tool_calls: fc.jsonValue(),
    tool_call_id: fc.jsonValue(),
    function_call: fc.jsonValue(),
    name: fc.jsonValue(),
  },
  { requiredKeys: ["role"] },
);
const request = fc.record(
  {
    model: fc.oneof(fc.constantFrom("gpt-4o", "claude-sonnet-4-5"), fc.jsonValue()),
    messages: fc.oneof(fc.array(message, { maxLength: 5 }), fc.jsonValue()),
    system: fc.jsonValue(),
    max_tokens: fc.jsonValue(),
  },
  { requiredKeys: ["messages"] },
);
// Responses-shaped: `input` items with arbitrary values, `output` items likewise.
const looseItem = fc.record(
  {
    type: fc.constantFrom(
      "message",
      "function_call",
      "function_call_output",
      "reasoning",
      "web_search_call",
      "file_search_call",
      "code_interpreter_call",
      "image_generation_call",
      "mcp_call",
      "item_reference",
      "custom_tool_call",
      "custom_tool_call_output",
      "computer_call",
      "computer_call_output",
    ),
    role: fc.jsonValue(),
    input: fc.jsonValue(),
    action: fc.jsonValue(),
    content: fc.oneof(fc.array(part, { maxLength: 3 }), fc.jsonValue()),
    id: fc.jsonValue(),
    call_id: fc.jsonValue(),
    name: fc.jsonValue(),
    arguments: fc.jsonValue(),
    output: fc.jsonValue(),
    summary: fc.jsonValue(),
    results: fc.jsonValue(),
    outputs: fc.jsonValue(),
    status: fc.jsonValue(),
  },
  { requiredKeys: ["type"] },
);
const looseResponses = fc.oneof(
  fc.record(
    { model: fc.jsonValue(), instructions: fc.jsonValue(), input: fc.oneof(fc.array(looseItem, { maxLength: 4 }), fc.jsonValue()) },
    { requiredKeys: ["input"] },
  ),
  fc.record({
    object: fc.constant("response"),
    output: fc.oneof(fc.array(looseItem, { maxLength: 4 }), fc.jsonValue()),
    usage: fc.jsonValue(),
    model: fc.jsonValue(),
  }),
);
const response = fc.record({
  object: fc.constantFrom("chat.completion", "x"),
  type: fc.constantFrom("message", "y"),
  role: fc.jsonValue(),
  choices: fc.oneof(
    fc.array(fc.record({ message: fc.oneof(message, fc.jsonValue()), index: fc.jsonValue(), finish_reason: fc.jsonValue() }), {
      maxLength: 3,
    }),
    fc.jsonValue(),
  ),
  content: fc.oneof(fc.array(part, { maxLength: 4 }), fc.jsonValue()),
  usage: fc.oneof(
    fc.dictionary(
      fc.constantFrom(
        "prompt_tokens",
        "completion_tokens",
        "input_tokens",
        "output_tokens",
        "cache_read_input_tokens",
        "prompt_tokens_details",
      ),
      fc.jsonValue(),
    ),
    fc.jsonValue(),
  ),
  usage_metadata: fc.jsonValue(),
});
const event = fc.record(
  {
    type: fc.constantFrom(
      "message_start",
      "content_block_start",
      "content_block_delta",
      "message_delta",
      "error",
      "ping",
      "response.created",
      "response.output_item.added",
      "response.output_text.delta",
      "response.function_call_arguments.delta",
      "response.reasoning_summary_text.delta",
      "response.output_item.done",
      "response.completed",
    ),
    index: fc.jsonValue(),
    delta: fc.jsonValue(),
    content_block: fc.jsonValue(),
    output_index: fc.oneof(fc.nat(2), fc.jsonValue()),
    content_index: fc.jsonValue(),
    item: fc.jsonValue(),
    response: fc.jsonValue(),
    message: fc.jsonValue(),
    usage: fc.jsonValue(),
    object: fc.constantFrom("chat.completion.chunk"),
    choices: fc.jsonValue(),
  },
  { requiredKeys: ["type"] },
);
// Gemini-shaped: Content/Part objects whose fields take arbitrary values.
const looseGeminiPart = fc.oneof(
  fc.record(
    {
      text: fc.jsonValue(),
      thought: fc.jsonValue(),
      thoughtSignature: fc.jsonValue(),
      inlineData: fc.jsonValue(),
      fileData: fc.jsonValue(),
      functionCall: fc.jsonValue(),
      functionResponse: fc.jsonValue(),
      executableCode: fc.jsonValue(),
      codeExecutionResult: fc.jsonValue(),
      toolCall: fc.jsonValue(),
      toolResponse: fc.jsonValue(),
    },
    { requiredKeys: [] },
  ),
  fc.jsonValue(),
);
const looseGeminiContent = fc.record(
  {
    role: fc.oneof(fc.constantFrom("user", "model", "function"), fc.jsonValue()),
    parts: fc.oneof(fc.array(looseGeminiPart, { maxLength: 4 }), fc.jsonValue()),
  },
  { requiredKeys: [] },
);
const looseGemini = fc.oneof(
  fc.record(
    {
      model: fc.jsonValue(),
      contents: fc.oneof(fc.array(fc.oneof(looseGeminiContent, looseGeminiPart), { maxLength: 4 }), looseGeminiPart, fc.jsonValue()),
      systemInstruction: fc.jsonValue(),
      config: fc.jsonValue(),
    },
    { requiredKeys: ["contents"] },
  ),
  fc.record(
    {
      candidates: fc.oneof(
        fc.array(
          fc.record(
            { content: fc.oneof(looseGeminiContent, fc.jsonValue()), index: fc.jsonValue(), finishReason: fc.jsonValue() },
            { requiredKeys: [] },
          ),
          { maxLength: 3 },
        ),
        fc.jsonValue(),
      ),
      usageMetadata: fc.jsonValue(),
      modelVersion: fc.jsonValue(),
      promptFeedback: fc.jsonValue(),
    },
    { requiredKeys: [] },
  ),
);
// Bedrock Converse-shaped: one-member union blocks and events with arbitrary values.
const looseConverseBlock = fc.oneof(
  fc.dictionary(
    fc.constantFrom(
      "text",
      "image",
      "document",
      "video",
      "audio",
      "toolUse",
      "toolResult",
      "guardContent",
      "cachePoint",
      "reasoningContent",
      "citationsContent",
      "searchResult",
      "$unknown",
    ),
    fc.jsonValue(),
    { minKeys: 1, maxKeys: 2 },
  ),
  fc.record({
    image: fc.record({
      format: fc.jsonValue(),
      source: fc.oneof(fc.record({ bytes: fc.jsonValue() }), fc.record({ s3Location: fc.jsonValue() }), fc.jsonValue()),
    }),
  }),
  fc.record({
    toolResult: fc.record({
      toolUseId: fc.jsonValue(),
      content: fc.oneof(
        fc.array(fc.dictionary(fc.constantFrom("text", "json", "image", "document", "video"), fc.jsonValue(), { minKeys: 1, maxKeys: 1 }), {
          maxLength: 2,
        }),
        fc.jsonValue(),
      ),
      status: fc.jsonValue(),
    }),
  }),
);
const looseConverse = fc.oneof(
  fc.record(
    {
      modelId: fc.jsonValue(),
      system: fc.oneof(fc.array(looseConverseBlock, { maxLength: 2 }), fc.jsonValue()),
      messages: fc.oneof(
        fc.array(
          fc.record({
            role: fc.oneof(fc.constantFrom("user", "assistant"), fc.jsonValue()),
            content: fc.oneof(fc.array(looseConverseBlock, { maxLength: 3 }), fc.jsonValue()),
          }),
          { maxLength: 3 },
        ),
        fc.jsonValue(),
      ),
      inferenceConfig: fc.jsonValue(),
    },
    { requiredKeys: ["modelId"] },
  ),
  fc.record(
    {
      output: fc.oneof(
        fc.record({
          message: fc.record({ role: fc.jsonValue(), content: fc.oneof(fc.array(looseConverseBlock, { maxLength: 3 }), fc.jsonValue()) }),
        }),
        fc.jsonValue(),
      ),
      usage: fc.oneof(
        fc.dictionary(
          fc.constantFrom("inputTokens", "outputTokens", "totalTokens", "cacheReadInputTokens", "cacheWriteInputTokens"),
          fc.jsonValue(),
        ),
        fc.jsonValue(),
      ),
      stopReason: fc.jsonValue(),
    },
    { requiredKeys: ["output"] },
  ),
  fc.array(
    fc.dictionary(
      fc.constantFrom(
        "messageStart",
        "contentBlockStart",
        "contentBlockDelta",
        "contentBlockStop",
        "messageStop",
        "metadata",
        "throttlingException",
        "$unknown",
      ),
      fc.oneof(
        fc.record({
          delta: fc.jsonValue(),
          start: fc.jsonValue(),
          contentBlockIndex: fc.oneof(fc.nat(2), fc.jsonValue()),
          usage: fc.jsonValue(),
        }),
        fc.jsonValue(),
      ),
      { minKeys: 1, maxKeys: 1 },
    ),
    { maxLength: 6 },
  ),
);
// Legacy completions: prompts of every documented type (and not), choices of `text`, chunks alike.
const prompt = fc.oneof(
  fc.string(),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.array(fc.integer({ min: -2, max: 60000 }), { maxLength: 4 }),
  fc.array(fc.array(fc.nat(), { maxLength: 3 }), { maxLength: 3 }),
  fc.jsonValue(),
);
const textChoice = fc.record(
  {
    text: fc.oneof(fc.string(), fc.jsonValue()),
    index: fc.oneof(fc.nat(3), fc.jsonValue()),
    logprobs: fc.oneof(fc.constant(null), fc.record({ tokens: fc.jsonValue(), token_logprobs: fc.jsonValue() }), fc.jsonValue()),
    finish_reason: fc.jsonValue(),
  },
  { requiredKeys: ["text"] },
);
const completionBody = fc.record(
  {
    object: fc.constantFrom("text_completion", "x"),
    model: fc.jsonValue(),
    choices: fc.oneof(fc.array(textChoice, { maxLength: 3 }), fc.jsonValue()),
    usage: fc.jsonValue(),
  },
  { requiredKeys: ["choices"] },
);
const looseCompletions = fc.oneof(
  fc.record(
    {
      model: fc.oneof(fc.constant("gpt-3.5-turbo-instruct"), fc.jsonValue()),
      prompt,
      suffix: fc.jsonValue(),
      echo: fc.jsonValue(),
      n: fc.jsonValue(),
      logprobs: fc.jsonValue(),
    },
    { requiredKeys: ["prompt"] },
  ),
  completionBody,
  fc.array(completionBody, { maxLength: 4 }),
  fc.record({
    request: fc.record({ model: fc.jsonValue(), prompt, echo: fc.jsonValue(), n: fc.jsonValue() }),
    response: fc.oneof(completionBody, fc.array(completionBody, { maxLength: 3 })),
  }),
);
// LangChain-shaped: message records in their three writings (constructor, {type, data}, {type, content}),
// standard and provider blocks, run inputs and LLMResult outputs, with arbitrary values in every field.
const lcClass = fc.constantFrom(
  "HumanMessage",
  "AIMessage",
  "AIMessageChunk",
  "SystemMessage",
  "ToolMessage",
  "ChatMessage",
  "FunctionMessage",
  "RemoveMessage",
  "HumanMessageChunk",
  "Document",
);
const lcType = fc.constantFrom("human", "ai", "system", "developer", "tool", "chat", "function", "remove", "AIMessageChunk", "user", "x");
const looseLcBlock = fc.oneof(
  part,
  fc.record(
    {
      type: fc.constantFrom(
        "image",
        "audio",
        "video",
        "file",
        "text-plain",
        "reasoning",
        "tool_call",
        "tool_call_chunk",
        "invalid_tool_call",
        "server_tool_call",
        "server_tool_result",
        "server_tool_call_result",
        "non_standard",
        "text",
      ),
      url: fc.jsonValue(),
      base64: fc.jsonValue(),
      data: fc.jsonValue(),
      mime_type: fc.jsonValue(),
      mimeType: fc.jsonValue(),
      file_id: fc.jsonValue(),
      fileId: fc.jsonValue(),
      source_type: fc.oneof(fc.constantFrom("url", "base64", "id", "text"), fc.jsonValue()),
      id: fc.jsonValue(),
      text: fc.jsonValue(),
      reasoning: fc.jsonValue(),
      summary: fc.jsonValue(),
      name: fc.jsonValue(),
      args: fc.jsonValue(),
      status: fc.jsonValue(),
      tool_call_id: fc.jsonValue(),
      toolCallId: fc.jsonValue(),
      output: fc.jsonValue(),
      index: fc.jsonValue(),
      annotations: fc.jsonValue(),
      citations: fc.jsonValue(),
    },
    { requiredKeys: ["type"] },
  ),
);
const looseLcFields = fc.record(
  {
    content: fc.oneof(fc.string(), fc.array(looseLcBlock, { maxLength: 4 }), fc.jsonValue()),
    type: lcType,
    role: fc.oneof(fc.constantFrom("user", "assistant", "critic", "tool"), fc.jsonValue()),
    tool_calls: fc.oneof(
      fc.array(fc.record({ name: fc.jsonValue(), args: fc.jsonValue(), id: fc.jsonValue(), type: fc.constant("tool_call") }), {
        maxLength: 2,
      }),
      fc.jsonValue(),
    ),
    invalid_tool_calls: fc.jsonValue(),
    tool_call_chunks: fc.oneof(
      fc.array(
        fc.record({
          name: fc.jsonValue(),
          args: fc.oneof(fc.string(), fc.jsonValue()),
          id: fc.jsonValue(),
          index: fc.oneof(fc.nat(2), fc.jsonValue()),
        }),
        { maxLength: 3 },
      ),
      fc.jsonValue(),
    ),
    tool_call_id: fc.jsonValue(),
    usage_metadata: fc.oneof(
      fc.record({
        input_tokens: fc.jsonValue(),
        output_tokens: fc.nat(),
        total_tokens: fc.jsonValue(),
        input_token_details: fc.jsonValue(),
      }),
      fc.jsonValue(),
    ),
    additional_kwargs: fc.oneof(
      fc.record({ tool_calls: fc.jsonValue(), function_call: fc.jsonValue(), reasoning_content: fc.jsonValue() }),
      fc.jsonValue(),
    ),
    response_metadata: fc.jsonValue(),
    name: fc.jsonValue(),
  },
  { requiredKeys: [] },
);
const looseLcMessage = fc.oneof(
  fc.record({
    lc: fc.constant(1),
    type: fc.constantFrom("constructor", "secret", "not_implemented"),
    id: fc.tuple(fc.constantFrom("langchain_core", "langchain"), lcClass).map(([ns, c]) => [ns, "messages", c]),
    kwargs: fc.oneof(looseLcFields, fc.jsonValue()),
  }),
  fc.record({ type: lcType, data: fc.oneof(looseLcFields, fc.jsonValue()) }),
  looseLcFields,
  fc.record({ role: fc.oneof(lcType, fc.jsonValue()), content: fc.oneof(fc.string(), fc.array(looseLcBlock, { maxLength: 3 })) }),
);
const looseGeneration = fc.record(
  {
    text: fc.jsonValue(),
    message: fc.oneof(looseLcMessage, fc.jsonValue()),
    generation_info: fc.jsonValue(),
    generationInfo: fc.jsonValue(),
    type: fc.constantFrom("ChatGeneration", "Generation", "ChatGenerationChunk"),
  },
  { requiredKeys: [] },
);
const looseLcOutputs = fc.record(
  {
    generations: fc.oneof(
      fc.array(fc.array(looseGeneration, { maxLength: 2 }), { maxLength: 2 }),
      fc.array(looseGeneration, { maxLength: 2 }),
      fc.jsonValue(),
    ),
    llm_output: fc.oneof(fc.record({ token_usage: fc.jsonValue(), model_name: fc.jsonValue(), usage: fc.jsonValue() }), fc.jsonValue()),
    llmOutput: fc.oneof(fc.record({ tokenUsage: fc.jsonValue() }), fc.jsonValue()),
    run: fc.jsonValue(),
  },
  { requiredKeys: ["generations"] },
);
const looseLcInputs = fc.oneof(
  fc.record({
    messages: fc.oneof(
      fc.array(fc.array(looseLcMessage, { maxLength: 4 }), { maxLength: 2 }),
      fc.array(looseLcMessage, { maxLength: 4 }),
      fc.jsonValue(),
    ),
  }),
  fc.record({ prompts: fc.oneof(fc.array(fc.string(), { maxLength: 2 }), fc.jsonValue()) }),
);
const looseLangChain = fc.oneof(
  looseLcInputs,
  looseLcOutputs,
  looseLcMessage,
  fc.array(looseLcMessage, { maxLength: 5 }),
  fc.array(looseGeneration, { maxLength: 4 }),
  fc.record({ request: looseLcInputs, response: looseLcOutputs }),
);
const anyPayload = fc.oneof(
  fc.jsonValue(),
  request,
  response,
  looseResponses,
  looseGemini,
  fc.array(looseGemini, { maxLength: 4 }),
  looseConverse,
  looseCompletions,
  fc.array(event, { maxLength: 6 }),
  fc.record({ request, response }),
  looseLangChain,
);

describe("adapters under arbitrary input", () => {
  for (const adapter of ADAPTERS) {
    it(`${adapter.name} throws nothing but NormalizeError`, () => {
      fc.assert(
        fc.property(anyPayload, (payload) => {
          expect(adapter.detect(payload) === null || typeof adapter.detect(payload) === "string").toBe(true);
          onlyNormalizeError(() => adapter.normalize(payload));
          onlyNormalizeError(() => adapter.normalizeRequest(payload));
          onlyNormalizeError(() => adapter.normalizeResponse(payload));
          if (Array.isArray(payload)) onlyNormalizeError(() => adapter.normalizeStream(payload));
          onlyNormalizeError(() => {
            const acc = adapter.createStreamAccumulator();
            for (const c of Array.isArray(payload) ? payload : [payload]) acc.push(c);
            return acc.result();
          });
        }),
        { numRuns: 400 },
      );
    });
  }

  it("normalize({format: auto}) throws nothing but NormalizeError", () => {
    fc.assert(
      fc.property(anyPayload, (payload) => onlyNormalizeError(() => normalize(payload))),
      { numRuns: 400 },
    );
  });
});

// ---- span adapters -------------------------------------------------------------------------
// Attribute maps shaped like the conventions' (the keys they read, values that are JSON text of
// message-like structures or scalars), plus arbitrary keys and values.

const json = (arb: fc.Arbitrary<unknown>) => arb.map((v) => JSON.stringify(v));
const scalar = fc.oneof(fc.string(), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constant(undefined));
// A field the adapter expects to be a string: usually one, sometimes anything.
const sj = fc.oneof({ weight: 3, arbitrary: fc.string({ maxLength: 6 }) }, { weight: 1, arbitrary: fc.jsonValue() });
const otelPart = fc.record(
  {
    type: fc.oneof(
      {
        weight: 5,
        arbitrary: fc.constantFrom(
          "text",
          "reasoning",
          "tool_call",
          "tool_call_response",
          "server_tool_call",
          "server_tool_call_response",
          "blob",
          "uri",
          "file",
          "citation",
        ),
      },
      { weight: 1, arbitrary: fc.jsonValue() },
    ),
    content: sj,
    id: sj,
    name: sj,
    arguments: fc.oneof(sj, fc.constantFrom("{}", '{"a":1}')),
    response: fc.jsonValue(),
    result: fc.jsonValue(),
    modality: fc.oneof(fc.constantFrom("image", "audio", "video", "document"), sj),
    mime_type: fc.oneof(fc.constantFrom("image/png", "audio/wav"), sj),
    uri: sj,
    file_id: sj,
    server_tool_call: fc.jsonValue(),
    server_tool_call_response: fc.jsonValue(),
  },
  { requiredKeys: ["type"] },
);
const otelMessages = fc.array(
  fc.record(
    {
      role: fc.oneof(
        { weight: 5, arbitrary: fc.constantFrom("system", "user", "assistant", "tool", "developer") },
        { weight: 1, arbitrary: fc.jsonValue() },
      ),
      parts: fc.oneof({ weight: 5, arbitrary: fc.array(otelPart, { maxLength: 4 }) }, { weight: 1, arbitrary: fc.jsonValue() }),
      finish_reason: sj,
    },
    { requiredKeys: ["role"] },
  ),
  { maxLength: 4 },
);
const anthropicBlocks = fc.array(part, { maxLength: 3 });
const aiPart = fc.record(
  {
    type: fc.oneof(
      {
        weight: 5,
        arbitrary: fc.constantFrom("text", "reasoning", "redacted-reasoning", "image", "file", "tool-call", "tool-result", "source"),
      },
      { weight: 1, arbitrary: fc.jsonValue() },
    ),
    text: sj,
    image: fc.oneof(sj, fc.constantFrom("data:image/png;base64,iVBOR", "https://x.test/i.png", "iVBORw0KGgo=")),
    data: fc.oneof(sj, fc.constantFrom("data:application/pdf;base64,JVBER", "AAAA"), fc.constant({ 0: 137, 1: 80 })),
    mediaType: fc.oneof(fc.constantFrom("image/png", "application/pdf"), sj),
    mimeType: sj,
    toolCallId: sj,
    toolName: sj,
    input: fc.jsonValue(),
    args: fc.jsonValue(),
    output: fc.oneof(
      fc.record({
        type: fc.constantFrom("text", "json", "error-text", "content"),
        value: fc.oneof(
          fc.jsonValue(),
          fc.array(fc.record({ type: fc.constantFrom("text", "media"), text: sj, data: sj, mediaType: sj }), { maxLength: 2 }),
        ),
      }),
      fc.jsonValue(),
    ),
    result: fc.jsonValue(),
  },
  { requiredKeys: ["type"] },
);
const aiMessages = fc.array(
  fc.record({
    role: fc.oneof(
      { weight: 5, arbitrary: fc.constantFrom("system", "user", "assistant", "tool") },
      { weight: 1, arbitrary: fc.jsonValue() },
    ),
    content: fc.oneof(
      { weight: 1, arbitrary: fc.string() },
      { weight: 5, arbitrary: fc.array(aiPart, { maxLength: 3 }) },
      { weight: 1, arbitrary: fc.jsonValue() },
    ),
  }),
  { maxLength: 3 },
);

const oiKey = fc
  .tuple(
    fc.constantFrom("llm.input_messages", "llm.output_messages"),
    fc.nat(2),
    fc.constantFrom(
      "message.role",
      "message.content",
      "message.tool_call_id",
      "message.name",
      "message.function_call_name",
      "message.function_call_arguments_json",
      "message.contents.0.message_content.type",
      "message.contents.1.message_content.text",
      "message.contents.0.message_content.image.image.url",
      "message.contents.1.tool_call.id",
      "message.contents.1.tool_call.function.arguments",
      "message.contents.0.message_content.signature",
      "message.contents.0.message_content.data",
      "message.tool_calls.0.tool_call.id",
      "message.tool_calls.0.tool_call.function.name",
      "message.tool_calls.1.tool_call.function.arguments",
      "message.x",
    ),
  )
  .map(([p, i, rest]) => `${p}.${i}.${rest}`);
const legacyKey = fc
  .tuple(
    fc.constantFrom("gen_ai.prompt", "gen_ai.completion"),
    fc.nat(3),
    fc.constantFrom(
      "role",
      "content",
      "tool_call_id",
      "finish_reason",
      "tool_calls.0.id",
      "tool_calls.0.name",
      "tool_calls.0.arguments",
      "function_call.name",
    ),
  )
  .map(([p, i, rest]) => `${p}.${i}.${rest}`);
const namedKey = fc.constantFrom(
  "gen_ai.operation.name",
  "gen_ai.system",
  "gen_ai.provider.name",
  "gen_ai.request.model",
  "gen_ai.response.model",
  "gen_ai.usage.input_tokens",
  "gen_ai.usage.output_tokens",
  "gen_ai.tool.definitions",
  "gen_ai.tool.call.arguments",
  "gen_ai.tool.call.result",
  "gen_ai.response.time_to_first_chunk",
  "llm.request.type",
  "openinference.span.kind",
  "llm.provider",
  "llm.system",
  "llm.model_name",
  "llm.invocation_parameters",
  "llm.tools.0.tool.json_schema",
  "llm.token_count.prompt",
  "input.value",
  "input.mime_type",
  "output.value",
  "output.mime_type",
  "retrieval.documents.0.document.content",
  "tool.name",
  "ai.operationId",
  "ai.model.provider",
  "ai.model.id",
  "ai.prompt",
  "ai.prompt.tools",
  "ai.prompt.toolChoice",
  "ai.response.text",
  "ai.response.object",
  "ai.response.toolCalls",
  "ai.response.finishReason",
  "ai.usage.inputTokens",
  "ai.toolCall.args",
  "ai.toolCall.result",
  "ai.settings.maxRetries",
  "ai.values",
);
const jsonValued = fc.oneof(json(otelMessages), json(aiMessages), json(anthropicBlocks), json(fc.jsonValue()), fc.string());
const attrValue = fc.oneof(
  { weight: 3, arbitrary: jsonValued },
  { weight: 2, arbitrary: scalar },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "LLM",
      "CHAIN",
      "TOOL",
      "RETRIEVER",
      "chat",
      "execute_tool",
      "embeddings",
      "invoke_agent",
      "Anthropic",
      "openai",
      "anthropic",
      "application/json",
      "ai.generateText.doGenerate",
      "ai.streamText",
      "ai.toolCall",
      "ai.embed",
      "user",
      "assistant",
      "tool",
      "image",
      "text",
      "tool_use",
      "reasoning",
    ),
  },
  { weight: 1, arbitrary: fc.array(fc.oneof(fc.string(), fc.integer(), fc.boolean(), jsonValued), { maxLength: 3 }) },
);
const attrs = fc.oneof(
  fc.dictionary(fc.oneof(namedKey, oiKey, legacyKey, fc.string()), attrValue, { maxKeys: 14 }),
  fc.record(
    {
      "gen_ai.operation.name": fc.constant("chat"),
      "gen_ai.input.messages": json(otelMessages),
      "gen_ai.output.messages": json(otelMessages),
      "gen_ai.system_instructions": json(fc.array(otelPart, { maxLength: 2 })),
    },
    { requiredKeys: ["gen_ai.operation.name"] },
  ),
  fc.record(
    {
      "ai.operationId": fc.constantFrom("ai.generateText.doGenerate", "ai.streamText.doStream", "ai.generateText", "ai.toolCall"),
      "ai.prompt.messages": json(aiMessages),
      "ai.response.toolCalls": json(fc.jsonValue()),
      "ai.response.text": fc.string(),
    },
    { requiredKeys: ["ai.operationId"] },
  ),
);
const spanArb = fc.record({
  name: fc.string(),
  attributes: attrs,
  events: fc.array(
    fc.record({
      name: fc.constantFrom("gen_ai.content.prompt", "gen_ai.content.completion", "ai.stream.firstChunk", "First Token Stream Event", "x"),
      offsetMs: fc.double(),
      attributes: fc.dictionary(fc.constantFrom("gen_ai.prompt", "gen_ai.completion", "ai.response.msToFirstChunk"), attrValue),
    }),
    { maxLength: 2 },
  ),
}) as fc.Arbitrary<SpanLike>;

describe("span adapters under arbitrary attribute maps", () => {
  for (const adapter of SPAN_ADAPTERS) {
    it(`${adapter.name} throws nothing but NormalizeError`, () => {
      fc.assert(
        fc.property(spanArb, (s) => {
          expect(typeof adapter.detect(s)).toBe("boolean");
          onlyNormalizeError(() => adapter.read(s));
        }),
        { numRuns: 600 },
      );
    });

    it(`${adapter.name}: whatever it reads, validate accepts`, () => {
      fc.assert(
        fc.property(spanArb, (s) => {
          let r: ReturnType<typeof adapter.read>;
          try {
            r = adapter.read(s);
          } catch (err) {
            if (err instanceof NormalizeError) return;
            throw err;
          }
          if (r.input_messages) expect(validate(r.input_messages)).toEqual([]);
          if (r.output_messages) expect(validate(r.output_messages)).toEqual([]);
        }),
        { numRuns: 600 },
      );
    });
  }
});

// ---- what normalize accepts, validate accepts ----------------------------------------------
// Vendor-shaped records (most of them accepted) with arbitrary values mixed in.

const str = fc.string({ maxLength: 8 });
const dataUrl = fc.constantFrom(
  "data:image/png;base64,iVBORw0KGgo=",
  "data:image/svg+xml;charset=utf-8;base64,PHN2Zy8+",
  "data:,hello",
  "https://x.test/a.png",
  "data:application/pdf;base64,JVBERi0=",
);
const openaiPart = fc.oneof(
  fc.record({ type: fc.constant("text"), text: str }),
  fc.record({
    type: fc.constant("image_url"),
    image_url: fc.oneof(fc.record({ url: dataUrl, detail: fc.constantFrom("low", "high") }, { requiredKeys: ["url"] }), dataUrl),
  }),
  fc.record({ type: fc.constant("input_audio"), input_audio: fc.record({ data: str, format: fc.constantFrom("wav", "mp3", "flac") }) }),
  fc.record({
    type: fc.constant("file"),
    file: fc.record({ file_id: str, file_data: fc.oneof(dataUrl, str), filename: fc.constantFrom("a.pdf", "b", "c.csv") }),
  }),
  fc.record({ type: fc.constant("refusal"), refusal: str }),
  fc.record({ type: fc.constantFrom("hologram", "input_video"), data: fc.jsonValue() }),
  str,
);
const ids = fc.constantFrom("c1", "c2", "toolu_1", "x");
const openaiToolCall = fc.oneof(
  fc.record({
    id: ids,
    type: fc.constant("function"),
    function: fc.record({ name: str, arguments: fc.oneof(fc.constantFrom("", "{}", '{"a":1}', "[1]", "{bad"), str) }),
  }),
  fc.record({ id: ids, type: fc.constant("custom"), custom: fc.record({ name: str, input: str }) }),
);
const openaiMessage = fc.oneof(
  fc.record(
    { role: fc.constantFrom("system", "developer", "user"), content: fc.oneof(str, fc.array(openaiPart, { maxLength: 3 })), name: str },
    { requiredKeys: ["role", "content"] },
  ),
  fc.record(
    {
      role: fc.constant("assistant"),
      content: fc.oneof(str, fc.constant(null), fc.array(openaiPart, { maxLength: 2 })),
      tool_calls: fc.array(openaiToolCall, { maxLength: 2 }),
      refusal: fc.oneof(str, fc.constant(null)),
      audio: fc.oneof(
        fc.record({ id: str }),
        fc.record({ id: str, data: fc.constantFrom("UklGRg==", "SUQz", "AAAA"), transcript: str, expires_at: fc.integer() }),
      ),
      function_call: fc.record({ name: fc.constantFrom("f", "g"), arguments: fc.constantFrom("{}", "") }),
      reasoning_content: str,
      provider_field: fc.jsonValue(),
    },
    { requiredKeys: ["role"] },
  ),
  fc.record({ role: fc.constant("tool"), tool_call_id: ids, content: fc.oneof(str, fc.array(openaiPart, { maxLength: 2 })) }),
  fc.record({ role: fc.constant("function"), name: fc.constantFrom("f", "g"), content: str }),
);
const openaiRequest = fc.record(
  {
    model: fc.constantFrom("gpt-4o", "o3-mini"),
    messages: fc.array(openaiMessage, { maxLength: 5 }),
    temperature: fc.double({ min: 0, max: 2, noNaN: true }),
    audio: fc.record({ format: fc.constantFrom("wav", "mp3", "pcm16"), voice: fc.constant("alloy") }),
  },
  { requiredKeys: ["model", "messages"] },
);
const usage = fc.record(
  {
    prompt_tokens: fc.nat(1000),
    completion_tokens: fc.nat(1000),
    total_tokens: fc.nat(2000),
    prompt_tokens_details: fc.record({ cached_tokens: fc.nat(100) }),
  },
  { requiredKeys: [] },
);
const openaiResponse = fc.oneof(
  fc.record(
    {
      object: fc.constant("chat.completion"),
      model: str,
      choices: fc.array(
        fc.record({
          index: fc.nat(3),
          message: openaiMessage.filter((m) => m.role === "assistant"),
          finish_reason: fc.constantFrom("stop", "tool_calls"),
        }),
        { maxLength: 2 },
      ),
      usage,
    },
    { requiredKeys: ["object", "choices"] },
  ),
  fc.record({ message: openaiMessage.filter((m) => m.role === "assistant") }),
  openaiMessage.filter((m) => m.role === "assistant"),
);
const delta = fc.record(
  {
    role: fc.constant("assistant"),
    content: fc.oneof(str, fc.constant(null)),
    refusal: str,
    reasoning_content: str,
    tool_calls: fc.array(
      fc.record(
        {
          index: fc.nat(2),
          id: ids,
          type: fc.constant("function"),
          function: fc.record({ name: str, arguments: fc.constantFrom("{", '"a"', ":1}", "") }, { requiredKeys: [] }),
        },
        { requiredKeys: ["index"] },
      ),
      { maxLength: 2 },
    ),
    audio: fc.record({ id: str, data: fc.constantFrom("UklG", "Rg=="), transcript: str }, { requiredKeys: [] }),
    annotations: fc.array(fc.record({ type: fc.constant("url_citation") }), { maxLength: 1 }),
    extra_thing: fc.jsonValue(),
  },
  { requiredKeys: [] },
);
const openaiStream = fc.array(
  fc.record(
    {
      object: fc.constant("chat.completion.chunk"),
      model: str,
      choices: fc.array(
        fc.record({ index: fc.nat(1), delta, finish_reason: fc.constantFrom("stop", null) }, { requiredKeys: ["index", "delta"] }),
        { maxLength: 1 },
      ),
      usage: fc.option(usage, { nil: undefined }),
    },
    { requiredKeys: ["object", "choices"] },
  ),
  { minLength: 1, maxLength: 5 },
);

const anthropicSource = fc.oneof(
  fc.record({ type: fc.constant("base64"), media_type: fc.constantFrom("image/png", "application/pdf"), data: str }),
  fc.record({ type: fc.constant("url"), url: fc.constant("https://x.test/a") }),
  fc.record({ type: fc.constant("file"), file_id: str }),
  fc.record({ type: fc.constant("text"), media_type: fc.constant("text/plain"), data: str }),
  fc.record({
    type: fc.constant("content"),
    content: fc.oneof(
      str,
      fc.array(
        fc.oneof(
          fc.record({ type: fc.constant("text"), text: str }),
          fc.record({ type: fc.constant("image"), source: fc.record({ type: fc.constant("url"), url: fc.constant("https://x.test/i") }) }),
          fc.record({ type: fc.constant("other") }),
        ),
        { maxLength: 3 },
      ),
    ),
  }),
);
const anthropicBlock = fc.oneof(
  fc.record({ type: fc.constant("text"), text: str }),
  fc.record({ type: fc.constantFrom("image", "document"), source: anthropicSource, title: str }, { requiredKeys: ["type", "source"] }),
  fc.record({ type: fc.constant("tool_use"), id: ids, name: str, input: fc.oneof(fc.dictionary(str, fc.jsonValue()), fc.constant("{}")) }),
  fc.record({ type: fc.constant("thinking"), thinking: str, signature: str }),
  fc.record({ type: fc.constant("redacted_thinking"), data: str }),
  fc.record({ type: fc.constant("server_tool_use"), id: ids, name: str, input: fc.constant({}) }),
  fc.record({ type: fc.constant("web_search_tool_result"), tool_use_id: ids, content: fc.jsonValue() }),
  fc.record({ type: fc.constantFrom("container_upload", "brand_new_block"), file_id: str }),
);
const toolResult = fc.record(
  {
    type: fc.constant("tool_result"),
    tool_use_id: ids,
    content: fc.oneof(str, fc.array(anthropicBlock, { maxLength: 2 })),
    is_error: fc.boolean(),
  },
  { requiredKeys: ["type", "tool_use_id"] },
);
const anthropicRequest = fc.record(
  {
    model: fc.constantFrom("claude-sonnet-4-5", "proxy-model"),
    max_tokens: fc.nat(4096),
    system: fc.oneof(str, fc.array(fc.record({ type: fc.constant("text"), text: str }), { maxLength: 2 })),
    messages: fc.array(
      fc.oneof(
        fc.record({ role: fc.constant("user"), content: fc.oneof(str, fc.array(fc.oneof(anthropicBlock, toolResult), { maxLength: 3 })) }),
        fc.record({ role: fc.constant("assistant"), content: fc.oneof(str, fc.array(anthropicBlock, { maxLength: 3 })) }),
      ),
      { maxLength: 4 },
    ),
  },
  { requiredKeys: ["model", "max_tokens", "messages"] },
);
const anthropicUsage = fc.record(
  { input_tokens: fc.nat(1000), output_tokens: fc.nat(1000), cache_read_input_tokens: fc.nat(100) },
  { requiredKeys: ["input_tokens", "output_tokens"] },
);
const anthropicResponse = fc.oneof(
  fc.record({
    id: str,
    type: fc.constant("message"),
    role: fc.constant("assistant"),
    model: str,
    content: fc.array(anthropicBlock, { maxLength: 3 }),
    stop_reason: fc.constantFrom("end_turn", "tool_use"),
    usage: anthropicUsage,
  }),
  fc.record({ message: fc.record({ role: fc.constant("assistant"), content: fc.array(anthropicBlock, { maxLength: 3 }) }) }),
  fc.tuple(fc.constant("assistant"), fc.array(anthropicBlock, { maxLength: 3 })),
);
const anthropicStream = fc
  .tuple(
    anthropicUsage,
    fc.array(anthropicBlock, { maxLength: 3 }),
    fc.array(
      fc.oneof(
        fc.record({ type: fc.constant("text_delta"), text: str }),
        fc.record({ type: fc.constant("input_json_delta"), partial_json: fc.constantFrom("{", '"a":1', "}") }),
        fc.record({ type: fc.constant("thinking_delta"), thinking: str }),
      ),
      { maxLength: 3 },
    ),
  )
  .map(([u, blocks, deltas]) => [
    { type: "message_start", message: { id: "m", type: "message", role: "assistant", model: "claude-sonnet-4-5", content: [], usage: u } },
    ...blocks.flatMap((b, i) => [
      { type: "content_block_start", index: i, content_block: b },
      ...deltas.map((d) => ({ type: "content_block_delta", index: i, delta: d })),
      { type: "content_block_stop", index: i },
    ]),
    { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 3 } },
    { type: "message_stop" },
  ]);

// Responses API shapes (openai 6.x types): input items, output items, the event sequence.
const respPart = fc.oneof(
  fc.record(
    {
      type: fc.constantFrom("input_text", "output_text"),
      text: str,
      annotations: fc.array(fc.record({ type: fc.constant("url_citation"), url: str }), { maxLength: 1 }),
    },
    { requiredKeys: ["type", "text"] },
  ),
  fc.record(
    {
      type: fc.constant("input_image"),
      detail: fc.constant("auto"),
      image_url: fc.oneof(dataUrl, fc.constant(null)),
      file_id: fc.oneof(str, fc.constant(null)),
    },
    { requiredKeys: ["type"] },
  ),
  fc.record(
    {
      type: fc.constant("input_file"),
      file_data: fc.oneof(dataUrl, str),
      file_id: str,
      file_url: fc.constant("https://x.test/f.pdf"),
      filename: str,
    },
    { requiredKeys: ["type"] },
  ),
  fc.record({ type: fc.constant("input_audio"), input_audio: fc.record({ data: str, format: fc.constantFrom("wav", "mp3") }) }),
  fc.record({ type: fc.constant("refusal"), refusal: str }),
  fc.record({ type: fc.constant("brand_new_part"), x: fc.jsonValue() }),
);
const respOutputItem = fc.oneof(
  fc.record({
    type: fc.constant("message"),
    id: str,
    role: fc.constant("assistant"),
    status: fc.constant("completed"),
    content: fc.array(respPart, { maxLength: 2 }),
  }),
  fc.record({
    type: fc.constant("function_call"),
    id: str,
    call_id: ids,
    name: str,
    arguments: fc.constantFrom("", "{}", '{"a":1}', "{bad", "[1]"),
  }),
  fc.record(
    {
      type: fc.constant("reasoning"),
      id: str,
      summary: fc.array(fc.record({ type: fc.constant("summary_text"), text: str }), { maxLength: 2 }),
      encrypted_content: fc.oneof(str, fc.constant(null)),
    },
    { requiredKeys: ["type", "id", "summary"] },
  ),
  fc.record(
    {
      type: fc.constantFrom("web_search_call", "file_search_call", "code_interpreter_call", "image_generation_call", "mcp_call"),
      id: str,
      status: fc.constantFrom("completed", "failed"),
      action: fc.jsonValue(),
      queries: fc.array(str),
      results: fc.jsonValue(),
      code: str,
      container_id: str,
      outputs: fc.jsonValue(),
      result: fc.oneof(str, fc.constant(null)),
      name: str,
      arguments: fc.constantFrom("{}", "x"),
      output: fc.jsonValue(),
      error: fc.jsonValue(),
    },
    { requiredKeys: ["type", "id"] },
  ),
  fc.record(
    {
      type: fc.constantFrom("computer_call", "custom_tool_call", "item_reference"),
      id: str,
      call_id: ids,
      name: str,
      input: str,
      action: fc.jsonValue(),
    },
    { requiredKeys: ["type", "id"] },
  ),
);
const respInputItem = fc.oneof(
  fc.record(
    {
      role: fc.constantFrom("user", "system", "developer", "assistant"),
      content: fc.oneof(str, fc.array(respPart, { maxLength: 3 })),
      type: fc.constant("message"),
    },
    { requiredKeys: ["role", "content"] },
  ),
  fc.record({
    type: fc.constantFrom("function_call_output", "custom_tool_call_output"),
    call_id: ids,
    output: fc.oneof(str, fc.array(respPart, { maxLength: 2 })),
  }),
  fc.record({
    type: fc.constant("computer_call_output"),
    call_id: ids,
    output: fc.record({ type: fc.constant("computer_screenshot"), image_url: dataUrl, file_id: str }, { requiredKeys: ["type"] }),
  }),
  respOutputItem,
);
const respUsage = fc.record(
  {
    input_tokens: fc.nat(1000),
    output_tokens: fc.nat(1000),
    total_tokens: fc.nat(2000),
    input_tokens_details: fc.record({ cached_tokens: fc.nat(100) }),
    output_tokens_details: fc.record({ reasoning_tokens: fc.nat(100) }),
  },
  { requiredKeys: ["input_tokens", "output_tokens"] },
);
const respRequest = fc.record(
  {
    model: fc.constantFrom("gpt-4.1", "o4-mini"),
    instructions: str,
    input: fc.oneof(str, fc.array(respInputItem, { maxLength: 5 })),
    previous_response_id: str,
    temperature: fc.double({ min: 0, max: 2, noNaN: true }),
  },
  { requiredKeys: ["model", "input"] },
);
const respResponse = fc.record(
  {
    id: str,
    object: fc.constant("response"),
    created_at: fc.nat(),
    model: str,
    status: fc.constantFrom("completed", "incomplete"),
    output: fc.array(respOutputItem, { maxLength: 4 }),
    usage: respUsage,
    previous_response_id: fc.oneof(str, fc.constant(null)),
  },
  { requiredKeys: ["object", "output"] },
);
const respStream = fc
  .tuple(
    respResponse,
    fc.array(
      fc.oneof(
        fc.record({ type: fc.constant("response.output_text.delta"), content_index: fc.nat(1), delta: str }),
        fc.record({ type: fc.constant("response.function_call_arguments.delta"), delta: fc.constantFrom("{", '"a":1', "}") }),
        fc.record({ type: fc.constant("response.reasoning_summary_text.delta"), summary_index: fc.nat(1), delta: str }),
      ),
      { maxLength: 4 },
    ),
    fc.boolean(),
  )
  .map(([final, deltas, complete]) => [
    { type: "response.created", sequence_number: 0, response: { ...final, status: "in_progress", output: [], usage: null } },
    ...final.output.flatMap((item, i) => [
      { type: "response.output_item.added", output_index: i, item: { ...item, status: "in_progress" } },
      ...deltas.map((d) => ({ ...d, output_index: i, item_id: "x" })),
      { type: "response.output_item.done", output_index: i, item },
    ]),
    ...(complete ? [{ type: "response.completed", response: final }] : []),
  ]);
// Gemini shapes (@google/genai types): parts, contents, responses, chunk streams.
const gName = fc.constantFrom("get_weather", "get_time", "f");
const geminiPart = fc.oneof(
  fc.record({ text: str, thought: fc.boolean(), thoughtSignature: str }, { requiredKeys: ["text"] }),
  fc.record(
    {
      inlineData: fc.record(
        { mimeType: fc.constantFrom("image/png", "audio/wav", "video/mp4", "application/pdf"), data: str, displayName: str },
        { requiredKeys: ["data"] },
      ),
      videoMetadata: fc.record({ startOffset: fc.constant("1s") }),
    },
    { requiredKeys: ["inlineData"] },
  ),
  fc.record({
    fileData: fc.record(
      { fileUri: fc.constant("https://x.test/f"), mimeType: fc.constantFrom("image/png", "video/*", "text/plain") },
      { requiredKeys: ["fileUri"] },
    ),
  }),
  fc.record(
    {
      functionCall: fc.record(
        { id: ids, name: gName, args: fc.dictionary(str, fc.jsonValue(), { maxKeys: 2 }) },
        { requiredKeys: ["name"] },
      ),
      thoughtSignature: str,
    },
    { requiredKeys: ["functionCall"] },
  ),
  fc.record({
    functionResponse: fc.record(
      {
        id: ids,
        name: gName,
        response: fc.oneof(fc.record({ output: fc.jsonValue() }), fc.record({ error: fc.jsonValue() })),
        parts: fc.array(fc.record({ inlineData: fc.record({ mimeType: fc.constant("image/png"), data: str }) }), { maxLength: 1 }),
      },
      { requiredKeys: ["name"] },
    ),
  }),
  fc.record({ executableCode: fc.record({ id: ids, language: fc.constant("PYTHON"), code: str }, { requiredKeys: ["code"] }) }),
  fc.record({
    codeExecutionResult: fc.record(
      { id: ids, outcome: fc.constantFrom("OUTCOME_OK", "OUTCOME_FAILED"), output: str },
      { requiredKeys: ["outcome"] },
    ),
  }),
  fc.record({
    toolCall: fc.record({ id: ids, toolType: fc.constant("GOOGLE_SEARCH_WEB"), args: fc.constant({ q: "x" }) }, { requiredKeys: [] }),
  }),
  fc.record({
    toolResponse: fc.record({ id: ids, toolType: fc.constant("GOOGLE_SEARCH_WEB"), response: fc.jsonValue() }, { requiredKeys: [] }),
  }),
  fc.record({ brandNewPart: fc.jsonValue() }),
  str,
);
const geminiContent = fc.record(
  { role: fc.constantFrom("user", "model", "function"), parts: fc.array(geminiPart, { maxLength: 4 }) },
  { requiredKeys: ["parts"] },
);
const geminiRequest = fc.oneof(
  fc.record(
    {
      model: fc.constantFrom("gemini-2.5-flash", "models/gemini-2.0-flash"),
      contents: fc.array(geminiContent, { maxLength: 4 }),
      systemInstruction: fc.record({ parts: fc.array(geminiPart, { maxLength: 2 }) }),
      generationConfig: fc.record({ temperature: fc.double({ min: 0, max: 2, noNaN: true }) }),
    },
    { requiredKeys: ["contents"] },
  ),
  fc.record({
    model: fc.constant("gemini-2.5-flash"),
    contents: fc.oneof(str, geminiPart, fc.array(geminiPart, { maxLength: 3 }), geminiContent),
    config: fc.record(
      { systemInstruction: fc.oneof(str, geminiPart), temperature: fc.double({ min: 0, max: 2, noNaN: true }) },
      { requiredKeys: [] },
    ),
  }),
);
const geminiUsage = fc.record(
  {
    promptTokenCount: fc.nat(1000),
    candidatesTokenCount: fc.nat(1000),
    thoughtsTokenCount: fc.nat(1000),
    cachedContentTokenCount: fc.nat(100),
    toolUsePromptTokenCount: fc.nat(100),
    totalTokenCount: fc.nat(3000),
    promptTokensDetails: fc.constant([{ modality: "TEXT", tokenCount: 1 }]),
  },
  { requiredKeys: [] },
);
const geminiResponse = fc.record(
  {
    candidates: fc.array(
      fc.record(
        {
          content: fc.record({ role: fc.constant("model"), parts: fc.array(geminiPart, { maxLength: 4 }) }),
          finishReason: fc.constantFrom("STOP", "MAX_TOKENS", "SAFETY"),
          index: fc.nat(2),
          safetyRatings: fc.constant([]),
        },
        { requiredKeys: ["content"] },
      ),
      { maxLength: 2 },
    ),
    usageMetadata: geminiUsage,
    modelVersion: fc.constantFrom("gemini-2.5-flash", "models/gemini-2.5-pro"),
    responseId: str,
    promptFeedback: fc.record({ blockReason: fc.constant("SAFETY") }),
  },
  { requiredKeys: ["candidates"] },
);
const geminiStream = fc.array(geminiResponse, { minLength: 1, maxLength: 4 });
// Bedrock Converse shapes (@aws-sdk/client-bedrock-runtime types): blocks, requests, responses, events.
const bytes = fc.oneof(fc.constantFrom("iVBORw0KGgo=", "/9j/4AAQ", "JVBERi0="), fc.uint8Array({ maxLength: 8 }));
const converseMedia = (formats: string[]) =>
  fc.record({
    format: fc.constantFrom(...formats),
    source: fc.oneof(
      fc.record({ bytes }),
      fc.record({ s3Location: fc.record({ uri: fc.constant("s3://b/k"), bucketOwner: str }, { requiredKeys: ["uri"] }) }),
    ),
  });
const converseToolResultPart = fc.oneof(
  fc.record({ text: str }),
  fc.record({ json: fc.jsonValue() }),
  fc.record({ image: converseMedia(["png", "jpeg"]) }),
  fc.record({
    document: fc.record({
      format: fc.constantFrom("pdf", "txt"),
      name: str,
      source: fc.oneof(fc.record({ bytes }), fc.record({ text: str })),
    }),
  }),
);
const converseBlock = fc.oneof(
  fc.record({ text: str }),
  fc.record({ image: converseMedia(["png", "jpeg", "gif", "webp", "avif"]) }),
  fc.record({
    document: fc.record({
      format: fc.constantFrom("pdf", "csv", "md", "docx"),
      name: str,
      source: fc.oneof(
        fc.record({ bytes }),
        fc.record({ text: str }),
        fc.record({ content: fc.array(fc.oneof(fc.record({ text: str }), fc.record({ other: str })), { maxLength: 2 }) }),
      ),
    }),
  }),
  fc.record({ video: converseMedia(["mp4", "mov", "mpg", "three_gp"]) }),
  fc.record({ audio: converseMedia(["mp3", "wav", "opus"]) }),
  fc.record({
    toolUse: fc.record(
      {
        toolUseId: ids,
        name: str,
        input: fc.oneof(fc.dictionary(str, fc.jsonValue()), fc.constantFrom("{}", '{"a":1}', "{bad", "")),
        type: fc.constantFrom("server_tool_use", undefined),
      },
      { requiredKeys: ["toolUseId", "name", "input"] },
    ),
  }),
  fc.record({
    reasoningContent: fc.oneof(
      fc.record({ reasoningText: fc.record({ text: str, signature: str }, { requiredKeys: ["text"] }) }),
      fc.record({ redactedContent: bytes }),
    ),
  }),
  fc.record({
    citationsContent: fc.record({
      content: fc.array(fc.record({ text: str }), { maxLength: 2 }),
      citations: fc.array(fc.record({ title: str, source: str }), { maxLength: 2 }),
    }),
  }),
  fc.record({
    guardContent: fc.oneof(
      fc.record({
        text: fc.record({ text: str, qualifiers: fc.array(fc.constantFrom("query", "guard_content")) }, { requiredKeys: ["text"] }),
      }),
      fc.record({ image: converseMedia(["png"]) }),
    ),
  }),
  fc.record({ cachePoint: fc.record({ type: fc.constant("default") }) }),
  fc.record({ searchResult: fc.record({ source: str, title: str, content: fc.array(fc.record({ text: str }), { maxLength: 2 }) }) }),
  fc.record({ $unknown: fc.tuple(str, fc.jsonValue()) }),
);
const converseUserBlock = fc.oneof(
  converseBlock,
  fc.record({
    toolResult: fc.record(
      { toolUseId: ids, content: fc.array(converseToolResultPart, { maxLength: 3 }), status: fc.constantFrom("success", "error") },
      { requiredKeys: ["toolUseId", "content"] },
    ),
  }),
);
const converseUsage = fc.record(
  {
    inputTokens: fc.nat(1000),
    outputTokens: fc.nat(1000),
    totalTokens: fc.nat(3000),
    cacheReadInputTokens: fc.nat(1000),
    cacheWriteInputTokens: fc.nat(1000),
  },
  { requiredKeys: ["inputTokens", "outputTokens"] },
);
const converseRequest = fc.record(
  {
    modelId: fc.constantFrom(
      "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
      "amazon.nova-pro-v1:0",
      "arn:aws:bedrock:us-east-1:1:prompt/p:1",
    ),
    system: fc.array(fc.oneof(fc.record({ text: str }), fc.record({ cachePoint: fc.record({ type: fc.constant("default") }) })), {
      maxLength: 3,
    }),
    messages: fc.array(
      fc.oneof(
        fc.record({ role: fc.constant("user"), content: fc.array(converseUserBlock, { maxLength: 3 }) }),
        fc.record({ role: fc.constant("assistant"), content: fc.array(converseBlock, { maxLength: 3 }) }),
      ),
      { maxLength: 4 },
    ),
    inferenceConfig: fc.record({ maxTokens: fc.nat(4096), temperature: fc.double({ min: 0, max: 1, noNaN: true }) }),
  },
  { requiredKeys: ["modelId", "messages"] },
);
const converseResponse = fc.record({
  output: fc.record({ message: fc.record({ role: fc.constant("assistant"), content: fc.array(converseBlock, { maxLength: 3 }) }) }),
  stopReason: fc.constantFrom("end_turn", "tool_use"),
  usage: converseUsage,
  metrics: fc.record({ latencyMs: fc.nat() }),
});
const converseDelta = fc.oneof(
  fc.record({ text: str }),
  fc.record({ toolUse: fc.record({ input: fc.constantFrom("{", '"a":1', "}") }) }),
  fc.record({ reasoningContent: fc.oneof(fc.record({ text: str }), fc.record({ signature: str }), fc.record({ redactedContent: bytes })) }),
  fc.record({ citation: fc.record({ title: str }) }),
);
const converseStream = fc
  .tuple(
    fc.array(fc.tuple(fc.constantFrom("text", "toolUse"), fc.array(converseDelta, { maxLength: 3 })), { maxLength: 3 }),
    converseUsage,
    fc.boolean(),
  )
  .map(([blocks, usage, complete]) => [
    { messageStart: { role: "assistant" } },
    ...blocks.flatMap(([kind, deltas], i) => [
      ...(kind === "toolUse"
        ? [{ contentBlockStart: { start: { toolUse: { toolUseId: `t${i}`, name: "f" } }, contentBlockIndex: i } }]
        : []),
      ...deltas.map((delta) => ({ contentBlockDelta: { delta, contentBlockIndex: i } })),
      { contentBlockStop: { contentBlockIndex: i } },
    ]),
    ...(complete
      ? [{ messageStop: { stopReason: "end_turn" } }, { metadata: { usage, metrics: { latencyMs: 5 } } }]
      : [{ throttlingException: { message: "slow down" } }]),
  ]);
// Legacy completions (openai 6.x types): every prompt type, echo/suffix/n, responses and chunk streams.
const complPrompt = fc.oneof(
  str,
  fc.array(str, { minLength: 1, maxLength: 3 }),
  fc.array(fc.nat(60000), { minLength: 1, maxLength: 4 }),
  fc.array(fc.array(fc.nat(60000), { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 3 }),
);
const complRequest = fc.record(
  {
    model: fc.constantFrom("gpt-3.5-turbo-instruct", "davinci-002"),
    prompt: complPrompt,
    suffix: str,
    echo: fc.boolean(),
    n: fc.integer({ min: 1, max: 3 }),
    logprobs: fc.nat(5),
    max_tokens: fc.nat(100),
    stop: fc.oneof(str, fc.array(str, { maxLength: 2 })),
  },
  { requiredKeys: ["model", "prompt"] },
);
const complChoice = fc.record({
  text: str,
  index: fc.nat(5),
  logprobs: fc.oneof(
    fc.constant(null),
    fc.record({
      tokens: fc.array(str, { maxLength: 2 }),
      token_logprobs: fc.array(fc.double({ max: 0, noNaN: true }), { maxLength: 2 }),
      text_offset: fc.array(fc.nat(), { maxLength: 2 }),
    }),
  ),
  finish_reason: fc.constantFrom("stop", "length", "content_filter"),
});
const complResponse = fc.record(
  {
    id: str,
    object: fc.constant("text_completion"),
    created: fc.nat(),
    model: str,
    system_fingerprint: str,
    choices: fc.array(complChoice, { maxLength: 3 }),
    usage,
  },
  { requiredKeys: ["object", "choices"] },
);
const complStream = fc
  .array(
    fc.oneof(
      fc.record({
        id: str,
        object: fc.constant("text_completion"),
        created: fc.nat(),
        model: str,
        choices: fc.array(complChoice, { minLength: 1, maxLength: 2 }),
      }),
      fc.record({ object: fc.constant("text_completion"), model: str, choices: fc.constant([]), usage }),
    ),
    { minLength: 1, maxLength: 5 },
  )
  .filter((s) => s.some((c) => c.choices.length > 0));
const nativeBlock = fc.oneof(
  fc.record({ type: fc.constant("text"), text: str }),
  fc.record({ type: fc.constant("tool_call"), id: ids, name: str, args: fc.constant({}) }),
  fc.record(
    { type: fc.constant("image"), url: fc.constant("https://x.test/a"), base64: str, mime_type: fc.constant("image/png") },
    { requiredKeys: ["type"] },
  ),
);
const nativeRecord = fc.oneof(
  fc.record({
    messages: fc.array(
      fc.record(
        {
          role: fc.constantFrom("system", "user", "assistant", "tool"),
          content: fc.oneof(str, fc.array(nativeBlock, { maxLength: 2 })),
          tool_call_id: ids,
        },
        { requiredKeys: ["role", "content"] },
      ),
      { maxLength: 4 },
    ),
  }),
  fc.record({ message: fc.record({ role: fc.constant("assistant"), content: fc.array(nativeBlock, { maxLength: 2 }) }) }),
);
// LangChain records with well-formed fields: standard blocks, provider blocks (the OpenAI and Anthropic shapes above), tool rounds.
const lcId = fc.constantFrom("call_1", "toolu_1", "c2");
const lcBlock = fc.oneof(
  fc.record({ type: fc.constant("text"), text: str, index: fc.nat(2) }, { requiredKeys: ["type", "text"] }),
  fc.record({ type: fc.constant("reasoning"), reasoning: str }),
  fc.record(
    {
      type: fc.constantFrom("image", "audio", "video", "file"),
      url: dataUrl,
      base64: fc.constant("iVBORw0KGgo="),
      mime_type: fc.constant("image/png"),
      file_id: str,
      data: fc.constant("AAAA"),
      mimeType: fc.constant("audio/wav"),
      fileId: str,
      id: str,
    },
    { requiredKeys: ["type"] },
  ),
  fc.record({
    type: fc.constantFrom("image", "audio", "file"),
    source_type: fc.constantFrom("url", "base64", "id", "text"),
    url: fc.constant("https://x.test/a"),
    data: fc.constant("AAAA"),
    id: str,
    text: str,
    mime_type: fc.constant("image/png"),
  }),
  fc.record({ type: fc.constant("text-plain"), text: str, mime_type: fc.constant("text/plain"), title: str }),
  fc.record({
    type: fc.constantFrom("tool_call", "tool_call_chunk"),
    id: lcId,
    name: str,
    args: fc.oneof(fc.dictionary(str, fc.jsonValue(), { maxKeys: 2 }), fc.constantFrom("{}", '{"a":1}', "{bad")),
  }),
  fc.record({ type: fc.constant("server_tool_call"), id: lcId, name: str, args: fc.constant({}) }),
  fc.record(
    {
      type: fc.constantFrom("server_tool_result", "server_tool_call_result"),
      tool_call_id: lcId,
      toolCallId: lcId,
      status: fc.constantFrom("success", "error", "pending"),
      output: fc.jsonValue(),
    },
    { requiredKeys: ["type", "status"] },
  ),
  fc.record({ type: fc.constantFrom("non_standard", "brand_new"), value: fc.jsonValue() }),
  openaiPart,
  anthropicBlock,
);
const lcContent = fc.oneof(str, fc.array(fc.oneof(lcBlock, str), { maxLength: 4 }));
const lcCall = fc.record({ name: str, args: fc.dictionary(str, fc.jsonValue(), { maxKeys: 2 }), id: lcId, type: fc.constant("tool_call") });
const lcUsage = fc.record(
  {
    input_tokens: fc.nat(1000),
    output_tokens: fc.nat(1000),
    total_tokens: fc.nat(2000),
    input_token_details: fc.record({ cache_read: fc.nat(10), audio: fc.nat(5) }, { requiredKeys: [] }),
    output_token_details: fc.record({ reasoning: fc.nat(10) }, { requiredKeys: [] }),
  },
  { requiredKeys: ["input_tokens", "output_tokens", "total_tokens"] },
);
const lcAi = fc.record(
  {
    content: lcContent,
    tool_calls: fc.array(lcCall, { maxLength: 2 }),
    invalid_tool_calls: fc.array(
      fc.record({ name: str, args: fc.constantFrom("{bad", "{}"), id: lcId, error: str, type: fc.constant("invalid_tool_call") }),
      { maxLength: 1 },
    ),
    tool_call_chunks: fc.array(
      fc.record({ name: str, args: fc.constantFrom('{"a":', "1}", ""), id: lcId, index: fc.nat(1), type: fc.constant("tool_call_chunk") }),
      { maxLength: 2 },
    ),
    usage_metadata: lcUsage,
    additional_kwargs: fc.record(
      { reasoning_content: str, function_call: fc.record({ name: fc.constantFrom("f", "g"), arguments: fc.constantFrom("{}", "") }) },
      { requiredKeys: [] },
    ),
    response_metadata: fc.record(
      { model_name: str, model_provider: fc.constantFrom("openai", "anthropic"), finish_reason: str },
      { requiredKeys: [] },
    ),
    id: str,
  },
  { requiredKeys: ["content"] },
);
const lcFieldsOf = (cls: string) =>
  cls.startsWith("AI")
    ? lcAi
    : cls === "ToolMessage"
      ? fc.record(
          { content: lcContent, tool_call_id: lcId, status: fc.constantFrom("success", "error"), artifact: fc.jsonValue() },
          { requiredKeys: ["content", "tool_call_id"] },
        )
      : cls === "ChatMessage"
        ? fc.record({ content: lcContent, role: fc.constantFrom("user", "assistant", "critic", "system", "tool", "function") })
        : cls === "FunctionMessage"
          ? fc.record({ content: str, name: fc.constantFrom("f", "g") })
          : fc.record({ content: lcContent, name: str }, { requiredKeys: ["content"] });
const TYPE_OF: Record<string, string> = {
  HumanMessage: "human",
  AIMessage: "ai",
  AIMessageChunk: "AIMessageChunk",
  SystemMessage: "system",
  ToolMessage: "tool",
  ChatMessage: "chat",
  FunctionMessage: "function",
};
const lcMessage = fc
  .constantFrom(...Object.keys(TYPE_OF))
  .chain((cls) =>
    lcFieldsOf(cls).chain((fields) =>
      fc.constantFrom<unknown>(
        { lc: 1, type: "constructor", id: ["langchain_core", "messages", cls], kwargs: fields },
        { lc: 1, type: "constructor", id: ["langchain", "schema", "messages", cls], kwargs: { ...fields, type: TYPE_OF[cls] } },
        { type: TYPE_OF[cls], data: fields },
        { ...fields, type: TYPE_OF[cls] },
      ),
    ),
  );
const lcGeneration = fc.oneof(
  fc.record({ text: str, message: lcMessage, generation_info: fc.record({ finish_reason: str }), type: fc.constant("ChatGeneration") }),
  fc.record({ text: str, type: fc.constant("Generation") }),
);
const lcOutputs = fc.record(
  {
    generations: fc.array(fc.array(lcGeneration, { minLength: 1, maxLength: 2 }), { minLength: 1, maxLength: 2 }),
    llm_output: fc.record({ token_usage: usage, model_name: str }, { requiredKeys: [] }),
    run: fc.constant(null),
    type: fc.constant("LLMResult"),
  },
  { requiredKeys: ["generations"] },
);
const lcInputs = fc.oneof(
  fc.record({ messages: fc.array(fc.array(lcMessage, { maxLength: 5 }), { minLength: 1, maxLength: 2 }) }),
  fc.record({ prompts: fc.array(str, { minLength: 1, maxLength: 2 }) }),
);
const langchainRecord = fc.oneof(
  lcInputs,
  lcOutputs,
  fc.record({ request: lcInputs, response: lcOutputs }),
  fc.array(lcMessage, { minLength: 1, maxLength: 4 }),
);
const accepted = fc.oneof(
  openaiRequest,
  openaiResponse,
  openaiStream,
  fc.record({ request: openaiRequest, response: fc.oneof(openaiResponse, openaiStream) }),
  anthropicRequest,
  anthropicResponse,
  anthropicStream,
  fc.record({ request: anthropicRequest, response: fc.oneof(anthropicResponse, anthropicStream) }),
  respRequest,
  respResponse,
  respStream,
  fc.record({ request: respRequest, response: fc.oneof(respResponse, respStream) }),
  geminiRequest,
  geminiResponse,
  geminiStream,
  fc.record({ request: geminiRequest, response: fc.oneof(geminiResponse, geminiStream) }),
  converseRequest,
  converseResponse,
  converseStream,
  fc.record({ request: converseRequest, response: fc.oneof(converseResponse, converseStream) }),
  complRequest,
  complResponse,
  complStream,
  fc.record({ request: complRequest, response: fc.oneof(complResponse, complStream) }),
  langchainRecord,
  nativeRecord,
  anyPayload,
);

function validOutput(run: () => NormalizedRecord): void {
  let out: NormalizedRecord;
  try {
    out = run();
  } catch (err) {
    if (err instanceof NormalizeError) return;
    throw err;
  }
  if (out.inputs) expect(validate(out.inputs.messages)).toEqual([]);
  if (out.outputs) expect(validate(out.outputs.messages)).toEqual([]);
}

describe("whatever normalize accepts, validate accepts", () => {
  it("with auto-detection", () => {
    fc.assert(
      fc.property(accepted, (p) => validOutput(() => normalize(p))),
      { numRuns: 800 },
    );
  });
  for (const adapter of ADAPTERS) {
    it(`with --format ${adapter.name}`, () => {
      fc.assert(
        fc.property(accepted, (p) => validOutput(() => adapter.normalize(p))),
        { numRuns: 500 },
      );
    });
  }
});

describe("legacy completions payloads", () => {
  it("are auto-detected as openai-completions, never as another format, and normalize to valid messages", () => {
    const payloads = fc.oneof(
      complRequest,
      complResponse,
      complStream,
      fc.record({ request: complRequest, response: fc.oneof(complResponse, complStream) }),
    );
    fc.assert(
      fc.property(payloads, (p) => {
        const out = normalize(p);
        expect(out.format).toBe("openai-completions");
        if (out.inputs) expect(validate(out.inputs.messages)).toEqual([]);
        if (out.outputs) expect(validate(out.outputs.messages)).toEqual([]);
      }),
      { numRuns: 400 },
    );
  });
});

describe("LangChain records", () => {
  it("are claimed by the langchain adapter alone, and what they normalize to is valid", () => {
    fc.assert(
      fc.property(langchainRecord, (p) => {
        expect(ADAPTERS.filter((a) => a.detect(p) !== null).map((a) => a.name)).toEqual(["langchain"]);
        validOutput(() => {
          const out = normalize(p);
          expect(out.format).toBe("langchain");
          return out;
        });
      }),
      { numRuns: 400 },
    );
  });
});
