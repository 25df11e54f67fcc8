import { describe, expect, it } from "vitest";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { z } from "zod";
import { zodResponseFormat } from "openai/helpers/zod";
import { wrapOpenAI, wrapAnthropic, traceable } from "../../src/tracing/index.js";
import { validate } from "../../src/format/validate.js";
import { costFor } from "../../src/tokens/prices/index.js";
import { TRACING_RECHECK_MS } from "../../src/tracing/context.js";
import { fixture } from "../helpers/replay-server.js";
import { useWrapperReplay } from "../helpers/wrapper-replay.js";

const SECRET = "sk-test-SECRET-do-not-log";

const vendor = useWrapperReplay();

const openai = () => new OpenAI({ apiKey: SECRET, baseURL: `${vendor.server.url}/v1`, maxRetries: 0 });
const anthropic = () => new Anthropic({ apiKey: SECRET, baseURL: vendor.server.url, maxRetries: 0 });
const ask = {
  model: "gpt-4o",
  temperature: 0.2,
  max_tokens: 50,
  messages: [
    { role: "system" as const, content: "Be brief." },
    { role: "user" as const, content: "Weather in Paris?" },
  ],
};

function onlyRun() {
  const runs = vendor.writer.list();
  expect(runs).toHaveLength(1);
  return runs[0]! as Record<string, any>;
}

describe("wrapOpenAI", () => {
  it("records a non-streamed call as an llm run and returns the unwrapped result", async () => {
    vendor.server.push({ json: fixture("openai-completion.json") }, { json: fixture("openai-completion.json") });
    const plain = await openai().chat.completions.create(ask);
    const traced = await wrapOpenAI(openai(), { client: vendor.writer }).chat.completions.create(ask);
    expect(JSON.stringify(traced)).toBe(JSON.stringify(plain));
    const run = onlyRun();
    expect(run).toMatchObject({
      run_type: "llm",
      name: "ChatOpenAI",
      inputs: { messages: [{ role: "system" }, { role: "user", content: [{ type: "text", text: "Weather in Paris?" }] }] },
    });
    expect(run.extra.metadata).toMatchObject({
      trace_provider: "openai",
      trace_model_name: "gpt-4o-2024-08-06",
      invocation_params: { temperature: 0.2, max_tokens: 50 },
    });
    expect(run.outputs.messages[0]).toMatchObject({
      role: "assistant",
      content: [{ type: "text", text: "Paris is 18°C and rainy." }],
      usage_metadata: { input_tokens: 25, output_tokens: 9, total_tokens: 34 },
    });
    // gpt-4o-2024-08-06 is priced as gpt-4o: 25 in at $2.50, 9 out at $10 per million.
    expect(run.outputs.messages[0].usage_metadata).toMatchObject({ input_cost: 0.0000625, output_cost: 0.00009, total_cost: 0.0001525 });
    expect(run.end_time >= run.start_time).toBe(true);
    expect(validate(run.inputs.messages)).toEqual([]);
    expect(validate(run.outputs.messages)).toEqual([]);
  });

  it("passes a stream through byte for byte and stamps new_token between start and end", async () => {
    const chunks = fixture("openai-stream.json");
    vendor.server.push({ sse: chunks, delayMs: 3 }, { sse: chunks, delayMs: 3 });
    const collect = async (c: OpenAI) => {
      const out: unknown[] = [];
      for await (const ch of await c.chat.completions.create({ ...ask, stream: true })) out.push(ch);
      return out;
    };
    const plain = await collect(openai());
    const wrapped = wrapOpenAI(openai(), { client: vendor.writer });
    const stream = await wrapped.chat.completions.create({ ...ask, stream: true });
    expect(stream.constructor.name).toBe("Stream");
    expect(typeof stream.tee).toBe("function");
    expect(typeof stream.toReadableStream).toBe("function");
    expect(stream.controller).toBeInstanceOf(AbortController);
    const seen: unknown[] = [];
    for await (const ch of stream) seen.push(ch);
    expect(JSON.stringify(seen)).toBe(JSON.stringify(plain));
    const run = onlyRun();
    const tok = run.events.find((e: { name: string }) => e.name === "new_token");
    expect(tok).toBeDefined();
    expect(tok.time > run.start_time && tok.time < run.end_time).toBe(true);
    expect(run.outputs.messages[0].content).toEqual([{ type: "text", text: "Hello! How can I help?" }]);
    // No usage in the stream: estimated locally, and marked so.
    expect(run.outputs.messages[0].usage_metadata).toMatchObject({ estimated: true, output_tokens: expect.any(Number) });
    // The estimate is made at delivery, and priced there: the cost carries the same estimated mark.
    const u = run.outputs.messages[0].usage_metadata;
    expect(u.total_cost).toBe(
      costFor({ input_tokens: u.input_tokens, output_tokens: u.output_tokens, total_tokens: u.total_tokens }, "gpt-4o-mini")!.total_cost,
    );
    expect(u.total_cost).toBeGreaterThan(0);
    expect(vendor.server.requests.at(-1)!.body.stream_options).toBeUndefined();
  });

  it("asks for stream usage with includeUsage and records the reported counts", async () => {
    vendor.server.push({ sse: [...fixture("openai-stream.json"), fixture("openai-stream-usage-chunk.json")] });
    const wrapped = wrapOpenAI(openai(), { client: vendor.writer, includeUsage: true });
    for await (const _ of await wrapped.chat.completions.create({ ...ask, stream: true })) void _;
    expect(vendor.server.requests.at(-1)!.body.stream_options).toEqual({ include_usage: true });
    // gpt-4o-mini-2024-07-18 priced as gpt-4o-mini ($0.15 / $0.60 per million).
    expect(onlyRun().outputs.messages[0].usage_metadata).toEqual({
      input_tokens: 12,
      output_tokens: 7,
      total_tokens: 19,
      input_cost: 0.0000018,
      output_cost: 0.0000042,
      total_cost: 0.000006,
    });
  });

  it("traces chat.completions.parse once", async () => {
    const completion = fixture("openai-completion.json");
    completion.choices[0].message.content = '{"city":"Paris","celsius":18}';
    vendor.server.push({ json: completion });
    const wrapped = wrapOpenAI(openai(), { client: vendor.writer });
    const parsed = await wrapped.chat.completions.parse({
      ...ask,
      response_format: zodResponseFormat(z.object({ city: z.string(), celsius: z.number() }), "weather"),
    });
    expect(parsed.choices[0]!.message.parsed).toEqual({ city: "Paris", celsius: 18 });
    expect(onlyRun().outputs.messages[0].content[0].text).toBe('{"city":"Paris","celsius":18}');
  });

  it("traces the .stream() helper once, with its events and finalChatCompletion intact", async () => {
    vendor.server.push({ sse: fixture("openai-stream.json") });
    const wrapped = wrapOpenAI(openai(), { client: vendor.writer });
    const deltas: string[] = [];
    const s = wrapped.chat.completions.stream(ask).on("content", (d) => deltas.push(d));
    const final = await s.finalChatCompletion();
    expect(deltas.join("")).toBe("Hello! How can I help?");
    expect(final.choices[0]!.message.content).toBe("Hello! How can I help?");
    expect(onlyRun().outputs.messages[0].content).toEqual([{ type: "text", text: "Hello! How can I help?" }]);
  });

  it("keeps tee() working and counts each chunk once", async () => {
    vendor.server.push({ sse: fixture("openai-stream.json") });
    const wrapped = wrapOpenAI(openai(), { client: vendor.writer });
    const [a, b] = (await wrapped.chat.completions.create({ ...ask, stream: true })).tee();
    const read = async (s: AsyncIterable<{ choices: { delta: { content?: string | null } }[] }>) => {
      let t = "";
      for await (const c of s) t += c.choices[0]?.delta.content ?? "";
      return t;
    };
    expect(await read(a)).toBe("Hello! How can I help?");
    expect(await read(b)).toBe("Hello! How can I help?");
    expect(onlyRun().outputs.messages[0].content[0].text).toBe("Hello! How can I help?");
  });

  it("records an abandoned stream as cancelled and keeps the partial output", async () => {
    vendor.server.push({ sse: fixture("openai-stream.json"), delayMs: 2 });
    const wrapped = wrapOpenAI(openai(), { client: vendor.writer });
    let n = 0;
    for await (const _ of await wrapped.chat.completions.create({ ...ask, stream: true })) if (++n === 3) break;
    const run = onlyRun();
    expect(run.error).toBe("cancelled");
    expect(run.outputs.messages[0].content[0].text).toBe("Hello!");
  });

  it("ends the run of a call whose caller reads the raw response (asResponse), and records withResponse's parsed result once", async () => {
    vendor.server.push({ json: fixture("openai-completion.json") }, { json: fixture("openai-completion.json") });
    const client = wrapOpenAI(openai(), { client: vendor.writer });
    const raw = await client.chat.completions.create(ask).asResponse();
    // The caller's Response is untouched: its body is theirs to read.
    expect(raw.bodyUsed).toBe(false);
    expect(((await raw.json()) as { model: string }).model).toBe("gpt-4o-2024-08-06");
    const unread = onlyRun();
    expect(unread.end_time >= unread.start_time).toBe(true);
    expect(unread.error).toBeUndefined();
    expect(unread.extra.metadata.unparsed_response).toEqual({ status: 200, reason: "the caller read the raw response (asResponse)" });

    vendor.freshWriter();
    const { data, response } = await wrapOpenAI(openai(), { client: vendor.writer }).chat.completions.create(ask).withResponse();
    expect(response.status).toBe(200);
    expect(data.choices[0]!.message.content).toBe("Paris is 18°C and rainy.");
    const parsed = onlyRun();
    expect(parsed.outputs.messages[0]).toMatchObject({ role: "assistant", content: [{ type: "text", text: "Paris is 18°C and rainy." }] });
    expect(parsed.extra.metadata.unparsed_response).toBeUndefined();
  });

  it("traces calls made through a clone from withOptions(), once each, with the wrapper's options", async () => {
    vendor.server.push({ json: fixture("openai-completion.json") }, { json: fixture("openai-completion.json") });
    const client = wrapOpenAI(wrapOpenAI(openai(), { client: vendor.writer, name: "outer" }), { client: vendor.writer });
    const clone = client.withOptions({ timeout: 5000 });
    expect(clone).toBeInstanceOf(OpenAI);
    expect(clone).not.toBe(client);
    const reply = await clone.chat.completions.create(ask);
    expect(reply.choices[0]!.message.content).toBe("Paris is 18°C and rainy.");
    // A clone of a clone (and an unbound call) is traced the same way.
    const { withOptions } = clone;
    await withOptions({ maxRetries: 0 }).chat.completions.create(ask);
    const runs = vendor.writer.list();
    expect(runs.map((r) => r.name)).toEqual(["outer", "outer"]);
    expect(Object.keys(client)).toEqual(Object.keys(openai()));
  });

  it("records and rethrows a vendor 4xx unchanged", async () => {
    vendor.server.push({ status: 400, json: { error: { message: "bad model", type: "invalid_request_error", code: "model_not_found" } } });
    const wrapped = wrapOpenAI(openai(), { client: vendor.writer });
    const err = await wrapped.chat.completions.create(ask).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    await new Promise((r) => setTimeout(r, 10));
    expect(onlyRun().error).toMatch(/bad model/);
  });

  it("records and rethrows a stream that breaks off", async () => {
    vendor.server.push({ sse: fixture("openai-stream.json"), breakAfter: 3 });
    const wrapped = wrapOpenAI(openai(), { client: vendor.writer });
    const err = await (async () => {
      for await (const _ of await wrapped.chat.completions.create({ ...ask, stream: true })) void _;
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    const run = onlyRun();
    expect(run.error).toBeTruthy();
    expect(run.outputs.messages[0].content[0].text).toBe("Hello!");
  });

  it("nests under traceable and keeps secrets out of every run", async () => {
    vendor.server.push({ json: fixture("openai-completion.json") });
    const wrapped = wrapOpenAI(openai(), { client: vendor.writer });
    const pipeline = traceable(
      async (q: string) =>
        (await wrapped.chat.completions.create({ ...ask, messages: [{ role: "user", content: q }] })).choices[0]!.message.content,
      { name: "pipeline", client: vendor.writer },
    );
    await pipeline("Weather?");
    const runs = vendor.writer.list();
    const root = runs.find((r) => r.name === "pipeline")!;
    const llm = runs.find((r) => r.run_type === "llm")!;
    expect(llm.parent_run_id).toBe(root.id);
    expect(llm.trace_id).toBe(root.id);
    expect(llm.dotted_order.startsWith(root.dotted_order + ".")).toBe(true);
    expect(JSON.stringify(vendor.writer.calls)).not.toContain(SECRET);
    expect(JSON.stringify(vendor.writer.calls)).not.toMatch(/authorization/i);
  });

  it("never changes what the caller gets when the run writer throws, streamed or not", async () => {
    vendor.server.push(...[1, 2, 3].map(() => ({ json: fixture("openai-completion.json") })), { sse: fixture("openai-stream.json") });
    const plain = await openai().chat.completions.create(ask);
    const throwing = (at: "create" | "update") => ({
      createRun: () => {
        if (at === "create") throw new Error("writer down");
      },
      updateRun: () => {
        throw new Error("writer down");
      },
    });
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on("unhandledRejection", onUnhandled);
    try {
      expect(await wrapOpenAI(openai(), { client: throwing("create") }).chat.completions.create(ask)).toEqual(plain);
      const client = wrapOpenAI(openai(), { client: throwing("update") });
      expect(await client.chat.completions.create(ask)).toEqual(plain);
      let text = "";
      for await (const chunk of await client.chat.completions.create({ ...ask, stream: true }))
        text += chunk.choices[0]?.delta?.content ?? "";
      expect(text.length).toBeGreaterThan(0);
      await new Promise((r) => setTimeout(r, 20));
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
    expect(unhandled).toEqual([]);
  });

  it("redacts with processInputs and processOutputs", async () => {
    vendor.server.push({ json: fixture("openai-completion.json") });
    const wrapped = wrapOpenAI(openai(), {
      client: vendor.writer,
      processInputs: () => ({ redacted: true }),
      processOutputs: () => ({ redacted: true }),
    });
    await wrapped.chat.completions.create(ask);
    expect(onlyRun()).toMatchObject({ inputs: { redacted: true }, outputs: { redacted: true } });
  });
});

describe("wrapAnthropic", () => {
  const req = {
    model: "claude-sonnet-4-5",
    max_tokens: 100,
    system: "Be brief.",
    messages: [{ role: "user" as const, content: "Say hi in French" }],
  };

  it("records messages.create with cache tokens folded into input_tokens", async () => {
    vendor.server.push({ json: fixture("anthropic-message.json") }, { json: fixture("anthropic-message.json") });
    const plain = await anthropic().messages.create(req);
    const traced = await wrapAnthropic(anthropic(), { client: vendor.writer }).messages.create(req);
    expect(JSON.stringify(traced)).toBe(JSON.stringify(plain));
    const run = onlyRun();
    expect(run.extra.metadata).toMatchObject({
      trace_provider: "anthropic",
      trace_model_name: "claude-sonnet-4-5-20250929",
      invocation_params: { max_tokens: 100 },
    });
    expect(run.inputs.messages[0]).toEqual({ role: "system", content: [{ type: "text", text: "Be brief." }] });
    // claude-sonnet-4-5: 14 uncached at $3, 100 cache hits at $0.30, 5 out at $15 per million.
    expect(run.outputs.messages[0].usage_metadata).toEqual({
      input_tokens: 114,
      output_tokens: 5,
      total_tokens: 119,
      input_token_details: { cache_read: 100, cache_creation: 0 },
      input_cost: 0.000072,
      output_cost: 0.000075,
      total_cost: 0.000147,
      input_cost_details: { cache_read: 0.00003 },
    });
  });

  it("records a streamed create with new_token and the cumulative usage", async () => {
    vendor.server.push(
      { sse: fixture("anthropic-stream.json"), anthropic: true, delayMs: 2 },
      { sse: fixture("anthropic-stream.json"), anthropic: true },
    );
    const read = async (c: Anthropic) => {
      const events: unknown[] = [];
      for await (const ev of await c.messages.create({ ...req, stream: true })) events.push(ev);
      return JSON.stringify(events);
    };
    const traced = await read(wrapAnthropic(anthropic(), { client: vendor.writer }));
    expect(traced).toBe(await read(anthropic()));
    const run = onlyRun();
    expect(run.events.map((e: { name: string }) => e.name)).toContain("new_token");
    expect(run.outputs.messages[0].content).toEqual([{ type: "text", text: "Hi there" }]);
    expect(run.outputs.messages[0].usage_metadata).toMatchObject({ input_tokens: 20, output_tokens: 6 });
  });

  it("traces messages.stream() once and finalMessage() still works", async () => {
    vendor.server.push({ sse: fixture("anthropic-stream.json"), anthropic: true });
    const wrapped = wrapAnthropic(anthropic(), { client: vendor.writer });
    const final = await wrapped.messages.stream(req).finalMessage();
    expect(final.content).toEqual(
      [{ type: "text", text: "Hi there", citations: null }].map((b) =>
        final.content[0] && "citations" in final.content[0] ? b : { type: b.type, text: b.text },
      ),
    );
    expect(onlyRun().outputs.messages[0].content[0].text).toBe("Hi there");
  });

  it("ends the run of a call whose caller reads the raw response", async () => {
    vendor.server.push({ json: fixture("anthropic-message.json") });
    const raw = await wrapAnthropic(anthropic(), { client: vendor.writer })
      .messages.create({ model: "claude-sonnet-4-5", max_tokens: 50, messages: [{ role: "user", content: "Weather in Paris?" }] })
      .asResponse();
    expect(raw.status).toBe(200);
    expect(raw.bodyUsed).toBe(false);
    const run = onlyRun();
    expect(run.end_time >= run.start_time).toBe(true);
    expect(run.extra.metadata.unparsed_response).toEqual({ status: 200, reason: "the caller read the raw response (asResponse)" });
  });

  it("traces calls made through a clone from withOptions()", async () => {
    vendor.server.push({ json: fixture("anthropic-message.json") });
    const clone = wrapAnthropic(anthropic(), { client: vendor.writer }).withOptions({ timeout: 5000 });
    expect(clone).toBeInstanceOf(Anthropic);
    await clone.messages.create(req);
    expect(onlyRun()).toMatchObject({ run_type: "llm", name: "ChatAnthropic" });
  });

  it("traces beta.messages: create, and stream() once with finalMessage() intact", async () => {
    vendor.server.push({ json: fixture("anthropic-message.json") }, { sse: fixture("anthropic-stream.json"), anthropic: true });
    const wrapped = wrapAnthropic(anthropic(), { client: vendor.writer });
    const msg = await wrapped.beta.messages.create({ ...req, betas: ["token-efficient-tools-2025-02-19"] });
    expect(msg.content[0]).toMatchObject({ type: "text" });
    const final = await wrapped.beta.messages.stream(req).finalMessage();
    expect(final.content[0]).toMatchObject({ type: "text", text: "Hi there" });
    // Both went out as the beta resource sends them unwrapped.
    const sent = vendor.server.requests.slice(-2);
    expect(sent.map((r) => r.path)).toEqual(["/v1/messages", "/v1/messages"]);
    expect(sent[0]!.headers["anthropic-beta"]).toBe("token-efficient-tools-2025-02-19");
    const runs = vendor.writer.list() as Record<string, any>[];
    expect(runs).toHaveLength(2);
    for (const run of runs) {
      expect(run).toMatchObject({ run_type: "llm", name: "ChatAnthropic", extra: { metadata: { trace_provider: "anthropic" } } });
      expect(run.inputs.messages.at(-1)).toEqual({ role: "user", content: [{ type: "text", text: "Say hi in French" }] });
    }
    expect(runs[1]!.outputs.messages[0].content[0].text).toBe("Hi there");
    expect(runs[1]!.events.map((e: { name: string }) => e.name)).toContain("new_token");
  });

  it("records and rethrows a vendor error", async () => {
    vendor.server.push({ status: 529, json: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } });
    const wrapped = wrapAnthropic(anthropic(), { client: vendor.writer });
    await expect(wrapped.messages.create(req)).rejects.toBeInstanceOf(Anthropic.APIError);
    await new Promise((r) => setTimeout(r, 10));
    expect(onlyRun().error).toMatch(/Overloaded/);
  });
});

describe("TRACEPIPE_TRACING=false", () => {
  it("switches a client wrapped before it off and on again within TRACING_RECHECK_MS of each change", async () => {
    const prev = process.env.TRACEPIPE_TRACING;
    const wrapped = wrapOpenAI(openai(), { client: vendor.writer });
    // Waiting past the recheck period (a lower bound: a slower machine only waits longer).
    const pastRecheck = () => new Promise((r) => setTimeout(r, TRACING_RECHECK_MS + 50));
    try {
      await pastRecheck();
      vendor.server.push({ json: fixture("openai-completion.json") });
      await wrapped.chat.completions.create(ask);
      expect(vendor.writer.list()).toHaveLength(1);
      process.env.TRACEPIPE_TRACING = "false";
      await pastRecheck();
      vendor.server.push({ json: fixture("openai-completion.json") });
      await wrapped.chat.completions.create(ask);
      expect(vendor.writer.list()).toHaveLength(1);
      delete process.env.TRACEPIPE_TRACING;
      await pastRecheck();
      vendor.server.push({ json: fixture("openai-completion.json") });
      await wrapped.chat.completions.create(ask);
      expect(vendor.writer.list()).toHaveLength(2);
    } finally {
      if (prev === undefined) delete process.env.TRACEPIPE_TRACING;
      else process.env.TRACEPIPE_TRACING = prev;
    }
  });

  it("returns the client and functions untouched", () => {
    const prev = process.env.TRACEPIPE_TRACING;
    process.env.TRACEPIPE_TRACING = "false";
    try {
      const c = openai();
      const create = c.chat.completions.create;
      expect(wrapOpenAI(c, { client: vendor.writer }).chat.completions.create).toBe(create);
      const fn = (x: number) => x + 1;
      expect(traceable(fn, { client: vendor.writer })).toBe(fn);
    } finally {
      if (prev === undefined) delete process.env.TRACEPIPE_TRACING;
      else process.env.TRACEPIPE_TRACING = prev;
    }
  });
});

describe("a failed call the app never awaits", () => {
  const bad = { status: 400, json: { error: { message: "bad model", type: "invalid_request_error" } } };
  /** The unhandled rejections Node reports while `call` runs and fails, unawaited. */
  async function reported(call: () => unknown, waitMs = 1000): Promise<unknown[]> {
    const seen: unknown[] = [];
    const onUnhandled = (reason: unknown) => seen.push(reason);
    process.prependListener("unhandledRejection", onUnhandled);
    try {
      vendor.server.push(bad);
      void call();
      for (let i = 0; i < waitMs / 10 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
    return seen;
  }
  const aReq = { model: "claude-sonnet-4-5", max_tokens: 16, messages: [{ role: "user" as const, content: "hi" }] };

  it("is still reported as an unhandled rejection, as with the bare SDK, and recorded", async () => {
    const calls: Record<string, [() => unknown, () => unknown]> = {
      "openai chat": [
        () => openai().chat.completions.create(ask),
        () => wrapOpenAI(openai(), { client: vendor.writer }).chat.completions.create(ask),
      ],
      "openai stream": [
        () => openai().chat.completions.create({ ...ask, stream: true }),
        () => wrapOpenAI(openai(), { client: vendor.writer }).chat.completions.create({ ...ask, stream: true }),
      ],
      "openai asResponse": [
        () => openai().chat.completions.create(ask).asResponse(),
        () => wrapOpenAI(openai(), { client: vendor.writer }).chat.completions.create(ask).asResponse(),
      ],
      anthropic: [
        () => anthropic().messages.create(aReq),
        () => wrapAnthropic(anthropic(), { client: vendor.writer }).messages.create(aReq),
      ],
    };
    for (const [name, [bare, wrapped]] of Object.entries(calls)) {
      const expected = await reported(bare);
      expect(expected, name).toHaveLength(1);
      const got = await reported(wrapped);
      expect(got, name).toHaveLength(1);
      expect((got[0] as Error).constructor, name).toBe((expected[0] as Error).constructor);
      expect((got[0] as Error).message, name).toBe((expected[0] as Error).message);
    }
    const runs = vendor.writer.list() as Record<string, any>[];
    expect(runs).toHaveLength(4);
    for (const run of runs) expect(run.error).toMatch(/400/);
  });

  it("awaited, rejects once and leaves nothing unhandled", async () => {
    const seen = await reported(
      () =>
        wrapOpenAI(openai(), { client: vendor.writer })
          .chat.completions.create(ask)
          .catch(() => undefined),
      200,
    );
    expect(seen).toEqual([]);
    expect((onlyRun() as Record<string, any>).error).toMatch(/400/);
  });
});
