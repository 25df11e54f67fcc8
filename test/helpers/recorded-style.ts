/**
 * fast-check generators of recorded-style vendor streams: a final reply is
 * drawn first (text, tool calls with JSON arguments, reasoning, ...), then cut
 * into the event sequence the vendor sends for it, with deltas split at
 * arbitrary points, so every prefix is a stream a cancelled call could leave.
 */
import fc from "fast-check";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import type { ResponseStreamEvent } from "openai/resources/responses/responses";
import type { MessageStreamEvent } from "@anthropic-ai/sdk/resources/messages";

/** A text and where it is cut into deltas. */
const pieces = fc.array(fc.string({ maxLength: 6 }), { minLength: 1, maxLength: 4 });
const jsonArgs = fc
  .tuple(
    fc.dictionary(fc.string({ minLength: 1, maxLength: 5 }), fc.oneof(fc.string({ maxLength: 5 }), fc.integer(), fc.boolean()), {
      maxKeys: 3,
    }),
    fc.array(fc.nat(), { maxLength: 4 }),
  )
  .map(([obj, cuts]) => split(JSON.stringify(obj), cuts));
const name = fc.constantFrom("get_weather", "search", "lookup_order");

function split(s: string, cuts: number[]): string[] {
  const at = [...new Set(cuts.map((c) => c % (s.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let from = 0;
  for (const c of at) {
    out.push(s.slice(from, c));
    from = c;
  }
  out.push(s.slice(from));
  return out;
}

const chatReply = fc.record({
  text: fc.option(pieces, { nil: undefined }),
  refusal: fc.option(pieces, { nil: undefined }),
  tools: fc.array(fc.tuple(name, jsonArgs), { maxLength: 2 }),
  usage: fc.boolean(),
});

export const chatStream = chatReply.map(({ text, refusal, tools, usage }) => {
  const base = { id: "chatcmpl-gen", object: "chat.completion.chunk" as const, created: 1763800001, model: "gpt-4o-mini-2024-07-18" };
  const chunk = (
    delta: ChatCompletionChunk.Choice.Delta,
    finish: ChatCompletionChunk.Choice["finish_reason"] = null,
  ): ChatCompletionChunk => ({ ...base, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }] });
  const out: ChatCompletionChunk[] = [chunk({ role: "assistant", content: "" })];
  for (const p of text ?? []) out.push(chunk({ content: p }));
  for (const p of refusal ?? []) out.push(chunk({ refusal: p }));
  tools.forEach(([fn, args], j) => {
    out.push(chunk({ tool_calls: [{ index: j, id: `call_${j}`, type: "function", function: { name: fn, arguments: "" } }] }));
    for (const p of args) out.push(chunk({ tool_calls: [{ index: j, function: { arguments: p } }] }));
  });
  out.push(chunk({}, tools.length ? "tool_calls" : "stop"));
  if (usage)
    out.push({
      ...base,
      choices: [],
      usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19, prompt_tokens_details: { cached_tokens: 4 } },
    });
  return out;
});

const block = fc.oneof(
  pieces.map((t) => ({ kind: "text" as const, t })),
  fc.tuple(name, jsonArgs).map(([n, a]) => ({ kind: "tool_use" as const, n, a })),
  fc.tuple(pieces, fc.string({ minLength: 1, maxLength: 8 })).map(([t, sig]) => ({ kind: "thinking" as const, t, sig })),
);

export const messagesStream = fc
  .tuple(fc.array(block, { maxLength: 3 }), fc.constantFrom("end_turn", "tool_use", "max_tokens"))
  .map(([blocks, stop]) => {
    const out: MessageStreamEvent[] = [
      {
        type: "message_start",
        message: {
          id: "msg_gen",
          type: "message",
          role: "assistant",
          model: "claude-sonnet-4-5",
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 25, output_tokens: 1, cache_read_input_tokens: 3, cache_creation_input_tokens: 0 },
        } as never,
      },
    ];
    blocks.forEach((b, index) => {
      if (b.kind === "text") {
        out.push({ type: "content_block_start", index, content_block: { type: "text", text: "", citations: null } });
        for (const p of b.t) out.push({ type: "content_block_delta", index, delta: { type: "text_delta", text: p } });
      } else if (b.kind === "tool_use") {
        out.push({
          type: "content_block_start",
          index,
          content_block: { type: "tool_use", id: `toolu_${index}`, name: b.n, input: {} } as never,
        });
        for (const p of b.a) out.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: p } });
      } else {
        out.push({ type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } });
        for (const p of b.t) out.push({ type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: p } });
        out.push({ type: "content_block_delta", index, delta: { type: "signature_delta", signature: b.sig } });
      }
      out.push({ type: "content_block_stop", index });
    });
    out.push({ type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 40 } } as never);
    out.push({ type: "message_stop" });
    return out;
  });

const item = fc.oneof(
  fc.tuple(pieces, fc.boolean()).map(([t, cite]) => ({ kind: "message" as const, t, cite })),
  fc.tuple(name, jsonArgs).map(([n, a]) => ({ kind: "function_call" as const, n, a })),
  pieces.map((t) => ({ kind: "reasoning" as const, t })),
  pieces.map((t) => ({ kind: "code_interpreter_call" as const, t })),
  fc.tuple(name, jsonArgs).map(([n, a]) => ({ kind: "mcp_call" as const, n, a })),
);

export const responsesStream = fc.array(item, { maxLength: 3 }).map((items) => {
  let seq = 0;
  const out: ResponseStreamEvent[] = [];
  const push = (e: Record<string, unknown>) => out.push({ ...e, sequence_number: seq++ } as unknown as ResponseStreamEvent);
  const response = (status: string, output: unknown[], usage: unknown) => ({
    id: "resp_gen",
    object: "response",
    created_at: 1741290958,
    status,
    error: null,
    incomplete_details: null,
    instructions: null,
    model: "gpt-4.1-2025-04-14",
    output,
    parallel_tool_calls: true,
    tool_choice: "auto",
    tools: [],
    usage,
    metadata: {},
  });
  push({ type: "response.created", response: response("in_progress", [], null) });
  push({ type: "response.in_progress", response: response("in_progress", [], null) });
  const finals: unknown[] = [];
  items.forEach((it, oi) => {
    const id = `${it.kind}_${oi}`;
    const at = { output_index: oi, item_id: id };
    if (it.kind === "message") {
      const text = it.t.join("");
      const annotation = { type: "url_citation", url: "https://example.com/a", title: "A", start_index: 0, end_index: text.length };
      push({
        type: "response.output_item.added",
        output_index: oi,
        item: { id, type: "message", status: "in_progress", role: "assistant", content: [] },
      });
      push({ type: "response.content_part.added", ...at, content_index: 0, part: { type: "output_text", text: "", annotations: [] } });
      for (const p of it.t) push({ type: "response.output_text.delta", ...at, content_index: 0, delta: p, logprobs: [] });
      if (it.cite) push({ type: "response.output_text.annotation.added", ...at, content_index: 0, annotation_index: 0, annotation });
      push({ type: "response.output_text.done", ...at, content_index: 0, text, logprobs: [] });
      const part = { type: "output_text", text, annotations: it.cite ? [annotation] : [] };
      push({ type: "response.content_part.done", ...at, content_index: 0, part });
      finals.push({ id, type: "message", status: "completed", role: "assistant", content: [part] });
    } else if (it.kind === "function_call" || it.kind === "mcp_call") {
      const args = it.a.join("");
      const ev = it.kind === "function_call" ? "function_call_arguments" : "mcp_call_arguments";
      const fields = it.kind === "function_call" ? { call_id: `call_${oi}`, name: it.n } : { name: it.n, server_label: "tools" };
      push({
        type: "response.output_item.added",
        output_index: oi,
        item: { id, type: it.kind, status: "in_progress", arguments: "", ...fields },
      });
      if (it.kind === "mcp_call") push({ type: "response.mcp_call.in_progress", ...at });
      for (const p of it.a) push({ type: `response.${ev}.delta`, ...at, delta: p });
      push({ type: `response.${ev}.done`, ...at, arguments: args });
      if (it.kind === "mcp_call") push({ type: "response.mcp_call.completed", ...at });
      finals.push({
        id,
        type: it.kind,
        status: "completed",
        arguments: args,
        ...fields,
        ...(it.kind === "mcp_call" ? { output: "ok" } : {}),
      });
    } else if (it.kind === "reasoning") {
      const text = it.t.join("");
      push({ type: "response.output_item.added", output_index: oi, item: { id, type: "reasoning", summary: [] } });
      push({ type: "response.reasoning_summary_part.added", ...at, summary_index: 0, part: { type: "summary_text", text: "" } });
      for (const p of it.t) push({ type: "response.reasoning_summary_text.delta", ...at, summary_index: 0, delta: p });
      push({ type: "response.reasoning_summary_text.done", ...at, summary_index: 0, text });
      push({ type: "response.reasoning_summary_part.done", ...at, summary_index: 0, part: { type: "summary_text", text } });
      finals.push({ id, type: "reasoning", summary: [{ type: "summary_text", text }] });
    } else {
      const code = it.t.join("");
      push({
        type: "response.output_item.added",
        output_index: oi,
        item: { id, type: "code_interpreter_call", status: "in_progress", code: "", container_id: "cntr_1", outputs: null },
      });
      push({ type: "response.code_interpreter_call.in_progress", ...at });
      for (const p of it.t) push({ type: "response.code_interpreter_call_code.delta", ...at, delta: p });
      push({ type: "response.code_interpreter_call_code.done", ...at, code });
      push({ type: "response.code_interpreter_call.interpreting", ...at });
      push({ type: "response.code_interpreter_call.completed", ...at });
      finals.push({
        id,
        type: "code_interpreter_call",
        status: "completed",
        code,
        container_id: "cntr_1",
        outputs: [{ type: "logs", logs: "2" }],
      });
    }
    push({ type: "response.output_item.done", output_index: oi, item: finals[oi] });
  });
  push({
    type: "response.completed",
    response: response("completed", finals, {
      input_tokens: 30,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 12,
      output_tokens_details: { reasoning_tokens: 4 },
      total_tokens: 42,
    }),
  });
  return out;
});

const word = fc.string({ minLength: 1, maxLength: 6 });
const geminiPart = fc.oneof(
  word.map((text) => ({ text })),
  word.map((text) => ({ text, thought: true })),
  fc.tuple(word, fc.string({ minLength: 4, maxLength: 12 })).map(([text, sig]) => ({ text, thoughtSignature: sig })),
  fc
    .tuple(name, fc.dictionary(word, fc.oneof(word, fc.integer()), { maxKeys: 2 }))
    .map(([n, args]) => ({ functionCall: { name: n, args } })),
  fc.base64String({ minLength: 4, maxLength: 12 }).map((data) => ({ inlineData: { mimeType: "image/png", data } })),
  word.map((code) => ({ executableCode: { language: "PYTHON", code } })),
  word.map((output) => ({ codeExecutionResult: { outcome: "OUTCOME_OK", output } })),
);

/** Gemini stream chunks: each carries the next parts of candidate 0 and the usage so far. */
export const geminiStream = fc.array(fc.array(geminiPart, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 5 }).map((chunks) =>
  chunks.map((parts, i) => {
    const last = i === chunks.length - 1;
    return {
      candidates: [{ content: { role: "model", parts }, index: 0, ...(last ? { finishReason: "STOP" } : {}) }],
      usageMetadata: { promptTokenCount: 17, candidatesTokenCount: 3 * (i + 1), totalTokenCount: 17 + 3 * (i + 1) },
      modelVersion: "gemini-2.5-flash",
      responseId: "resp-gen",
    };
  }),
);

const converseBlock = fc.oneof(
  pieces.map((t) => ({ kind: "text" as const, t })),
  fc.tuple(name, jsonArgs).map(([n, a]) => ({ kind: "toolUse" as const, n, a })),
  fc.tuple(pieces, fc.string({ minLength: 1, maxLength: 8 })).map(([t, sig]) => ({ kind: "reasoning" as const, t, sig })),
  fc.tuple(word, word).map(([k, v]) => ({ kind: "unknownStart" as const, k: `future${k}`, v })),
  fc.tuple(pieces, word, word).map(([t, k, v]) => ({ kind: "unknownDelta" as const, t, k: `future${k}`, v })),
);

/** ConverseStream events as the AWS SDK yields them, including members of its open unions this adapter does not know. */
export const converseStream = fc
  .tuple(fc.array(converseBlock, { maxLength: 3 }), fc.constantFrom("end_turn", "tool_use", "max_tokens"))
  .map(([blocks, stop]) => {
    const out: Record<string, unknown>[] = [{ messageStart: { role: "assistant" } }];
    const delta = (i: number, d: unknown) => out.push({ contentBlockDelta: { contentBlockIndex: i, delta: d } });
    blocks.forEach((b, i) => {
      if (b.kind === "text") for (const p of b.t) delta(i, { text: p });
      else if (b.kind === "toolUse") {
        out.push({ contentBlockStart: { contentBlockIndex: i, start: { toolUse: { toolUseId: `tooluse_${i}`, name: b.n } } } });
        for (const p of b.a) delta(i, { toolUse: { input: p } });
      } else if (b.kind === "reasoning") {
        for (const p of b.t) delta(i, { reasoningContent: { text: p } });
        delta(i, { reasoningContent: { signature: b.sig } });
      } else if (b.kind === "unknownStart") out.push({ contentBlockStart: { contentBlockIndex: i, start: { [b.k]: { value: b.v } } } });
      else {
        for (const p of b.t) delta(i, { text: p });
        delta(i, { [b.k]: { value: b.v } });
      }
      out.push({ contentBlockStop: { contentBlockIndex: i } });
    });
    out.push({ messageStop: { stopReason: stop } });
    out.push({ metadata: { usage: { inputTokens: 21, outputTokens: 9, totalTokens: 30 }, metrics: { latencyMs: 412 } } });
    return out;
  });

/** A Gemini body in proto spelling: every key snake_cased except inside function args and responses (the caller's data). */
export function protoSpelled(v: unknown, data = false): unknown {
  if (Array.isArray(v)) return v.map((e) => protoSpelled(e, data));
  if (data || v === null || typeof v !== "object") return v;
  return Object.fromEntries(
    Object.entries(v).map(([k, e]) => [
      k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`),
      protoSpelled(e, k === "args" || k === "response"),
    ]),
  );
}
