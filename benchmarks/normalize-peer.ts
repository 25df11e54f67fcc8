/**
 * The peer of benchmarks/normalize.ts: the same records through @langchain/core's
 * messages and v1 block translators, built as the LangChain provider packages
 * build them (tool calls parsed, usage set; a stream is one AIMessageChunk per
 * chunk/event, concatenated), then read through `.contentBlocks`.
 */
import { AIMessage, AIMessageChunk, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import type { CorpusRecord } from "./corpus.js";

type Any = Record<string, any>;
/** What a peer reads of a record: its {request, response} payload. */
type Rec = Pick<CorpusRecord, "payload">;

const openaiCalls = (m: Any) =>
  (m.tool_calls ?? []).map((c: Any) => ({
    id: c.id,
    name: c.function.name,
    args: JSON.parse(c.function.arguments || "{}"),
    type: "tool_call" as const,
  }));

function lcOpenAIRequest(req: Any, out: unknown[]): void {
  for (const m of req.messages as Any[]) {
    if (m.role === "system" || m.role === "developer") out.push(new SystemMessage({ content: m.content }).contentBlocks);
    else if (m.role === "user") out.push(new HumanMessage({ content: m.content }).contentBlocks);
    else if (m.role === "tool") out.push(new ToolMessage({ content: m.content, tool_call_id: m.tool_call_id }).contentBlocks);
    else
      out.push(
        new AIMessage({ content: m.content ?? "", tool_calls: openaiCalls(m), response_metadata: { model_provider: "openai" } })
          .contentBlocks,
      );
  }
}

const openaiUsage = (u: Any) => ({
  input_tokens: u.prompt_tokens,
  output_tokens: u.completion_tokens,
  total_tokens: u.total_tokens,
  input_token_details: { cache_read: u.prompt_tokens_details?.cached_tokens },
  output_token_details: { reasoning: u.completion_tokens_details?.reasoning_tokens },
});

export function lcOpenAI(rec: Rec): unknown[] {
  const out: unknown[] = [];
  lcOpenAIRequest(rec.payload.request, out);
  const res = rec.payload.response as Any;
  if (Array.isArray(res)) {
    // langchain-openai: one AIMessageChunk per delta, concatenated.
    let acc: AIMessageChunk | undefined;
    for (const chunk of res) {
      const d = chunk.choices[0]?.delta;
      const c = new AIMessageChunk({
        content: d?.content ?? "",
        tool_call_chunks: (d?.tool_calls ?? []).map((t: Any) => ({
          index: t.index,
          id: t.id,
          name: t.function?.name,
          args: t.function?.arguments ?? "",
          type: "tool_call_chunk" as const,
        })),
        response_metadata: {
          model_provider: "openai",
          model_name: chunk.model,
          finish_reason: chunk.choices[0]?.finish_reason ?? undefined,
        },
        ...(chunk.usage ? { usage_metadata: openaiUsage(chunk.usage) } : {}),
      });
      acc = acc ? acc.concat(c) : c;
    }
    out.push(acc!.contentBlocks);
    return out;
  }
  for (const ch of res.choices) {
    const m = ch.message;
    const msg = new AIMessage({
      content: m.content ?? "",
      tool_calls: openaiCalls(m),
      additional_kwargs: m.refusal ? { refusal: m.refusal } : {},
      response_metadata: { model_provider: "openai", model_name: res.model, finish_reason: ch.finish_reason },
      usage_metadata: openaiUsage(res.usage),
    });
    out.push(msg.contentBlocks);
  }
  return out;
}

const anthropicUsage = (u: Any) => {
  const input = u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0);
  return {
    input_tokens: input,
    output_tokens: u.output_tokens,
    total_tokens: input + u.output_tokens,
    input_token_details: { cache_read: u.cache_read_input_tokens, cache_creation: u.cache_creation_input_tokens },
  };
};

export function lcAnthropic(rec: Rec): unknown[] {
  const req = rec.payload.request as Any;
  const out: unknown[] = [new SystemMessage({ content: req.system }).contentBlocks];
  for (const m of req.messages as Any[]) {
    if (m.role === "user") {
      if (Array.isArray(m.content) && m.content[0]?.type === "tool_result") {
        for (const b of m.content) out.push(new ToolMessage({ content: b.content, tool_call_id: b.tool_use_id }).contentBlocks);
      } else out.push(new HumanMessage({ content: m.content }).contentBlocks);
    } else {
      const tool_calls = (Array.isArray(m.content) ? m.content : [])
        .filter((b: Any) => b.type === "tool_use")
        .map((b: Any) => ({ id: b.id, name: b.name, args: b.input, type: "tool_call" as const }));
      out.push(new AIMessage({ content: m.content, tool_calls, response_metadata: { model_provider: "anthropic" } }).contentBlocks);
    }
  }
  const res = rec.payload.response as Any;
  if (Array.isArray(res)) {
    // langchain-anthropic: one AIMessageChunk per event, concatenated.
    let acc: AIMessageChunk | undefined;
    for (const e of res) {
      let c: AIMessageChunk | undefined;
      if (e.type === "message_start")
        c = new AIMessageChunk({
          content: "",
          response_metadata: { model_provider: "anthropic", model_name: e.message.model },
          usage_metadata: anthropicUsage(e.message.usage),
        });
      else if (e.type === "content_block_start" && e.content_block.type === "tool_use")
        c = new AIMessageChunk({
          content: "",
          tool_call_chunks: [{ index: e.index, id: e.content_block.id, name: e.content_block.name, args: "", type: "tool_call_chunk" }],
          response_metadata: { model_provider: "anthropic" },
        });
      else if (e.type === "content_block_delta" && e.delta.type === "text_delta")
        c = new AIMessageChunk({ content: e.delta.text, response_metadata: { model_provider: "anthropic" } });
      else if (e.type === "content_block_delta" && e.delta.type === "input_json_delta")
        c = new AIMessageChunk({
          content: "",
          tool_call_chunks: [{ index: e.index, args: e.delta.partial_json, type: "tool_call_chunk" }],
          response_metadata: { model_provider: "anthropic" },
        });
      else if (e.type === "message_delta")
        c = new AIMessageChunk({ content: "", response_metadata: { model_provider: "anthropic", stop_reason: e.delta.stop_reason } });
      if (c) acc = acc ? acc.concat(c) : c;
    }
    out.push(acc!.contentBlocks);
    return out;
  }
  const tool_calls = res.content
    .filter((b: Any) => b.type === "tool_use")
    .map((b: Any) => ({ id: b.id, name: b.name, args: b.input, type: "tool_call" as const }));
  out.push(
    new AIMessage({
      content: res.content,
      tool_calls,
      response_metadata: { model_provider: "anthropic", model_name: res.model, stop_reason: res.stop_reason },
      usage_metadata: anthropicUsage(res.usage),
    }).contentBlocks,
  );
  return out;
}

// ---- OpenAI Responses (langchain-openai with the Responses API) ------------------------------
// Input items become the messages a LangChain app holds for them (content parts in the chat
// shapes HumanMessage reads); the response becomes one AIMessage as langchain-openai builds it:
// output_text parts as text content with annotations, function calls parsed into tool_calls,
// reasoning in additional_kwargs; a stream is one AIMessageChunk per content event.

const responsesUsage = (u: Any) => ({
  input_tokens: u.input_tokens,
  output_tokens: u.output_tokens,
  total_tokens: u.total_tokens,
  input_token_details: { cache_read: u.input_tokens_details?.cached_tokens },
  output_token_details: { reasoning: u.output_tokens_details?.reasoning_tokens },
});

function lcResponsesInput(req: Any, out: unknown[]): void {
  if (typeof req.instructions === "string") out.push(new SystemMessage({ content: req.instructions }).contentBlocks);
  const input = typeof req.input === "string" ? [{ role: "user", content: req.input }] : (req.input as Any[]);
  for (const item of input) {
    if (item.type === "function_call") {
      out.push(
        new AIMessage({
          content: [],
          tool_calls: [{ id: item.call_id, name: item.name, args: JSON.parse(item.arguments || "{}"), type: "tool_call" }],
          response_metadata: { model_provider: "openai" },
        }).contentBlocks,
      );
    } else if (item.type === "function_call_output") {
      out.push(new ToolMessage({ content: item.output, tool_call_id: item.call_id }).contentBlocks);
    } else if (item.role === "assistant") {
      out.push(
        new AIMessage({
          content: (item.content as Any[]).map((p) => ({ type: "text", text: p.text, annotations: p.annotations })),
          response_metadata: { model_provider: "openai" },
        }).contentBlocks,
      );
    } else if (item.role === "system" || item.role === "developer") {
      out.push(new SystemMessage({ content: item.content }).contentBlocks);
    } else {
      const content =
        typeof item.content === "string"
          ? item.content
          : (item.content as Any[]).map((p) =>
              p.type === "input_image"
                ? { type: "image_url", image_url: { url: p.image_url, detail: p.detail } }
                : { type: "text", text: p.text },
            );
      out.push(new HumanMessage({ content }).contentBlocks);
    }
  }
}

function responsesMessage(res: Any): AIMessage {
  const content: any[] = [];
  const tool_calls: any[] = [];
  const additional_kwargs: Any = {};
  for (const item of res.output as Any[]) {
    if (item.type === "message") {
      for (const p of item.content) {
        if (p.type === "output_text") content.push({ type: "text", text: p.text, annotations: p.annotations });
        else if (p.type === "refusal") additional_kwargs.refusal = p.refusal;
      }
    } else if (item.type === "function_call") {
      tool_calls.push({ id: item.call_id, name: item.name, args: JSON.parse(item.arguments || "{}"), type: "tool_call" });
      (additional_kwargs.__openai_function_call_ids__ ??= {})[item.call_id] = item.id;
    } else if (item.type === "reasoning") additional_kwargs.reasoning = item;
    else (additional_kwargs.tool_outputs ??= []).push(item);
  }
  return new AIMessage({
    id: res.id,
    content,
    tool_calls,
    additional_kwargs,
    response_metadata: {
      model_provider: "openai",
      model_name: res.model,
      id: res.id,
      status: res.status,
      created_at: res.created_at,
      object: res.object,
    },
    usage_metadata: res.usage ? responsesUsage(res.usage) : undefined,
  });
}

export function lcResponses(rec: Rec): unknown[] {
  const out: unknown[] = [];
  lcResponsesInput(rec.payload.request, out);
  const res = rec.payload.response as Any;
  if (!Array.isArray(res)) {
    out.push(responsesMessage(res).contentBlocks);
    return out;
  }
  let acc: AIMessageChunk | undefined;
  for (const e of res) {
    let c: AIMessageChunk | undefined;
    if (e.type === "response.output_text.delta")
      c = new AIMessageChunk({
        content: [{ type: "text", text: e.delta, index: e.content_index }],
        response_metadata: { model_provider: "openai" },
      });
    else if (e.type === "response.output_item.added" && e.item.type === "function_call")
      c = new AIMessageChunk({
        content: [],
        tool_call_chunks: [
          { type: "tool_call_chunk", id: e.item.call_id, name: e.item.name, args: e.item.arguments, index: e.output_index },
        ],
        response_metadata: { model_provider: "openai" },
      });
    else if (e.type === "response.function_call_arguments.delta")
      c = new AIMessageChunk({
        content: [],
        tool_call_chunks: [{ type: "tool_call_chunk", args: e.delta, index: e.output_index }],
        response_metadata: { model_provider: "openai" },
      });
    else if (e.type === "response.completed")
      c = new AIMessageChunk({
        content: [],
        usage_metadata: responsesUsage(e.response.usage),
        response_metadata: { model_provider: "openai", model_name: e.response.model, id: e.response.id, status: e.response.status },
      });
    if (c) acc = acc ? acc.concat(c) : c;
  }
  out.push(acc!.contentBlocks);
  return out;
}

// ---- Gemini (@langchain/google-genai) ----------------------------------------------------------
// The reply is an AIMessage as the provider package builds it: a lone text part as string
// content, otherwise the parts as typed blocks (text, inlineData, functionCall, thinking),
// function calls also as tool_calls; response_metadata.model_provider "google-genai" selects
// core's translator. Streamed chunks are one AIMessageChunk each, concatenated.

const geminiUsage = (u: Any) => ({
  input_tokens: u.promptTokenCount ?? 0,
  output_tokens: (u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0),
  total_tokens: u.totalTokenCount ?? 0,
  input_token_details: { cache_read: u.cachedContentTokenCount },
});

function geminiParts(parts: Any[]): { content: string | any[]; tool_calls: any[] } {
  const tool_calls: any[] = [];
  for (const p of parts)
    if (p.functionCall)
      tool_calls.push({
        id: p.functionCall.id ?? crypto.randomUUID(),
        name: p.functionCall.name,
        args: p.functionCall.args ?? {},
        type: "tool_call",
      });
  const only = parts.length === 1 ? parts[0]! : undefined;
  if (only && typeof only.text === "string" && !only.thought) return { content: only.text, tool_calls };
  const content = parts.map((p) => {
    if (typeof p.text === "string")
      return p.thought ? { type: "thinking", thinking: p.text, signature: p.thoughtSignature } : { type: "text", text: p.text };
    if (p.inlineData) return { type: "inlineData", inlineData: p.inlineData };
    if (p.functionCall) return { type: "functionCall", functionCall: p.functionCall };
    if (p.fileData) return { type: "fileData", fileData: p.fileData };
    return p;
  });
  return { content, tool_calls };
}

function geminiUserMessage(parts: Any[], out: unknown[]): void {
  const blocks: any[] = [];
  for (const p of parts) {
    if (p.functionResponse)
      out.push(
        new ToolMessage({
          content: JSON.stringify(p.functionResponse.response),
          tool_call_id: p.functionResponse.id ?? p.functionResponse.name,
          name: p.functionResponse.name,
        }).contentBlocks,
      );
    else if (typeof p.text === "string") blocks.push({ type: "text", text: p.text });
    else if (p.inlineData) blocks.push({ type: "image", mimeType: p.inlineData.mimeType, data: p.inlineData.data });
  }
  if (blocks.length)
    out.push(new HumanMessage({ content: blocks.length === 1 && blocks[0]!.type === "text" ? blocks[0]!.text : blocks }).contentBlocks);
}

function geminiChunk(res: Any): AIMessageChunk {
  const cand = res.candidates?.[0];
  const { content, tool_calls } = geminiParts(cand?.content?.parts ?? []);
  return new AIMessageChunk({
    content,
    tool_call_chunks: tool_calls.map((t, index) => ({
      type: "tool_call_chunk",
      id: t.id,
      name: t.name,
      args: JSON.stringify(t.args),
      index,
    })),
    response_metadata: { model_provider: "google-genai", finishReason: cand?.finishReason, model_name: res.modelVersion },
    ...(res.usageMetadata ? { usage_metadata: geminiUsage(res.usageMetadata) } : {}),
  });
}

export function lcGemini(rec: Rec): unknown[] {
  const req = rec.payload.request as Any;
  const out: unknown[] = [];
  const sys = req.config?.systemInstruction;
  if (sys !== undefined)
    out.push(
      new SystemMessage({ content: typeof sys === "string" ? sys : (sys.parts as Any[]).map((p) => p.text).join("") }).contentBlocks,
    );
  for (const c of req.contents as Any[]) {
    if (c.role === "model") {
      const { content, tool_calls } = geminiParts(c.parts);
      out.push(new AIMessage({ content, tool_calls, response_metadata: { model_provider: "google-genai" } }).contentBlocks);
    } else geminiUserMessage(c.parts, out);
  }
  const res = rec.payload.response as Any;
  if (Array.isArray(res)) {
    let acc: AIMessageChunk | undefined;
    for (const chunk of res) {
      const c = geminiChunk(chunk);
      acc = acc ? acc.concat(c) : c;
    }
    out.push(acc!.contentBlocks);
    return out;
  }
  const cand = res.candidates[0];
  const { content, tool_calls } = geminiParts(cand.content.parts);
  out.push(
    new AIMessage({
      content,
      tool_calls,
      response_metadata: { model_provider: "google-genai", finishReason: cand.finishReason, model_name: res.modelVersion },
      usage_metadata: geminiUsage(res.usageMetadata),
    }).contentBlocks,
  );
  return out;
}

// ---- Bedrock Converse (@langchain/aws ChatBedrockConverse) --------------------------------------
// Converse blocks become the content @langchain/aws gives an AIMessage (text blocks,
// reasoning_content, toolUse as tool_calls) with model_provider "bedrock-converse"; user
// turns hold text and image blocks, tool results are ToolMessages. A stream is one
// AIMessageChunk per text / tool-input delta, tool start and metadata event, concatenated.

const converseUsage = (u: Any) => ({
  input_tokens: u.inputTokens,
  output_tokens: u.outputTokens,
  total_tokens: u.totalTokens,
  input_token_details: { cache_read: u.cacheReadInputTokens, cache_creation: u.cacheWriteInputTokens },
});

function converseAI(content: Any[], extra: Any = {}): AIMessage {
  const blocks: any[] = [];
  const tool_calls: any[] = [];
  for (const b of content) {
    if (typeof b.text === "string") blocks.push({ type: "text", text: b.text });
    else if (b.toolUse) tool_calls.push({ id: b.toolUse.toolUseId, name: b.toolUse.name, args: b.toolUse.input, type: "tool_call" });
    else if (b.reasoningContent) blocks.push({ type: "reasoning_content", reasoningText: b.reasoningContent.reasoningText });
  }
  return new AIMessage({
    content: blocks,
    tool_calls,
    response_metadata: { model_provider: "bedrock-converse", ...extra.response_metadata },
    usage_metadata: extra.usage_metadata,
  });
}

export function lcConverse(rec: Rec): unknown[] {
  const req = rec.payload.request as Any;
  const out: unknown[] = [];
  if (Array.isArray(req.system)) out.push(new SystemMessage({ content: (req.system as Any[]).map((s) => s.text).join("") }).contentBlocks);
  for (const m of req.messages as Any[]) {
    if (m.role === "assistant") {
      out.push(converseAI(m.content).contentBlocks);
      continue;
    }
    const blocks: any[] = [];
    for (const b of m.content as Any[]) {
      if (b.toolResult) {
        const text = (b.toolResult.content as Any[]).map((c) => (typeof c.text === "string" ? c.text : JSON.stringify(c.json))).join("");
        out.push(
          new ToolMessage({
            content: text,
            tool_call_id: b.toolResult.toolUseId,
            status: b.toolResult.status === "error" ? "error" : "success",
          }).contentBlocks,
        );
      } else if (typeof b.text === "string") blocks.push({ type: "text", text: b.text });
      else if (b.image) blocks.push({ type: "image", mimeType: `image/${b.image.format}`, data: b.image.source.bytes });
    }
    if (blocks.length) out.push(new HumanMessage({ content: blocks }).contentBlocks);
  }
  const res = rec.payload.response as Any;
  if (Array.isArray(res)) {
    let acc: AIMessageChunk | undefined;
    for (const e of res) {
      let c: AIMessageChunk | undefined;
      if (e.contentBlockDelta?.delta?.text !== undefined)
        c = new AIMessageChunk({ content: e.contentBlockDelta.delta.text, response_metadata: { model_provider: "bedrock-converse" } });
      else if (e.contentBlockDelta?.delta?.toolUse)
        c = new AIMessageChunk({
          content: "",
          tool_call_chunks: [
            { type: "tool_call_chunk", args: e.contentBlockDelta.delta.toolUse.input, index: e.contentBlockDelta.contentBlockIndex },
          ],
          response_metadata: { model_provider: "bedrock-converse" },
        });
      else if (e.contentBlockStart?.start?.toolUse)
        c = new AIMessageChunk({
          content: "",
          tool_call_chunks: [
            {
              type: "tool_call_chunk",
              id: e.contentBlockStart.start.toolUse.toolUseId,
              name: e.contentBlockStart.start.toolUse.name,
              args: "",
              index: e.contentBlockStart.contentBlockIndex,
            },
          ],
          response_metadata: { model_provider: "bedrock-converse" },
        });
      else if (e.messageStop)
        c = new AIMessageChunk({
          content: "",
          response_metadata: { model_provider: "bedrock-converse", stopReason: e.messageStop.stopReason },
        });
      else if (e.metadata)
        c = new AIMessageChunk({
          content: "",
          usage_metadata: converseUsage(e.metadata.usage),
          response_metadata: { model_provider: "bedrock-converse", metrics: e.metadata.metrics },
        });
      if (c) acc = acc ? acc.concat(c) : c;
    }
    out.push(acc!.contentBlocks);
    return out;
  }
  out.push(
    converseAI(res.output.message.content, {
      response_metadata: { stopReason: res.stopReason, metrics: res.metrics },
      usage_metadata: converseUsage(res.usage),
    }).contentBlocks,
  );
  return out;
}
