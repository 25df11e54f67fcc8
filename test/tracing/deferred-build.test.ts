import { afterEach, describe, expect, it, vi } from "vitest";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { wrapAnthropic, wrapOpenAI } from "../../src/tracing/index.js";
import { Client } from "../../src/ingest/index.js";
import { DEFER_WINDOW_MS, MAX_PENDING, deferredCount, later, runDeferred } from "../../src/run/deferred.js";
import { fixture } from "../helpers/replay-server.js";
import { LlmCall } from "../../src/tracing/llm.js";
import { MemoryWriter } from "../../src/run/memory.js";
import { openaiChat } from "../../adapters/index.js";
import type { Adapter } from "../../adapters/types.js";
import { useWrapperReplay } from "../helpers/wrapper-replay.js";
import { startCollector, type Running } from "../helpers/collector.js";
import { tempDir } from "../helpers/runs.js";

const vendor = useWrapperReplay();
const openai = () => new OpenAI({ apiKey: "sk-test", baseURL: `${vendor.server.url}/v1`, maxRetries: 0 });
const anthropic = () => new Anthropic({ apiKey: "sk-test", baseURL: vendor.server.url, maxRetries: 0 });

const question = () => ({
  model: "gpt-4o",
  temperature: 0.2,
  messages: [
    { role: "system" as const, content: "Be brief." },
    { role: "user" as const, content: "Weather in Paris?" },
  ] as OpenAI.Chat.ChatCompletionMessageParam[],
});

let col: Running | undefined;
afterEach(async () => {
  await col?.close();
  col = undefined;
});

describe("runs built after the call returns", () => {
  it("carry the request and the reply as the call had them, whatever the host changes after it", async () => {
    vendor.server.push({ json: fixture("openai-completion.json") });
    const body = question();
    const wrapped = wrapOpenAI(openai(), { client: vendor.writer });
    const pending = wrapped.chat.completions.create(body);
    // Changed while the call is in flight: the request was copied when create() was called.
    body.messages.push({ role: "user", content: "and tomorrow?" });
    (body.messages[0] as { content: string }).content = "changed";
    body.temperature = 1;
    const reply = await pending;
    // The usual next turn: the reply joins the conversation, and the host edits it.
    body.messages.push(reply.choices[0]!.message);
    reply.choices[0]!.message.content = "edited by the host";
    reply.model = "someone-else";
    expect(deferredCount()).toBeGreaterThan(0); // the run is not built yet: what follows reads the copies
    const [run] = vendor.writer.list() as Record<string, any>[];
    expect(run!.inputs.messages).toHaveLength(2);
    expect(run!.inputs.messages[0]).toMatchObject({ role: "system", content: [{ type: "text", text: "Be brief." }] });
    expect(run!.extra.metadata).toMatchObject({ invocation_params: { temperature: 0.2 }, trace_model_name: "gpt-4o-2024-08-06" });
    expect(run!.outputs.messages[0].content).toEqual([{ type: "text", text: "Paris is 18°C and rainy." }]);
    expect(run!.end_time >= run!.start_time).toBe(true);
  });

  it("keep the start and end times of the call, not of the build", async () => {
    vendor.server.push({ json: fixture("openai-completion.json") });
    const wrapped = wrapOpenAI(openai(), { client: vendor.writer });
    const before = Date.now();
    await wrapped.chat.completions.create(question());
    const returned = Date.now();
    // The build runs when the writer is read, 50 ms after the call returned (a busy host), in this same turn.
    while (Date.now() < returned + 50);
    expect(deferredCount()).toBeGreaterThan(0);
    const [run] = vendor.writer.list() as Record<string, any>[];
    // Within a few ms: the run's clock (performance.timeOrigin) and Date.now() may disagree slightly.
    expect(Date.parse(run!.start_time)).toBeGreaterThanOrEqual(before - 5);
    expect(Date.parse(run!.end_time)).toBeLessThanOrEqual(returned + 5);
  });

  it("are built in the order the calls were made, each create before any update of its run", async () => {
    vendor.server.push(...[0, 1, 2, 3].map(() => ({ json: fixture("openai-completion.json") })));
    const wrapped = wrapOpenAI(openai(), { client: vendor.writer });
    for (let i = 0; i < 4; i++) await wrapped.chat.completions.create({ ...question(), messages: [{ role: "user", content: `q${i}` }] });
    const calls = vendor.writer.calls;
    // Whether a call's start was built before its end depends on where the batches fell: either way its create comes first.
    const created = calls.filter((c) => c.kind === "create").map((c) => (c as { run: Record<string, any> }).run);
    expect(created.map((r) => r.inputs.messages[0].content[0].text)).toEqual(["q0", "q1", "q2", "q3"]);
    expect(created.map((r) => r.id)).toEqual([...created.map((r) => r.id)].sort());
    for (const [i, c] of calls.entries())
      if (c.kind === "update") expect(calls.slice(0, i).some((p) => p.kind === "create" && p.run.id === c.id)).toBe(true);
    const runs = vendor.writer.list() as Record<string, any>[];
    expect(runs.map((r) => r.outputs.messages[0].content[0].text)).toEqual(Array(4).fill("Paris is 18°C and rainy."));
  });

  it("hand a call that ended before its build over as one create of the whole run", () => {
    const writer = new MemoryWriter();
    const call = new LlmCall(openaiChat, "openai", question(), writer, {}, "ChatOpenAI");
    call.succeed(fixture("openai-completion.json"));
    const calls = writer.calls;
    expect(calls.map((c) => c.kind)).toEqual(["create"]);
    const run = (calls[0] as { run: Record<string, any> }).run;
    expect(run.inputs.messages).toHaveLength(2);
    expect(run.outputs.messages[0].content).toEqual([{ type: "text", text: "Paris is 18°C and rainy." }]);
    expect(run.end_time >= run.start_time).toBe(true);
    expect(run.extra.metadata).toMatchObject({ invocation_params: { temperature: 0.2 }, trace_model_name: "gpt-4o-2024-08-06" });
  });

  it("hand a call still running when its build runs over as its create, then its update", async () => {
    vendor.server.push({ json: fixture("openai-completion.json") });
    const wrapped = wrapOpenAI(openai(), { client: vendor.writer });
    const pending = wrapped.chat.completions.create(question());
    runDeferred(); // a flush while the call is in flight: the run's start is handed over now
    expect(vendor.writer.calls.map((c) => c.kind)).toEqual(["create"]);
    expect((vendor.writer.calls[0] as { run: Record<string, unknown> }).run.end_time).toBeUndefined();
    await pending;
    expect(vendor.writer.calls.map((c) => c.kind)).toEqual(["create", "update"]);
    const [run] = vendor.writer.list() as Record<string, any>[];
    expect(run!.outputs.messages[0].content).toEqual([{ type: "text", text: "Paris is 18°C and rainy." }]);
  });

  it("hand the create over even when the end's build fails", () => {
    const writer = new MemoryWriter();
    // A reply the run builder cannot read past the adapter (its messages throw when read).
    const adapter = {
      ...openaiChat,
      normalizeResponse: () => ({
        get messages(): never {
          throw new Error("unreadable");
        },
      }),
    } as unknown as Adapter;
    const call = new LlmCall(adapter, "openai", question(), writer, {}, "ChatOpenAI");
    call.succeed(fixture("openai-completion.json"));
    const calls = writer.calls;
    expect(calls.map((c) => c.kind)).toEqual(["create"]);
    expect((calls[0] as { run: Record<string, any> }).run.inputs.messages).toHaveLength(2);
  });

  it("keep a streamed reply as it was read, even when the SDK's stream helper changes the events it reads", async () => {
    vendor.server.push(
      { sse: fixture("anthropic-stream.json"), anthropic: true },
      { sse: fixture("anthropic-stream.json"), anthropic: true },
    );
    const ask = { model: "claude-sonnet-4-5", max_tokens: 50, messages: [{ role: "user" as const, content: "Hello" }] };
    const plain = await anthropic().messages.stream(ask).finalMessage();
    const message = await wrapAnthropic(anthropic(), { client: vendor.writer }).messages.stream(ask).finalMessage();
    expect(message).toEqual(plain);
    const [run] = vendor.writer.list() as Record<string, any>[];
    const text = plain.content.map((b) => (b.type === "text" ? b.text : "")).join("");
    expect(run!.outputs.messages[0].content.map((p: { text?: string }) => p.text ?? "").join("")).toBe(text);
    expect(run!.events.map((e: { name: string }) => e.name)).toContain("new_token");
  });

  it("are handed to a Client before its flush() counts what is left", async () => {
    col = await startCollector();
    const client = new Client({
      endpoint: col.url,
      apiKey: "k",
      project: "deferred-flush",
      spoolDir: join(tempDir("tp-deferred-"), "spool"),
      exitHooks: false,
      warn: () => {},
    });
    vendor.server.push({ json: fixture("openai-completion.json") });
    await wrapOpenAI(openai(), { client }).chat.completions.create(question());
    expect(deferredCount()).toBeGreaterThan(0);
    const result = await client.flush();
    expect(result.pending).toBe(0);
    await client.shutdown();
    const { runs } = await col.collector.store.queryRuns({ project: "deferred-flush" });
    expect(runs).toHaveLength(1);
    expect(runs[0]!.end_time).toBeTruthy();
  });

  it("hold none of the host's metadata when they reach a Client: a later change to it is not delivered", async () => {
    col = await startCollector();
    const client = new Client({
      endpoint: col.url,
      apiKey: "k",
      project: "deferred-owned",
      spoolDir: join(tempDir("tp-deferred-owned-"), "spool"),
      exitHooks: false,
      warn: () => {},
    });
    vendor.server.push({ json: fixture("openai-completion.json") });
    const metadata = { team: { name: "search" } };
    await wrapOpenAI(openai(), { client, metadata }).chat.completions.create(question());
    runDeferred();
    // The host changes its metadata after the run was built and before it is delivered.
    metadata.team.name = "changed";
    await client.shutdown();
    const { runs } = await col.collector.store.queryRuns({ project: "deferred-owned", limit: 10 });
    expect(runs).toHaveLength(1);
    const run = runs[0] as Record<string, any>;
    expect(run.extra.metadata.team).toEqual({ name: "search" });
    expect(run.outputs.messages[0].content).toEqual([{ type: "text", text: "Paris is 18°C and rainy." }]);
    expect(run.inputs.messages).toHaveLength(2);
  });

  it("go to the spool on process.exit() right after the calls, and the next client delivers each once, whole", async () => {
    col = await startCollector();
    const spool = join(tempDir("tp-deferred-exit-"), "spool");
    const { code, stderr } = await runExitChild(col.url, spool, "20");
    // 3: no build was pending at exit, so the test would prove nothing.
    expect(code, stderr).toBe(0);
    const next = new Client({ endpoint: col.url, apiKey: "k", spoolDir: spool, exitHooks: false, warn: () => {} });
    await next.flush();
    await next.shutdown();
    const { runs } = await col.collector.store.queryRuns({ project: "deferred-exit", limit: 100 });
    expect(runs).toHaveLength(20);
    for (const r of runs) expect((r.outputs as { messages: unknown[] }).messages).toHaveLength(1);
    const questions = runs.map((r) => (r.inputs as { messages: { content: { text: string }[] }[] }).messages[0]!.content[0]!.text);
    expect(new Set(questions).size).toBe(20);
  }, 150_000);
});

describe("the deferred queue", () => {
  it("runs work in the order it was handed over, once, and goes on past work that throws", async () => {
    const seen: number[] = [];
    later(() => seen.push(1));
    later(() => {
      throw new Error("one build fails");
    });
    later(() => {
      seen.push(2);
      later(() => seen.push(4)); // handed over while the queue runs: same run, after what was already there
    });
    later(() => seen.push(3));
    expect(seen).toEqual([]);
    // A timer armed after the queue's with the same delay fires after it.
    await new Promise((r) => setTimeout(r, DEFER_WINDOW_MS));
    expect(seen).toEqual([1, 2, 3, 4]);
    runDeferred();
    expect(seen).toEqual([1, 2, 3, 4]);
    expect(deferredCount()).toBe(0);
  });

  it("builds the calls of a window together, and a full queue at the next turn", async () => {
    // Any batch armed by earlier tests has run (its timer fires before this one), so this test arms its own, on fake timers.
    await new Promise((r) => setTimeout(r, DEFER_WINDOW_MS));
    vi.useFakeTimers({ toFake: ["setTimeout", "setImmediate"] });
    try {
      const seen: number[] = [];
      later(() => seen.push(1));
      vi.advanceTimersByTime(DEFER_WINDOW_MS - 1);
      later(() => seen.push(2)); // a later turn, the same window
      expect(seen).toEqual([]);
      vi.advanceTimersByTime(1);
      expect(seen).toEqual([1, 2]);
      // A full queue does not wait for the window: it runs at the next turn.
      let ran = 0;
      for (let i = 0; i < MAX_PENDING; i++) later(() => ran++);
      expect(ran).toBe(0);
      vi.advanceTimersToNextTimer(); // the setImmediate, before the window's timer
      expect(ran).toBe(MAX_PENDING);
      expect(deferredCount()).toBe(0);
      vi.runAllTimers();
    } finally {
      vi.useRealTimers();
    }
  });

  it("are delivered by a process that ends on its own right after its calls, none left in the spool", async () => {
    col = await startCollector();
    const spool = join(tempDir("tp-deferred-idle-"), "spool");
    // The child makes its calls and returns from its module without flushing: the batch and the Client's
    // beforeExit flush must both run before the process ends.
    const { code, stderr } = await runExitChild(col.url, spool, "5", "idle");
    expect(code, stderr).toBe(0);
    // Delivered by the exiting process itself: nothing was left for a next client in the spool.
    const { runs } = await col.collector.store.queryRuns({ project: "deferred-exit", limit: 100 });
    expect(runs).toHaveLength(5);
    for (const r of runs) expect((r.outputs as { messages: unknown[] }).messages).toHaveLength(1);
    const next = new Client({ endpoint: col.url, apiKey: "k", spoolDir: spool, exitHooks: false, warn: () => {} });
    expect(next.stats.inSpool).toBe(0);
    await next.shutdown();
  }, 150_000);
});

/** test/fixtures/scripts/deferred-exit-child.ts with `args`: its exit code and what it wrote to stderr. */
async function runExitChild(...args: string[]): Promise<{ code: number | null; stderr: string }> {
  const script = fileURLToPath(new URL("../fixtures/scripts/deferred-exit-child.ts", import.meta.url));
  const child = spawn(process.execPath, ["--import", "tsx", script, ...args], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
  const killer = setTimeout(() => child.kill("SIGKILL"), 110_000);
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  clearTimeout(killer);
  return { code, stderr };
}
