/**
 * What a wrapped stream keeps of its chunks: each is folded as it passes (the caller's read is never
 * broken by a chunk we cannot fold), no chunk is held once folded, and the output is read from the
 * fold in the run's deferred build, as the stream had it when it ended.
 */
import { describe, expect, it } from "vitest";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import Anthropic from "@anthropic-ai/sdk";
import { wrapAnthropic } from "../../src/tracing/index.js";
import { LlmCall } from "../../src/tracing/llm.js";
import { MemoryWriter } from "../../src/run/memory.js";
import { deferredCount, runDeferred } from "../../src/run/deferred.js";
import { openaiChat } from "../../adapters/index.js";
import { fixture } from "../helpers/replay-server.js";
import { useWrapperReplay } from "../helpers/wrapper-replay.js";

const vendor = useWrapperReplay();
const anthropic = () => new Anthropic({ apiKey: "sk-test", baseURL: vendor.server.url, maxRetries: 0 });

const body = { model: "gpt-4o-mini", stream: true, messages: [{ role: "user", content: "Count." }] };
const chunk = (content: string | undefined, finish: string | null = null) => ({
  id: "chatcmpl-fold",
  object: "chat.completion.chunk",
  created: 1763800001,
  model: "gpt-4o-mini-2024-07-18",
  choices: [{ index: 0, delta: content === undefined ? {} : { content }, logprobs: null, finish_reason: finish }],
});

/** The chunks as an SDK's Stream yields them: one per step of an async generator. */
async function* source(chunks: Iterable<unknown>): AsyncGenerator<unknown> {
  for (const c of chunks) yield c;
}

function read(it: AsyncIterator<unknown>): AsyncIterable<unknown> {
  return { [Symbol.asyncIterator]: () => it };
}

function onlyRun(writer: MemoryWriter): Record<string, any> {
  const runs = writer.list();
  expect(runs).toHaveLength(1);
  return runs[0] as Record<string, any>;
}

describe("a wrapped stream's chunks", () => {
  it("reach the caller all, in order, past a chunk whose getter throws; the rest is recorded", async () => {
    const writer = new MemoryWriter();
    const hostile = chunk("ignored");
    Object.defineProperty(hostile, "choices", {
      enumerable: true,
      get() {
        throw new Error("hostile getter");
      },
    });
    const sent = [chunk("One"), hostile, chunk(" two"), chunk(undefined, "stop")];
    const call = new LlmCall(openaiChat, "openai", body, writer, {}, "ChatOpenAI");
    const got: unknown[] = [];
    for await (const c of read(call.wrapIterator(source(sent)))) got.push(c);
    expect(got).toEqual(sent.map(() => expect.anything()));
    expect(got.every((c, i) => c === sent[i])).toBe(true);
    const run = onlyRun(writer);
    expect(run.error).toBeUndefined();
    expect(run.outputs.messages[0].content).toEqual([{ type: "text", text: "One two" }]);
    expect(run.events.map((e: { name: string }) => e.name)).toEqual(["new_token"]);
  });

  it("of a stream the caller stops early are recorded up to the stop, cancelled, and the SDK's iterator is closed", async () => {
    const writer = new MemoryWriter();
    let closed = false;
    const gen = (async function* () {
      try {
        for (const w of ["a", "b", "c", "d", "e"]) yield chunk(w);
      } finally {
        closed = true;
      }
    })();
    const call = new LlmCall(openaiChat, "openai", body, writer, {}, "ChatOpenAI");
    let n = 0;
    for await (const _ of read(call.wrapIterator(gen))) if (++n === 2) break;
    expect(closed).toBe(true);
    const run = onlyRun(writer);
    expect(run.error).toBe("cancelled");
    expect(run.outputs.messages[0].content).toEqual([{ type: "text", text: "ab" }]);
  });

  it("are not held once folded: a 100k-chunk stream keeps its text, not its chunks, until its run is built", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const writer = new MemoryWriter();
    const CHUNKS = 100_000;
    const watched: WeakRef<object>[] = [];
    // Each chunk carries a large piece of transport-like baggage in a field the fold reads and lets go of.
    const pad = "x".repeat(256);
    const chunks = function* () {
      for (let i = 0; i < CHUNKS; i++) {
        const c = chunk(i % 2 ? "b" : "a");
        c.choices[0]!.logprobs = { content: [], refusal: null, pad } as never;
        if (i % 10_000 === 5) watched.push(new WeakRef(c));
        yield c;
      }
    };
    const call = new LlmCall(openaiChat, "openai", body, writer, {}, "ChatOpenAI");
    let n = 0;
    for await (const _ of read(call.wrapIterator(source(chunks())))) n++;
    expect(n).toBe(CHUNKS);
    // The run is not built yet: what the call holds now is the fold alone.
    expect(deferredCount()).toBeGreaterThan(0);
    await new Promise((r) => setImmediate(r));
    gc();
    expect(watched.length).toBe(10);
    expect(watched.filter((w) => w.deref() !== undefined)).toHaveLength(0);
    runDeferred();
    const run = onlyRun(writer);
    expect(run.outputs.messages[0].content[0].text).toBe("ab".repeat(CHUNKS / 2));
  });
});

describe("a wrapped Anthropic stream", () => {
  it("is recorded as streamed even when the host changes message_start's message before the run is built", async () => {
    vendor.server.push({ sse: fixture("anthropic-stream.json"), anthropic: true });
    const ask = {
      model: "claude-haiku-4-5",
      max_tokens: 50,
      messages: [{ role: "user" as const, content: "Hello" }],
      stream: true as const,
    };
    const stream = await wrapAnthropic(anthropic(), { client: vendor.writer }).messages.create(ask);
    let started: { model: string; id: string } | undefined;
    for await (const event of stream) if (event.type === "message_start") started = event.message;
    // The stream has ended; its run is built later (run/deferred.ts), after the host changed the start's message.
    started!.model = "changed-by-the-host";
    started!.id = "changed";
    const runs = vendor.writer.list() as Record<string, any>[];
    expect(runs).toHaveLength(1);
    expect(runs[0]!.extra.metadata.trace_model_name).toBe("claude-haiku-4-5-20251001");
    expect(JSON.stringify(runs[0]!.outputs)).not.toContain("changed");
  });
});
