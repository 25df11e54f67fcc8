/**
 * The peer of benchmarks/normalize.ts: the same records through @langchain/core's
 * messages and v1 block translators, built as the LangChain provider packages
 * build them (tool calls parsed, usage set; a stream is one AIMessageChunk per
 * chunk/event, concatenated), then read through `.contentBlocks`.
 */
import { AIMessage, AIMessageChunk, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import type { CorpusRecord } from "./corpus.js";

type Any = Record<string, any>;

const openaiCalls = (m: Any) => (m.tool_calls ?? []).map((c: Any) => ({ id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments || "{}"), type: "tool_call" as const }));

function lcOpenAIRequest(req: Any, out: unknown[]): void {
  for (const m of req.messages as Any[]) {
    if (m.role === "system" || m.role === "developer") out.push(new SystemMessage({ content: m.content }).contentBlocks);
    else if (m.role === "user") out.push(new HumanMessage({ content: m.content }).contentBlocks);
    else if (m.role === "tool") out.push(new ToolMessage({ content: m.content, tool_call_id: m.tool_call_id }).contentBlocks);
    else out.push(new AIMessage({ content: m.content ?? "", tool_calls: openaiCalls(m), response_metadata: { model_provider: "openai" } }).contentBlocks);
  }
}

const openaiUsage = (u: Any) => ({ input_tokens: u.prompt_tokens, output_tokens: u.completion_tokens, total_tokens: u.total_tokens, input_token_details: { cache_read: u.prompt_tokens_details?.cached_tokens }, output_token_details: { reasoning: u.completion_tokens_details?.reasoning_tokens } });

export function lcOpenAI(rec: CorpusRecord): unknown[] {
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
        tool_call_chunks: (d?.tool_calls ?? []).map((t: Any) => ({ index: t.index, id: t.id, name: t.function?.name, args: t.function?.arguments ?? "", type: "tool_call_chunk" as const })),
        response_metadata: { model_provider: "openai", model_name: chunk.model, finish_reason: chunk.choices[0]?.finish_reason ?? undefined },
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
  return { input_tokens: input, output_tokens: u.output_tokens, total_tokens: input + u.output_tokens, input_token_details: { cache_read: u.cache_read_input_tokens, cache_creation: u.cache_creation_input_tokens } };
};

export function lcAnthropic(rec: CorpusRecord): unknown[] {
  const req = rec.payload.request as Any;
  const out: unknown[] = [new SystemMessage({ content: req.system }).contentBlocks];
  for (const m of req.messages as Any[]) {
    if (m.role === "user") {
      if (Array.isArray(m.content) && m.content[0]?.type === "tool_result") {
        for (const b of m.content) out.push(new ToolMessage({ content: b.content, tool_call_id: b.tool_use_id }).contentBlocks);
      } else out.push(new HumanMessage({ content: m.content }).contentBlocks);
    } else {
      const tool_calls = (Array.isArray(m.content) ? m.content : []).filter((b: Any) => b.type === "tool_use").map((b: Any) => ({ id: b.id, name: b.name, args: b.input, type: "tool_call" as const }));
      out.push(new AIMessage({ content: m.content, tool_calls, response_metadata: { model_provider: "anthropic" } }).contentBlocks);
    }
  }
  const res = rec.payload.response as Any;
  if (Array.isArray(res)) {
    // langchain-anthropic: one AIMessageChunk per event, concatenated.
    let acc: AIMessageChunk | undefined;
    for (const e of res) {
      let c: AIMessageChunk | undefined;
      if (e.type === "message_start") c = new AIMessageChunk({ content: "", response_metadata: { model_provider: "anthropic", model_name: e.message.model }, usage_metadata: anthropicUsage(e.message.usage) });
      else if (e.type === "content_block_start" && e.content_block.type === "tool_use") c = new AIMessageChunk({ content: "", tool_call_chunks: [{ index: e.index, id: e.content_block.id, name: e.content_block.name, args: "", type: "tool_call_chunk" }], response_metadata: { model_provider: "anthropic" } });
      else if (e.type === "content_block_delta" && e.delta.type === "text_delta") c = new AIMessageChunk({ content: e.delta.text, response_metadata: { model_provider: "anthropic" } });
      else if (e.type === "content_block_delta" && e.delta.type === "input_json_delta") c = new AIMessageChunk({ content: "", tool_call_chunks: [{ index: e.index, args: e.delta.partial_json, type: "tool_call_chunk" }], response_metadata: { model_provider: "anthropic" } });
      else if (e.type === "message_delta") c = new AIMessageChunk({ content: "", response_metadata: { model_provider: "anthropic", stop_reason: e.delta.stop_reason } });
      if (c) acc = acc ? acc.concat(c) : c;
    }
    out.push(acc!.contentBlocks);
    return out;
  }
  const tool_calls = res.content.filter((b: Any) => b.type === "tool_use").map((b: Any) => ({ id: b.id, name: b.name, args: b.input, type: "tool_call" as const }));
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
