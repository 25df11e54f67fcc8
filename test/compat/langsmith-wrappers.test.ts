/**
 * The `langsmith` SDK's own client wrappers (`langsmith/wrappers`: wrapOpenAI,
 * wrapAnthropic) around the real vendor clients, calling the loopback replay
 * vendors and logging into tracepipe serve: each stored llm run reads as
 * tracepipe's own wrapper records the same call (messages, usage and cost),
 * though the langsmith wrappers log the reply's usage as LangSmith's
 * `usage_metadata`, an Anthropic reply without its `type` and an Anthropic
 * `system` as a message.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { Client as LangSmith } from "langsmith";
import { wrapOpenAI as lsWrapOpenAI } from "langsmith/wrappers/openai";
import { wrapAnthropic as lsWrapAnthropic } from "langsmith/wrappers/anthropic";
import { wrapAnthropic, wrapOpenAI } from "../../src/tracing/index.js";
import { MemoryWriter } from "../../src/run/memory.js";
import type { Message } from "../../src/format/schema.js";
import { fixture, startReplayServer, type ReplayServer, type Scripted } from "../helpers/replay-server.js";
import { startCollector, type Running } from "../helpers/collector.js";

let vendor: ReplayServer;
let col: Running;
const saved = process.env.LANGSMITH_TRACING;
beforeAll(async () => {
  process.env.LANGSMITH_TRACING = "true";
  vendor = await startReplayServer();
  col = await startCollector();
});
afterAll(async () => {
  if (saved === undefined) delete process.env.LANGSMITH_TRACING;
  else process.env.LANGSMITH_TRACING = saved;
  await vendor.close();
  await col.close();
});

type Vendor = "openai" | "anthropic";
type Call = (client: any) => Promise<unknown>;

const openai = () => new OpenAI({ apiKey: "sk-test", baseURL: `${vendor.url}/v1`, maxRetries: 0 });
const anthropic = () => new Anthropic({ apiKey: "sk-test", baseURL: vendor.url, maxRetries: 0 });
const drain = async (s: AsyncIterable<unknown>) => {
  for await (const _ of s) void _;
};

/** Roles, blocks without extras, and the reply's counts and cost. */
function shape(messages: readonly Message[] | undefined) {
  return (messages ?? []).map((m) => ({
    role: m.role,
    content: m.content.map((b) => {
      const { extras: _extras, ...rest } = b as typeof b & { extras?: unknown };
      return rest;
    }),
    usage: m.usage_metadata && {
      input_tokens: m.usage_metadata.input_tokens,
      output_tokens: m.usage_metadata.output_tokens,
      total_tokens: m.usage_metadata.total_tokens,
      cache_read: m.usage_metadata.input_token_details?.cache_read ?? 0,
      cache_creation: m.usage_metadata.input_token_details?.cache_creation ?? 0,
      total_cost: m.usage_metadata.total_cost,
    },
  }));
}

/** The call through the langsmith wrapper into the collector, and through tracepipe's wrapper into memory. */
async function bothWays(project: string, kind: Vendor, reply: Scripted, call: Call) {
  const langsmith = new LangSmith({ apiUrl: col.url, apiKey: "local-key" });
  vendor.push(reply);
  const traced =
    kind === "openai"
      ? lsWrapOpenAI(openai(), { client: langsmith, project_name: project })
      : lsWrapAnthropic(anthropic(), { client: langsmith, project_name: project });
  await call(traced);
  await langsmith.awaitPendingTraceBatches();
  const [run, ...others] = (await col.collector.store.queryRuns({ project })).runs;
  expect(others).toEqual([]);

  const writer = new MemoryWriter();
  vendor.push(reply);
  await call(kind === "openai" ? wrapOpenAI(openai(), { client: writer }) : wrapAnthropic(anthropic(), { client: writer }));
  const [ref] = writer.list() as unknown as { inputs: { messages: Message[] }; outputs: { messages: Message[] } }[];
  return { run: run!, ref: ref! };
}

/** A streamed chat with usage, read to its end. */
async function streamedChat(c: any, settings: Record<string, unknown> = {}): Promise<unknown> {
  return drain(
    await c.chat.completions.create({
      model: "gpt-4o-mini",
      stream: true,
      stream_options: { include_usage: true },
      ...settings,
      messages: [{ role: "user", content: "Say hello" }],
    }),
  );
}

describe("langsmith/wrappers into tracepipe serve", () => {
  it.each<[string, Vendor, Scripted, Call]>([
    [
      "wrapOpenAI, a streamed chat with usage",
      "openai",
      { sse: [...fixture("openai-stream.json"), fixture("openai-stream-usage-chunk.json")] },
      (c) => streamedChat(c),
    ],
    [
      "wrapOpenAI, a chat",
      "openai",
      { json: fixture("openai-completion.json") },
      (c) => c.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "Weather in Paris?" }] }),
    ],
    [
      "wrapAnthropic, a tool_use reply to a request with a system prompt",
      "anthropic",
      { json: fixture("anthropic-tool-use.json") },
      (c) =>
        c.messages.create({
          model: "claude-opus-4-6",
          max_tokens: 100,
          system: "Answer in French.",
          messages: [{ role: "user", content: "Weather in Paris?" }],
        }),
    ],
    [
      "wrapAnthropic, messages.stream",
      "anthropic",
      { sse: fixture("anthropic-stream.json"), anthropic: true },
      (c) => c.messages.stream({ model: "claude-opus-4-6", max_tokens: 100, messages: [{ role: "user", content: "Hi" }] }).finalMessage(),
    ],
  ])("%s: the same messages, tokens and cost as tracepipe's wrapper records", async (name, kind, reply, call) => {
    const { run, ref } = await bothWays(`ls-wrap-${name.replace(/\W+/g, "-")}`, kind, reply, call);
    expect(run.normalize_error).toBeNull();
    expect(run.detected_format).toBe(kind === "openai" ? "openai-chat" : "anthropic-messages");
    expect(shape(run.normalized_inputs?.messages as Message[])).toEqual(shape(ref.inputs.messages));
    expect(shape(run.normalized_outputs?.messages as Message[])).toEqual(shape(ref.outputs.messages));
    expect((run.normalized_outputs?.messages as Message[])[0]!.usage_metadata?.input_tokens).toBeGreaterThan(0);
  });

  it("reads the wrapper's ls_invocation_params as the call's settings, not as one setting of that name", async () => {
    const { run, ref } = await bothWays(
      "ls-wrap-settings",
      "openai",
      { sse: [...fixture("openai-stream.json"), fixture("openai-stream-usage-chunk.json")] },
      (c) => streamedChat(c, { temperature: 0.3 }),
    );
    const params = (run.extra!.metadata as { invocation_params: Record<string, unknown> }).invocation_params;
    expect(params).not.toHaveProperty("invocation_params");
    expect(params).toMatchObject({ temperature: 0.3, stream_options: { include_usage: true } });
    const own = (ref as unknown as { extra: { metadata: { invocation_params: Record<string, unknown> } } }).extra.metadata
      .invocation_params;
    expect(params).toMatchObject({ temperature: own.temperature, stream_options: own.stream_options });
  });
});
