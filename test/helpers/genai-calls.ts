/**
 * The four OpenAI calls the official-instrumentation tests make (chat,
 * streamed chat, a tool round, a Responses call), scripted on the replay
 * server, and how their runs' native messages are compared.
 */
import type OpenAI from "openai";
import type { ReplayServer } from "./replay-server.js";
import { fixture } from "./replay-server.js";

export type Call = { name: string; script: (vendor: ReplayServer) => void; run: (openai: OpenAI) => Promise<void> };

const tools = [
  {
    type: "function" as const,
    function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } },
  },
];

const toolCompletion = () => ({
  ...fixture("openai-completion.json"),
  id: "chatcmpl-tool",
  choices: [
    {
      index: 0,
      message: {
        role: "assistant",
        content: null,
        refusal: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }],
      },
      finish_reason: "tool_calls",
      logprobs: null,
    },
  ],
});

export const CALLS: readonly Call[] = [
  {
    name: "chat",
    script: (v) => v.push({ json: fixture("openai-completion.json") }),
    run: async (openai) => {
      await openai.chat.completions.create({
        model: "gpt-4o",
        messages: [
          { role: "system", content: "Be terse." },
          { role: "user", content: "Weather in Paris?" },
        ],
      });
    },
  },
  {
    name: "streamed chat",
    script: (v) => v.push({ sse: [...fixture("openai-stream.json"), fixture("openai-stream-usage-chunk.json")], delayMs: 2 }),
    run: async (openai) => {
      const stream = await openai.chat.completions.create({
        model: "gpt-4o-mini",
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: "user", content: "Say hello" }],
      });
      for await (const _ of stream) void _;
    },
  },
  {
    name: "tool round",
    script: (v) => v.push({ json: toolCompletion() }, { json: fixture("openai-completion.json") }),
    run: async (openai) => {
      const ask: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: "user", content: "Weather in Paris?" }];
      const first = await openai.chat.completions.create({ model: "gpt-4o", messages: ask, tools });
      const call = first.choices[0]!.message.tool_calls![0]!;
      await openai.chat.completions.create({
        model: "gpt-4o",
        tools,
        messages: [
          ...ask,
          { role: "assistant", content: null, tool_calls: first.choices[0]!.message.tool_calls },
          { role: "tool", tool_call_id: call.id, content: "18C and rainy" },
        ],
      });
    },
  },
  {
    name: "Responses call",
    script: (v) => v.push({ json: fixture("openai-response.json") }),
    run: async (openai) => {
      await openai.responses.create({
        model: "gpt-4.1",
        instructions: "Be terse.",
        input: [{ role: "user", content: "Weather in Paris?" }],
      });
    },
  },
];

type Msg = { role: string; content: unknown[]; tool_call_id?: string; usage_metadata?: Record<string, unknown> };

/**
 * What an instrumentation can record of a message: role, content and the
 * tool call it answers. Vendor extras (response ids, fingerprints) and a
 * text's citations (`annotations`) never reach the log events; usage is
 * compared as the three counts.
 */
export function comparable(messages: unknown): unknown[] {
  return ((messages ?? []) as Msg[]).map((m) => {
    const out: Record<string, unknown> = { role: m.role, content: m.content.map((b) => strip(b as Record<string, unknown>)) };
    if (m.tool_call_id) out.tool_call_id = m.tool_call_id;
    if (m.usage_metadata)
      out.usage = {
        input_tokens: m.usage_metadata.input_tokens,
        output_tokens: m.usage_metadata.output_tokens,
        total_tokens: m.usage_metadata.total_tokens,
      };
    return out;
  });
}

function strip(block: Record<string, unknown>): Record<string, unknown> {
  const { extras: _extras, annotations: _annotations, ...rest } = block;
  return rest;
}
