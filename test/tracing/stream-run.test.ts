/**
 * A wrapped stream's run as a real Client delivers it to the real collector: its output read from
 * the fold in the chunks' order, one `new_token` event at the first token, and none of the host's
 * objects once the run is built (the chunks' values a result keeps are copied then, as a
 * non-streamed call's reply is at call time), whatever the host does to its chunks afterwards.
 */
import { afterEach, describe, expect, it } from "vitest";
import fc from "fast-check";
import { join } from "node:path";
import { Client } from "../../src/ingest/index.js";
import { LlmCall } from "../../src/tracing/llm.js";
import { runDeferred } from "../../src/run/deferred.js";
import { openaiChat } from "../../adapters/index.js";
import { startCollector, type Running } from "../helpers/collector.js";
import { tempDir } from "../helpers/runs.js";

const body = { model: "gpt-4o-mini", stream: true, messages: [{ role: "user", content: "Count." }] };
const ISO_MICROS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

type Chunk = { choices: { index: number; delta: Record<string, unknown>; logprobs: unknown; finish_reason: string | null }[] } & Record<
  string,
  unknown
>;
const chunk = (content: string | undefined, finish: string | null = null, logprobs: unknown = null): Chunk => ({
  id: "chatcmpl-run",
  object: "chat.completion.chunk",
  created: 1763800002,
  model: "gpt-4o-mini-2024-07-18",
  choices: [{ index: 0, delta: content === undefined ? {} : { content }, logprobs, finish_reason: finish }],
});

async function* source(chunks: Iterable<unknown>): AsyncGenerator<unknown> {
  for (const c of chunks) yield c;
}
const read = (it: AsyncIterator<unknown>): AsyncIterable<unknown> => ({ [Symbol.asyncIterator]: () => it });

let col: Running | undefined;
afterEach(async () => {
  await col?.close();
  col = undefined;
});

async function withClient(project: string): Promise<Client> {
  col = await startCollector();
  return new Client({
    endpoint: col.url,
    apiKey: "k",
    project,
    spoolDir: join(tempDir("tp-stream-run-"), "spool"),
    exitHooks: false,
    warn: () => {},
  });
}

async function delivered(client: Client, project: string): Promise<Record<string, any>> {
  const result = await client.shutdown();
  expect(result.ok).toBe(true);
  const { runs } = await col!.collector.store.queryRuns({ project, limit: 10 });
  expect(runs).toHaveLength(1);
  return runs[0] as Record<string, any>;
}

describe("a streamed run as delivered", () => {
  it("holds the text in the chunks' order, one new_token event with a microsecond ISO time inside the run, and estimated usage", async () => {
    const client = await withClient("stream-run-order");
    const words = ["Par", "is", " is", " the", " capital", " of", " France", "."];
    const sent = [chunk(""), ...Array.from({ length: 40 }, (_, i) => chunk(words[i % words.length])), chunk(undefined, "stop")];
    const call = new LlmCall(openaiChat, "openai", body, client, {}, "ChatOpenAI");
    let n = 0;
    for await (const _ of read(call.wrapIterator(source(sent)))) n++;
    expect(n).toBe(sent.length);
    const run = await delivered(client, "stream-run-order");
    expect(run.error ?? undefined).toBeUndefined();
    const text = Array.from({ length: 40 }, (_, i) => words[i % words.length]).join("");
    expect(run.outputs.messages).toHaveLength(1);
    expect(run.outputs.messages[0].content).toEqual([{ type: "text", text }]);
    // The chunks' own fields (last one wins) and the finish reason, in the order the fold met them.
    expect(JSON.stringify(run.outputs.messages[0].extras)).toBe(
      JSON.stringify({ id: "chatcmpl-run", created: 1763800002, finish_reason: "stop" }),
    );
    expect(run.events).toHaveLength(1);
    expect(Object.keys(run.events[0]).sort()).toEqual(["name", "time"]);
    expect(run.events[0].name).toBe("new_token");
    expect(run.events[0].time).toMatch(ISO_MICROS);
    expect(Date.parse(run.events[0].time)).toBeGreaterThanOrEqual(Date.parse(run.start_time) - 1);
    expect(Date.parse(run.events[0].time)).toBeLessThanOrEqual(Date.parse(run.end_time) + 1);
    const usage = run.outputs.messages[0].usage_metadata;
    expect(usage.estimated).toBe(true);
    expect(usage.output_tokens).toBeGreaterThan(0);
    expect(usage.total_tokens).toBe(usage.input_tokens + usage.output_tokens);
  });

  it("keeps the chunks' values as they were when it was built: a change the host makes to a chunk afterwards is not delivered", async () => {
    const client = await withClient("stream-run-owned");
    // logprobs entries are kept by reference by the fold (the host's objects) until the run is built.
    const entry = (token: string) => ({ token, logprob: -0.25, bytes: [...Buffer.from(token)], top_logprobs: [] });
    const sent = [
      chunk("One", null, { content: [entry("One")] }),
      chunk(" two", null, { content: [entry(" two")] }),
      chunk(undefined, "stop"),
    ];
    const call = new LlmCall(openaiChat, "openai", body, client, {}, "ChatOpenAI");
    for await (const _ of read(call.wrapIterator(source(sent)))) void _;
    runDeferred();
    // The host changes the chunks it read after the run was built and before it is delivered.
    const first = (sent[0]!.choices[0]!.logprobs as { content: Record<string, unknown>[] }).content[0]!;
    first.token = "changed";
    (first.top_logprobs as unknown[]).push({ token: "added", logprob: -9 });
    sent[0]!.choices[0]!.delta.content = "changed";
    const run = await delivered(client, "stream-run-owned");
    expect(run.outputs.messages[0].content).toEqual([{ type: "text", text: "One two" }]);
    expect(run.outputs.messages[0].extras.logprobs).toEqual({ content: [entry("One"), entry(" two")] });
  });

  it("of a stream with no chunks has no output message, no new_token event and no error", async () => {
    const client = await withClient("stream-run-empty");
    const call = new LlmCall(openaiChat, "openai", body, client, {}, "ChatOpenAI");
    for await (const _ of read(call.wrapIterator(source([])))) throw new Error("no chunk expected");
    const run = await delivered(client, "stream-run-empty");
    expect(run.error ?? undefined).toBeUndefined();
    expect(run.outputs.messages).toEqual([]);
    expect(run.events ?? []).toEqual([]);
  });

  it("of a stream the caller abandons midway holds the text read so far, the first token's event and `cancelled`", async () => {
    const client = await withClient("stream-run-abandoned");
    const call = new LlmCall(openaiChat, "openai", body, client, {}, "ChatOpenAI");
    let n = 0;
    for await (const _ of read(call.wrapIterator(source(["a", "b", "c", "d", "e"].map((w) => chunk(w)))))) if (++n === 3) break;
    const run = await delivered(client, "stream-run-abandoned");
    expect(run.error).toBe("cancelled");
    expect(run.outputs.messages[0].content).toEqual([{ type: "text", text: "abc" }]);
    expect(run.events.map((e: { name: string; time: string }) => [e.name, ISO_MICROS.test(e.time)])).toEqual([["new_token", true]]);
  });

  it("is still delivered, copied at delivery, when a value the fold kept has a getter that throws; the caller's chunks are untouched", async () => {
    const client = await withClient("stream-run-hostile");
    const hostile = { token: "Two", logprob: -0.5 };
    Object.defineProperty(hostile, "bytes", {
      enumerable: true,
      get() {
        throw new Error("hostile getter");
      },
    });
    const sent = [chunk("One"), chunk(" Two", null, { content: [hostile] }), chunk(undefined, "stop")];
    const call = new LlmCall(openaiChat, "openai", body, client, {}, "ChatOpenAI");
    const got: unknown[] = [];
    for await (const c of read(call.wrapIterator(source(sent)))) got.push(c);
    expect(got.every((c, i) => c === sent[i])).toBe(true);
    const run = await delivered(client, "stream-run-hostile");
    expect(run.outputs.messages[0].content).toEqual([{ type: "text", text: "One Two" }]);
    expect(run.outputs.messages[0].extras.logprobs).toEqual({
      content: [{ token: "Two", logprob: -0.5, bytes: "[Thrown: hostile getter]" }],
    });
  });
});

describe("a streamed run's outputs", () => {
  it("are the bytes the adapter reads from the same chunks, whatever values they carry", async () => {
    const client = await withClient("stream-run-same");
    const json = fc.jsonValue({ maxDepth: 3 });
    const arbChunk = fc.record({
      content: fc.option(fc.string({ unit: "grapheme", maxLength: 6 }), { nil: undefined }),
      chunkExtra: fc.option(json, { nil: undefined }),
      deltaExtra: fc.option(json, { nil: undefined }),
      logprob: fc.option(fc.dictionary(fc.string({ minLength: 1, maxLength: 4 }), json, { maxKeys: 3 }), { nil: undefined }),
      finish: fc.option(fc.constantFrom("stop", "length"), { nil: undefined }),
    });
    const cases = fc.sample(fc.array(arbChunk, { maxLength: 12 }), { numRuns: 40, seed: 37 });
    const toChunks = (spec: (typeof cases)[number]) =>
      spec.map((c) => {
        const delta: Record<string, unknown> = c.content === undefined ? {} : { content: c.content };
        if (c.deltaExtra !== undefined) delta.x_delta = c.deltaExtra;
        const out: Record<string, unknown> = {
          id: "chatcmpl-same",
          object: "chat.completion.chunk",
          model: "gpt-4o-mini",
          choices: [{ index: 0, delta, logprobs: c.logprob ? { content: [c.logprob] } : null, finish_reason: c.finish ?? null }],
        };
        if (c.chunkExtra !== undefined) out.x_chunk = c.chunkExtra;
        return out;
      });
    for (let i = 0; i < cases.length; i++) {
      const call = new LlmCall(openaiChat, "openai", body, client, { name: `case-${i}` }, "ChatOpenAI");
      for await (const _ of read(call.wrapIterator(source(toChunks(cases[i]!))))) void _;
    }
    expect((await client.shutdown()).ok).toBe(true);
    const { runs } = await col!.collector.store.queryRuns({ project: "stream-run-same", limit: 1000 });
    const byName = new Map(runs.map((r) => [(r as Record<string, any>).name as string, r as Record<string, any>]));
    expect(byName.size).toBe(cases.length);
    for (let i = 0; i < cases.length; i++) {
      const run = byName.get(`case-${i}`)!;
      // The whole-stream reader over fresh chunks: what the fold held, never copied. The run adds usage to the first message.
      const expected = openaiChat.normalizeStream(toChunks(cases[i]!)).messages;
      const recorded = (run.outputs.messages as Record<string, unknown>[]).map(({ usage_metadata: _, ...m }) => m);
      expect(JSON.stringify(recorded)).toBe(JSON.stringify(expected));
      expect(run.error ?? null).toBeNull();
    }
  });
});

describe("a streamed run through either kind of iterator", () => {
  /** The same steps as `source`, from an iterator that is not an async generator (the wrapper's general path). */
  const handWritten = (chunks: unknown[], failAt = -1): AsyncIterator<unknown> => {
    let i = 0;
    return {
      next: async () => {
        if (i === failAt) throw new Error("vendor broke");
        return i < chunks.length ? { done: false, value: chunks[i++] } : { done: true, value: undefined };
      },
    };
  };
  async function* failing(chunks: unknown[], failAt: number): AsyncGenerator<unknown> {
    for (let i = 0; i < chunks.length; i++) {
      if (i === failAt) throw new Error("vendor broke");
      yield chunks[i];
    }
  }
  const sent = ["One", " two", " three", " four"].map((w) => chunk(w));

  it("records the same run from an async generator and from a hand-written iterator, and hands over every chunk as it came", async () => {
    const client = await withClient("stream-run-kinds");
    const got: Record<string, unknown[]> = { generator: [], iterator: [] };
    for (const [name, it] of [
      ["generator", source(sent)],
      ["iterator", handWritten(sent)],
    ] as const) {
      const call = new LlmCall(openaiChat, "openai", body, client, { name }, "ChatOpenAI");
      for await (const c of read(call.wrapIterator(it))) got[name]!.push(c);
    }
    expect(got.generator!.every((c, i) => c === sent[i]) && got.generator!.length === sent.length).toBe(true);
    expect(got.iterator!.every((c, i) => c === sent[i]) && got.iterator!.length === sent.length).toBe(true);
    expect((await client.shutdown()).ok).toBe(true);
    const { runs } = await col!.collector.store.queryRuns({ project: "stream-run-kinds", limit: 10 });
    const byName = new Map(runs.map((r) => [(r as Record<string, any>).name as string, r as Record<string, any>]));
    for (const name of ["generator", "iterator"]) {
      const run = byName.get(name)!;
      expect(run.error ?? undefined).toBeUndefined();
      expect(run.outputs.messages[0].content).toEqual([{ type: "text", text: "One two three four" }]);
      expect(run.events.map((e: { name: string }) => e.name)).toEqual(["new_token"]);
    }
  });

  it("ends the run with the vendor's error and the text so far when the stream fails midway, the caller getting the same error", async () => {
    const client = await withClient("stream-run-failed");
    const seen: Record<string, unknown> = {};
    for (const [name, it] of [
      ["generator", failing(sent, 2)],
      ["iterator", handWritten(sent, 2)],
    ] as const) {
      const call = new LlmCall(openaiChat, "openai", body, client, { name }, "ChatOpenAI");
      try {
        for await (const _ of read(call.wrapIterator(it))) void _;
      } catch (err) {
        seen[name] = (err as Error).message;
      }
    }
    expect(seen).toEqual({ generator: "vendor broke", iterator: "vendor broke" });
    expect((await client.shutdown()).ok).toBe(true);
    const { runs } = await col!.collector.store.queryRuns({ project: "stream-run-failed", limit: 10 });
    expect(runs).toHaveLength(2);
    for (const r of runs as Record<string, any>[]) {
      expect(r.error).toContain("vendor broke");
      expect(r.outputs.messages[0].content).toEqual([{ type: "text", text: "One two" }]);
    }
  });

  it("passes a value given to next() on to a hand-written iterator, and a return() ends the run as cancelled", async () => {
    const client = await withClient("stream-run-next-value");
    const received: unknown[][] = [];
    let i = 0;
    const inner: AsyncIterator<unknown> = {
      next: async (...args: unknown[]) => {
        received.push(args);
        return { done: false, value: sent[i++ % sent.length] };
      },
      return: async () => ({ done: true, value: undefined }),
    };
    const call = new LlmCall(openaiChat, "openai", body, client, {}, "ChatOpenAI");
    const it = call.wrapIterator(inner);
    await it.next();
    await it.next("sent in");
    await it.return!();
    expect(received).toEqual([[], ["sent in"]]);
    const run = await delivered(client, "stream-run-next-value");
    expect(run.error).toBe("cancelled");
    expect(run.outputs.messages[0].content).toEqual([{ type: "text", text: "One two" }]);
  });
});
