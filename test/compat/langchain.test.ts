/**
 * LangChain's own traces: the real `@langchain/core` with `@langchain/openai`,
 * `@langchain/anthropic` and `@langchain/langgraph`, calling the loopback replay
 * vendors, traced by LangChain's LangChainTracer (the langsmith client it
 * ships with) into tracepipe's collector through `LANGSMITH_ENDPOINT`. The
 * stored llm runs are normalized (adapter `langchain`) to the native messages
 * `wrapOpenAI` / `wrapAnthropic` record for the very request LangChain sent, and
 * name their provider, model, tokens and cost in the trace list.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { z } from "zod";
import { ChatOpenAI } from "@langchain/openai";
import { ChatAnthropic } from "@langchain/anthropic";
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { ChatPromptTemplate } from "@langchain/core/prompts";
import { StringOutputParser } from "@langchain/core/output_parsers";
import { tool } from "@langchain/core/tools";
import { awaitAllCallbacks } from "@langchain/core/callbacks/promises";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { wrapAnthropic, wrapOpenAI } from "../../src/tracing/index.js";
import { MemoryWriter } from "../../src/run/memory.js";
import { validate } from "../../src/format/validate.js";
import type { Message } from "../../src/format/schema.js";
import type { StoredRun } from "../../src/store/contract/runs.js";
import { fixture, startReplayServer, type ReplayServer } from "../helpers/replay-server.js";
import { startCollector, type Running } from "../helpers/collector.js";
import { runCli, jsonLines } from "../helpers/cli.js";

let vendor: ReplayServer;
let col: Running;
const saved: Record<string, string | undefined> = {};
const ENV = { LANGSMITH_TRACING: "true", LANGSMITH_API_KEY: "local-key", LANGCHAIN_CALLBACKS_BACKGROUND: "false" };

beforeAll(async () => {
  vendor = await startReplayServer();
  col = await startCollector();
  for (const [k, v] of Object.entries({ ...ENV, LANGSMITH_ENDPOINT: col.url })) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
});
afterAll(async () => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  await vendor.close();
  await col.close();
});

const openaiModel = (opts: Record<string, unknown> = {}) =>
  new ChatOpenAI({
    model: "gpt-4o",
    apiKey: "sk-test",
    configuration: { baseURL: `${vendor.url}/v1` },
    maxRetries: 0,
    temperature: 0.2,
    maxTokens: 50,
    ...opts,
  });
const anthropicModel = () =>
  new ChatAnthropic({ model: "claude-opus-4-6", apiKey: "sk-test", anthropicApiUrl: vendor.url, maxRetries: 0, maxTokens: 100 });

/** Every run LangChain sent for a project, once its batches are delivered. */
async function stored(project: string): Promise<StoredRun[]> {
  await awaitAllCallbacks();
  await awaitAllCallbacks();
  return (await col.collector.store.queryRuns({ project, limit: 1000 })).runs;
}

function llmRuns(runs: StoredRun[]): StoredRun[] {
  return runs.filter((r) => r.run_type === "llm").sort((a, b) => a.start_time.localeCompare(b.start_time));
}

/** What a wrapper recorded for the same request body, replayed from the same fixture. */
async function wrapped(kind: "openai" | "anthropic", body: Record<string, unknown>, reply: Parameters<ReplayServer["push"]>[0]) {
  const writer = new MemoryWriter();
  vendor.push(reply);
  if (kind === "openai") {
    const client = wrapOpenAI(new OpenAI({ apiKey: "sk-test", baseURL: `${vendor.url}/v1`, maxRetries: 0 }), { client: writer });
    const res = await client.chat.completions.create(body as never);
    if (body.stream) for await (const _ of res as unknown as AsyncIterable<unknown>) void _;
  } else {
    const client = wrapAnthropic(new Anthropic({ apiKey: "sk-test", baseURL: vendor.url, maxRetries: 0 }), { client: writer });
    const res = await client.messages.create(body as never);
    if (body.stream) for await (const _ of res as unknown as AsyncIterable<unknown>) void _;
  }
  const runs = writer.list();
  expect(runs).toHaveLength(1);
  return runs[0] as unknown as {
    inputs: { messages: Message[] };
    outputs: { messages: Message[] };
    extra: { metadata: Record<string, unknown> };
  };
}

/** Roles, blocks and tool linkage, without the extras each source keeps of its own. */
function shape(messages: readonly Message[]) {
  return messages.map((m) => ({
    role: m.role,
    tool_call_id: m.tool_call_id,
    content: m.content.map((b) => {
      const { extras: _extras, ...rest } = b as typeof b & { extras?: unknown };
      return rest;
    }),
  }));
}

function tokens(m: Message | undefined) {
  const u = m?.usage_metadata;
  return (
    u && {
      input_tokens: u.input_tokens,
      output_tokens: u.output_tokens,
      total_tokens: u.total_tokens,
      cache_read: u.input_token_details?.cache_read ?? 0,
      cache_creation: u.input_token_details?.cache_creation ?? 0,
      total_cost: u.total_cost,
    }
  );
}

function nativeOf(run: StoredRun): { inputs: Message[]; outputs: Message[] } {
  expect(run.detected_format).toBe("langchain");
  expect(run.normalize_error).toBeNull();
  const inputs = run.normalized_inputs!.messages as Message[];
  const outputs = run.normalized_outputs!.messages as Message[];
  expect(validate(inputs)).toEqual([]);
  expect(validate(outputs)).toEqual([]);
  return { inputs, outputs };
}

describe("LangChain's tracer into tracepipe serve", () => {
  it("normalizes an invoke with an image as wrapOpenAI records the same call, with provider, model and ls_* settings", async () => {
    process.env.LANGSMITH_PROJECT = "lc-image";
    vendor.push({ json: fixture("openai-completion.json") });
    const before = vendor.requests.length;
    await openaiModel().invoke([
      new SystemMessage("Be brief."),
      new HumanMessage({
        content: [
          { type: "text", text: "What is this?" },
          { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
        ],
      }),
    ]);
    const body = vendor.requests[before]!.body;
    const [run] = llmRuns(await stored("lc-image"));
    const lc = nativeOf(run!);
    const ref = await wrapped("openai", body, { json: fixture("openai-completion.json") });
    expect(shape(lc.inputs)).toEqual(shape(ref.inputs.messages));
    expect(lc.inputs[1]!.content[1]).toEqual({ type: "image", base64: "iVBORw0KGgo=", mime_type: "image/png" });
    expect(shape(lc.outputs)).toEqual(shape(ref.outputs.messages));
    expect(tokens(lc.outputs[0])).toEqual(tokens(ref.outputs.messages[0]));
    expect(lc.outputs[0]!.usage_metadata!.total_cost).toBeGreaterThan(0);
    const meta = run!.extra!.metadata as Record<string, unknown>;
    expect(meta).toMatchObject({
      trace_provider: "openai",
      trace_model_name: "gpt-4o-2024-08-06",
      invocation_params: { temperature: 0.2, max_tokens: 50 },
    });
    expect(meta.ls_provider).toBe("openai");
  });

  it("links a tool round through ChatAnthropic as wrapAnthropic does: tool_use -> tool_call, ToolMessage -> tool with its tool_call_id", async () => {
    process.env.LANGSMITH_PROJECT = "lc-tools";
    const model = anthropicModel().bindTools([
      {
        name: "get_weather",
        description: "Weather for a city",
        input_schema: { type: "object", properties: { city: { type: "string" }, unit: { type: "string" } }, required: ["city"] },
      },
    ]);
    vendor.push({ json: fixture("anthropic-tool-use.json") }, { json: fixture("anthropic-tool-result-reply.json") });
    const before = vendor.requests.length;
    const history = [new SystemMessage("Answer in French."), new HumanMessage("Weather in Paris?")];
    const first = await model.invoke(history);
    expect(first.tool_calls?.[0]?.id).toBe("toolu_01A");
    await model.invoke([...history, first, new ToolMessage({ tool_call_id: "toolu_01A", content: "18°C, rain" })]);
    const [call1, call2] = llmRuns(await stored("lc-tools"));

    const one = nativeOf(call1!);
    const ref1 = await wrapped("anthropic", vendor.requests[before]!.body, { json: fixture("anthropic-tool-use.json") });
    expect(shape(one.inputs)).toEqual(shape(ref1.inputs.messages));
    expect(shape(one.outputs)).toEqual(shape(ref1.outputs.messages));
    expect(one.outputs[0]!.content.map((b) => b.type)).toEqual(["text", "tool_call"]);
    expect(tokens(one.outputs[0])).toEqual(tokens(ref1.outputs.messages[0]));

    const two = nativeOf(call2!);
    const ref2 = await wrapped("anthropic", vendor.requests[before + 1]!.body, { json: fixture("anthropic-tool-result-reply.json") });
    expect(shape(two.inputs)).toEqual(shape(ref2.inputs.messages));
    expect(two.inputs.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
    expect(two.inputs[3]).toMatchObject({ role: "tool", tool_call_id: "toolu_01A", content: [{ type: "text", text: "18°C, rain" }] });
    expect(two.inputs[3]!.extras?.orphan).toBeUndefined();
    expect(shape(two.outputs)).toEqual(shape(ref2.outputs.messages));
    expect(tokens(two.outputs[0])).toEqual(tokens(ref2.outputs.messages[0]));
    expect(call2!.extra!.metadata).toMatchObject({
      trace_provider: "anthropic",
      trace_model_name: "claude-opus-4-6",
      invocation_params: { max_tokens: 100 },
    });
  });

  it("reads a stream with usage like the finished message, keeps every new_token event, and times the first token by the first", async () => {
    process.env.LANGSMITH_PROJECT = "lc-stream";
    const chunks = [...fixture("openai-stream.json"), fixture("openai-stream-usage-chunk.json")];
    vendor.push({ sse: chunks, delayMs: 2 });
    const before = vendor.requests.length;
    let text = "";
    for await (const c of await openaiModel({ streamUsage: true }).stream("Hi")) text += c.content as string;
    const body = vendor.requests[before]!.body;
    expect(body.stream).toBe(true);
    const [run] = llmRuns(await stored("lc-stream"));
    const lc = nativeOf(run!);
    const ref = await wrapped("openai", body, { sse: chunks });
    expect(shape(lc.outputs)).toEqual(shape(ref.outputs.messages));
    expect(lc.outputs[0]!.content).toEqual([{ type: "text", text }]);
    expect(tokens(lc.outputs[0])).toMatchObject({ input_tokens: 12, output_tokens: 7, total_tokens: 19 });
    expect(tokens(lc.outputs[0])).toEqual(tokens(ref.outputs.messages[0]));
    const newTokens = run!.events!.filter((e) => e.name === "new_token");
    expect(newTokens.length).toBeGreaterThan(1);
    expect(run!.first_token_time).toBe(newTokens[0]!.time);
    expect(run!.extra!.metadata).toMatchObject({ trace_model_name: "gpt-4o-mini-2024-07-18", trace_provider: "openai" });
  });

  it("reads a streamed ChatAnthropic tool call as wrapAnthropic does: its arguments joined from the input_json_delta pieces", async () => {
    process.env.LANGSMITH_PROJECT = "lc-anthropic-tool-stream";
    const model = anthropicModel().bindTools([
      {
        name: "get_weather",
        description: "Weather for a city",
        input_schema: { type: "object", properties: { city: { type: "string" } } },
      },
    ]);
    vendor.push({ sse: fixture("anthropic-tool-use-stream.json"), anthropic: true });
    const before = vendor.requests.length;
    let last: Awaited<ReturnType<typeof model.invoke>> | undefined;
    for await (const c of await model.stream("Weather in Paris?")) last = last ? last.concat(c) : c;
    expect(last?.tool_calls?.[0]?.args).toEqual({ city: "Paris", unit: "celsius" });
    const body = vendor.requests[before]!.body;
    const [run] = llmRuns(await stored("lc-anthropic-tool-stream"));
    const lc = nativeOf(run!);
    const ref = await wrapped("anthropic", body, { sse: fixture("anthropic-tool-use-stream.json"), anthropic: true });
    expect(lc.outputs[0]!.content).toEqual(ref.outputs.messages[0]!.content);
    expect(lc.outputs[0]!.content[1]).toMatchObject({ type: "tool_call", id: "toolu_01A", args: { city: "Paris", unit: "celsius" } });
    expect(lc.outputs[0]!.extras?.unmapped_content).toBeUndefined();
  });

  it("names the model that answered a streamed ChatAnthropic call, as wrapAnthropic does, and prices it", async () => {
    process.env.LANGSMITH_PROJECT = "lc-anthropic-stream";
    vendor.push({ sse: fixture("anthropic-stream.json"), anthropic: true });
    const before = vendor.requests.length;
    for await (const _ of await anthropicModel().stream([new SystemMessage("Be brief."), new HumanMessage("Hi")])) void _;
    const body = vendor.requests[before]!.body;
    const [run] = llmRuns(await stored("lc-anthropic-stream"));
    const lc = nativeOf(run!);
    const ref = await wrapped("anthropic", body, { sse: fixture("anthropic-stream.json"), anthropic: true });
    expect(shape(lc.inputs)).toEqual(shape(ref.inputs.messages));
    expect(shape(lc.outputs)).toEqual(shape(ref.outputs.messages));
    expect(ref.extra.metadata.trace_model_name).toBe("claude-haiku-4-5-20251001");
    expect(run!.extra!.metadata).toMatchObject({ trace_provider: "anthropic", trace_model_name: "claude-haiku-4-5-20251001" });
    expect(lc.outputs[0]!.usage_metadata!.total_cost).toBeGreaterThan(0);
  });

  it("stores a chain with its model inside, and the trace list and `runs list` show the model's tokens and cost", async () => {
    process.env.LANGSMITH_PROJECT = "lc-chain";
    vendor.push({ json: fixture("openai-completion.json") });
    const chain = ChatPromptTemplate.fromMessages([
      ["system", "Be brief."],
      ["human", "Weather in {city}?"],
    ])
      .pipe(openaiModel())
      .pipe(new StringOutputParser());
    expect(await chain.invoke({ city: "Paris" })).toBe("Paris is 18°C and rainy.");
    const runs = await stored("lc-chain");
    const root = runs.find((r) => !r.parent_run_id)!;
    const [llm] = llmRuns(runs);
    expect(llm!.parent_run_id).toBe(root.id);
    expect(llm!.trace_id).toBe(root.id);
    expect(shape(nativeOf(llm!).inputs)).toEqual([
      { role: "system", content: [{ type: "text", text: "Be brief." }] },
      { role: "user", content: [{ type: "text", text: "Weather in Paris?" }] },
    ]);
    const usage = nativeOf(llm!).outputs[0]!.usage_metadata!;
    const { traces } = await col.collector.store.listTraces({ project: "lc-chain" });
    expect(traces).toHaveLength(1);
    expect(traces[0]).toMatchObject({
      trace_id: root.id,
      models: ["gpt-4o-2024-08-06"],
      providers: ["openai"],
      input_tokens: 25,
      output_tokens: 9,
      total_tokens: 34,
    });
    expect(traces[0]!.total_cost).toBeCloseTo(usage.total_cost!, 12);

    const cli = await runCli(["runs", "list", "--endpoint", col.url, "--project", "lc-chain", "--json"]);
    expect(cli.code, cli.stderr).toBe(0);
    expect(jsonLines(cli.stdout)).toEqual([
      expect.objectContaining({ trace_id: root.id, total_tokens: 34, models: ["gpt-4o-2024-08-06"] }),
    ]);
  });

  it("follows a LangGraph agent step: the tool call, the tool run and the tool result linked in the next model call", async () => {
    process.env.LANGSMITH_PROJECT = "lc-graph";
    const getWeather = tool(async ({ city }: { city: string }) => `18°C and rain in ${city}`, {
      name: "get_weather",
      description: "Weather for a city",
      schema: z.object({ city: z.string() }),
    });
    vendor.push({ json: fixture("openai-tool-call.json") }, { json: fixture("openai-completion.json") });
    const agent = createReactAgent({ llm: openaiModel(), tools: [getWeather] });
    const state = await agent.invoke({ messages: [new HumanMessage("Weather in Paris?")] });
    expect(state.messages.at(-1)).toBeInstanceOf(AIMessage);
    const runs = await stored("lc-graph");
    const root = runs.find((r) => !r.parent_run_id)!;
    expect(runs.every((r) => r.trace_id === root.id)).toBe(true);
    expect(runs.some((r) => r.run_type === "tool" && r.name === "get_weather")).toBe(true);
    const [first, second] = llmRuns(runs);
    expect(nativeOf(first!).outputs[0]!.content).toEqual([
      { type: "tool_call", id: "call_w1", name: "get_weather", args: { city: "Paris" } },
    ]);
    const next = nativeOf(second!).inputs;
    expect(next.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(next[2]).toMatchObject({ tool_call_id: "call_w1", content: [{ type: "text", text: "18°C and rain in Paris" }] });
    expect(next[2]!.extras?.orphan).toBeUndefined();
    expect(tokens(nativeOf(second!).outputs[0])).toMatchObject({ input_tokens: 25, output_tokens: 9 });
  });
});
