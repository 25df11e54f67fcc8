/**
 * wrapGemini over the real `@google/genai` client, talking to the replay
 * server, with runs delivered through the real ingest Client to a real
 * embedded SQLite store and read back from it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { ApiError, GoogleGenAI, GenerateContentResponse, type Content } from "@google/genai";
import { wrapGemini, traceable } from "../../src/tracing/index.js";
import { Client } from "../../src/ingest/client.js";
import { openStore, type Store, type StoredRun } from "../../src/store/index.js";
import { validate } from "../../src/format/validate.js";
import type { RunWriter } from "../../src/run/writer.js";
import { fixture } from "../helpers/replay-server.js";
import { useWrapperReplay } from "../helpers/wrapper-replay.js";
import { tempDir } from "../helpers/runs.js";

const SECRET = "AIza-test-SECRET-do-not-log";

const vendor = useWrapperReplay();
let dbPath: string;
let client: Client;
let store: Store;
beforeAll(async () => {
  const dir = tempDir("tp-gemini-");
  dbPath = join(dir, "traces.db");
  client = new Client({ dbPath, spoolDir: join(dir, "spool"), exitHooks: false, warn: () => {} });
  store = await openStore(dbPath);
});
afterAll(async () => {
  await client.shutdown();
  store.close();
});

let projects = 0;
/** A fresh project per test, so each test reads only its own runs. */
function project(): string {
  return `gemini-${++projects}`;
}

const genai = () => new GoogleGenAI({ apiKey: SECRET, httpOptions: { baseUrl: vendor.server.url } });

/** Stored runs, loosely typed: the tests read deep into messages. */
type Stored = Record<string, any>;

async function stored(p: string): Promise<Stored[]> {
  await client.flush();
  return (await store.queryRuns({ project: p })).runs satisfies StoredRun[] as Stored[];
}

async function onlyRun(p: string): Promise<Stored> {
  const runs = await stored(p);
  expect(runs).toHaveLength(1);
  return runs[0]!;
}

/** A reply as the caller sees it, without the transport headers (their `date` differs between two calls). */
function body(v: unknown): string {
  const { sdkHttpResponse: _h, ...rest } = v as Record<string, unknown>;
  return JSON.stringify(rest);
}

const ask = {
  model: "gemini-2.5-flash",
  contents: "Weather in Paris?",
  config: { systemInstruction: "Be brief.", temperature: 0.2, httpOptions: { headers: { "x-goog-api-key": SECRET } } },
};

describe("wrapGemini: models.generateContent", () => {
  it("records one llm run with native messages, provider, model and usage, and returns the unwrapped result", async () => {
    const p = project();
    vendor.server.push({ json: fixture("gemini-response.json") }, { json: fixture("gemini-response.json") });
    const plain = await genai().models.generateContent(ask);
    const traced = await wrapGemini(genai(), { client, project: p }).models.generateContent(ask);
    expect(traced).toBeInstanceOf(GenerateContentResponse);
    expect(body(traced)).toBe(body(plain));
    expect(traced.text).toBe("Paris is 18°C and rainy.");
    expect(vendor.server.requests.at(-1)!.path).toBe("/v1beta/models/gemini-2.5-flash:generateContent");
    const run = await onlyRun(p);
    expect(run).toMatchObject({ run_type: "llm", name: "ChatGoogleGenerativeAI" });
    expect(run.inputs.messages).toEqual([
      { role: "system", content: [{ type: "text", text: "Be brief." }] },
      { role: "user", content: [{ type: "text", text: "Weather in Paris?" }] },
    ]);
    expect(run.extra!.metadata).toMatchObject({
      trace_provider: "google",
      trace_model_name: "gemini-2.5-flash",
      invocation_params: { temperature: 0.2 },
    });
    const out = run.outputs!.messages[0];
    expect(out.content).toEqual([
      { type: "reasoning", text: "The user wants a short answer about the weather." },
      { type: "text", text: "Paris is 18°C and rainy.", extras: { signature: "CiQBVKhc7vZ3mGq2wJ0sYk1" } },
    ]);
    expect(out.extras).toMatchObject({ finishReason: "STOP", responseId: "mSxBafa3LtWhz7IP0ebH0QQ", safetyRatings: expect.any(Array) });
    expect(out.usage_metadata).toMatchObject({
      input_tokens: 24,
      output_tokens: 21,
      total_tokens: 45,
      input_token_details: { cache_read: 16 },
      output_token_details: { reasoning: 12 },
    });
    // gemini-2.5-flash's row: 0.30 / 0.03 (cache read) / 2.50 USD per million tokens.
    expect(out.usage_metadata.input_cost).toBeCloseTo(8 * 0.3e-6 + 16 * 0.03e-6, 15);
    expect(out.usage_metadata.output_cost).toBeCloseTo(21 * 2.5e-6, 15);
    expect(out.usage_metadata.total_cost).toBeCloseTo(8 * 0.3e-6 + 16 * 0.03e-6 + 21 * 2.5e-6, 15);
    expect(validate([...run.inputs.messages, ...run.outputs!.messages])).toEqual([]);
    // Neither the key, nor the headers the caller set, nor the response headers the SDK attaches.
    const text = JSON.stringify(run);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain("sdkHttpResponse");
    expect(text).not.toMatch(/x-request-id/);
  });

  it("records a function-calling round trip with each response linked to its call", async () => {
    const p = project();
    vendor.server.push({ json: fixture("gemini-function-call.json") }, { json: fixture("gemini-function-reply.json") });
    const ai = wrapGemini(genai(), { client, project: p });
    const tools = [
      {
        functionDeclarations: [
          {
            name: "get_weather",
            description: "Current weather",
            parametersJsonSchema: { type: "object", properties: { city: { type: "string" } } },
          },
        ],
      },
    ];
    const history: Content[] = [{ role: "user", parts: [{ text: "Weather in Paris?" }] }];
    const first = await ai.models.generateContent({ model: "gemini-2.5-flash", contents: history, config: { tools } });
    const fc = first.functionCalls![0]!;
    expect(fc).toMatchObject({ name: "get_weather", args: { city: "Paris", unit: "celsius" } });
    history.push(first.candidates![0]!.content!, {
      role: "user",
      parts: [{ functionResponse: { name: fc.name, response: { output: { celsius: 18, sky: "rain" } } } }],
    });
    const second = await ai.models.generateContent({ model: "gemini-2.5-flash", contents: history, config: { tools } });
    expect(second.text).toBe("It is 18°C in Paris, with light rain.");

    const runs = (await stored(p)).sort((a, b) => String(a.start_time).localeCompare(String(b.start_time)));
    expect(runs).toHaveLength(2);
    const call = runs[0]!.outputs!.messages[0].content[0];
    expect(call).toMatchObject({
      type: "tool_call",
      name: "get_weather",
      args: { city: "Paris", unit: "celsius" },
      extras: { signature: "CiIBVKhc7jq2k1yD8lXr0aQ", id_synthesized: true },
    });
    expect(runs[0]!.outputs!.messages[0].usage_metadata).toMatchObject({
      input_tokens: 61,
      output_tokens: 68,
      total_tokens: 129,
      output_token_details: { reasoning: 50 },
    });
    const inputs = runs[1]!.inputs.messages;
    expect(inputs.map((m: { role: string }) => m.role)).toEqual(["user", "assistant", "tool"]);
    const id = inputs[1].content[0].id;
    expect(typeof id).toBe("string");
    expect(inputs[2]).toEqual({
      role: "tool",
      tool_call_id: id,
      content: [{ type: "text", text: '{"output":{"celsius":18,"sky":"rain"}}' }],
      extras: { name: "get_weather" },
    });
    expect(runs[1]!.extra!.metadata.invocation_params.tools).toEqual(tools);
    expect(validate([...inputs, ...runs[1]!.outputs!.messages], { strict: false })).toEqual([]);
  });

  it("records and rethrows a vendor error unchanged", async () => {
    const p = project();
    vendor.server.push({ status: 400, json: fixture("gemini-error.json") }, { status: 400, json: fixture("gemini-error.json") });
    const plainErr = await genai()
      .models.generateContent(ask)
      .catch((e: unknown) => e);
    const err = await wrapGemini(genai(), { client, project: p })
      .models.generateContent(ask)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(400);
    expect((err as Error).message).toBe((plainErr as Error).message);
    const run = await onlyRun(p);
    expect(run.error).toMatch(/unexpected model name format/);
    expect(run.end_time).toBeTruthy();
  });

  it("leaves a failed call the app never awaits reported as an unhandled rejection, as the bare SDK does", async () => {
    const p = project();
    const reported = async (call: () => Promise<unknown>): Promise<unknown[]> => {
      const seen: unknown[] = [];
      const onUnhandled = (reason: unknown) => seen.push(reason);
      process.prependListener("unhandledRejection", onUnhandled);
      try {
        void call();
        for (let i = 0; i < 100 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      } finally {
        process.off("unhandledRejection", onUnhandled);
      }
      return seen;
    };
    vendor.server.push({ status: 400, json: fixture("gemini-error.json") }, { status: 400, json: fixture("gemini-error.json") });
    const bare = await reported(() => genai().models.generateContent(ask));
    expect(bare).toHaveLength(1);
    const wrapped = await reported(() => wrapGemini(genai(), { client, project: p }).models.generateContent(ask));
    expect(wrapped).toHaveLength(1);
    expect(wrapped[0]).toBeInstanceOf(ApiError);
    expect((wrapped[0] as Error).message).toBe((bare[0] as Error).message);
    expect((await onlyRun(p)).error).toMatch(/unexpected model name format/);

    vendor.server.push({ status: 400, json: fixture("gemini-error.json") });
    const stream = await reported(() => wrapGemini(genai(), { client, project: project() }).models.generateContentStream(ask));
    expect(stream).toHaveLength(1);
    expect(stream[0]).toBeInstanceOf(ApiError);
  });

  it("traces chat sessions (chats.create().sendMessage) once per message", async () => {
    const p = project();
    vendor.server.push({ json: fixture("gemini-response.json") });
    const ai = wrapGemini(genai(), { client, project: p });
    const chat = ai.chats.create({ model: "gemini-2.5-flash", config: { systemInstruction: "Be brief." } });
    const reply = await chat.sendMessage({ message: "Weather in Paris?" });
    expect(reply.text).toBe("Paris is 18°C and rainy.");
    const run = await onlyRun(p);
    expect(run.inputs.messages.map((m: { role: string }) => m.role)).toEqual(["system", "user"]);
  });

  it("nests under traceable", async () => {
    const p = project();
    vendor.server.push({ json: fixture("gemini-response.json") });
    const ai = wrapGemini(genai(), { client, project: p });
    const answer = traceable(async (q: string) => (await ai.models.generateContent({ model: "gemini-2.5-flash", contents: q })).text, {
      name: "answer",
      client,
      project: p,
    });
    expect(await answer("Weather?")).toBe("Paris is 18°C and rainy.");
    const runs = await stored(p);
    const root = runs.find((r) => r.name === "answer")!;
    const llm = runs.find((r) => r.run_type === "llm")!;
    expect(llm.parent_run_id).toBe(root.id);
    expect(llm.trace_id).toBe(root.id);
  });
});

describe("wrapGemini: models.generateContentStream", () => {
  const collect = async (ai: GoogleGenAI) => {
    const out: GenerateContentResponse[] = [];
    for await (const chunk of await ai.models.generateContentStream(ask)) out.push(chunk);
    return out;
  };

  it("passes every chunk through as the SDK yields it, stamps new_token, and takes usage from the last chunk", async () => {
    const p = project();
    const chunks = fixture("gemini-stream.json");
    vendor.server.push({ sse: chunks, bare: true, delayMs: 3 }, { sse: chunks, bare: true, delayMs: 3 });
    const plain = await collect(genai());
    const traced = await collect(wrapGemini(genai(), { client, project: p }));
    expect(traced.map(body)).toEqual(plain.map(body));
    expect(traced.every((c) => c instanceof GenerateContentResponse)).toBe(true);
    expect(traced.map((c) => c.text ?? "").join("")).toBe("Bonjour ! Comment allez-vous ?");
    expect(vendor.server.requests.at(-1)!.path).toBe("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
    const run = await onlyRun(p);
    expect(run.error ?? undefined).toBeUndefined();
    const tok = run.events.find((e: { name: string }) => e.name === "new_token")!;
    expect(tok).toBeDefined();
    expect(tok.time > run.start_time && tok.time < run.end_time!).toBe(true);
    expect(run.first_token_time).toBe(tok.time);
    expect(run.extra!.metadata).toMatchObject({ trace_provider: "google", trace_model_name: "gemini-2.5-flash" });
    const out = run.outputs!.messages[0];
    expect(out.content).toEqual([{ type: "text", text: "Bonjour ! Comment allez-vous ?" }]);
    expect(out.usage_metadata).toMatchObject({
      input_tokens: 8,
      output_tokens: 25,
      total_tokens: 33,
      output_token_details: { reasoning: 18 },
    });
    expect(out.usage_metadata.estimated).toBeUndefined();
    expect(out.usage_metadata.total_cost).toBeCloseTo(8 * 0.3e-6 + 25 * 2.5e-6, 15);
    expect(JSON.stringify(run)).not.toContain(SECRET);
  });

  it("ends the run as cancelled with the partial output when the caller breaks early", async () => {
    const p = project();
    vendor.server.push({ sse: fixture("gemini-stream.json"), bare: true, delayMs: 5 });
    const ai = wrapGemini(genai(), { client, project: p });
    let text = "";
    for await (const chunk of await ai.models.generateContentStream(ask)) {
      text += chunk.text ?? "";
      break;
    }
    expect(text).toBe("Bonjour");
    const run = await onlyRun(p);
    expect(run.error).toBe("cancelled");
    expect(run.outputs!.messages[0].content).toEqual([{ type: "text", text: "Bonjour" }]);
    expect(run.events.some((e: { name: string }) => e.name === "new_token")).toBe(true);
  });

  it("traces a chat session's sendMessageStream once, with its stream folded", async () => {
    const p = project();
    vendor.server.push({ sse: fixture("gemini-stream.json"), bare: true });
    const chat = wrapGemini(genai(), { client, project: p }).chats.create({ model: "gemini-2.5-flash" });
    let text = "";
    for await (const chunk of await chat.sendMessageStream({ message: "Say hello in French" })) text += chunk.text ?? "";
    expect(text).toBe("Bonjour ! Comment allez-vous ?");
    const run = await onlyRun(p);
    expect(run.inputs.messages).toEqual([{ role: "user", content: [{ type: "text", text: "Say hello in French" }] }]);
    expect(run.outputs.messages[0].content).toEqual([{ type: "text", text: "Bonjour ! Comment allez-vous ?" }]);
    expect(run.events.some((e: { name: string }) => e.name === "new_token")).toBe(true);
  });

  it("records and rethrows an HTTP error before the stream starts", async () => {
    const p = project();
    vendor.server.push({ status: 400, json: fixture("gemini-error.json") });
    const ai = wrapGemini(genai(), { client, project: p });
    const err = await ai.models.generateContentStream(ask).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    const run = await onlyRun(p);
    expect(run.error).toMatch(/unexpected model name format/);
  });

  it("records and rethrows a stream that breaks off, keeping what arrived", async () => {
    const p = project();
    vendor.server.push({ sse: fixture("gemini-stream.json"), bare: true, breakAfter: 2 });
    const ai = wrapGemini(genai(), { client, project: p });
    let text = "";
    const err = await (async () => {
      for await (const chunk of await ai.models.generateContentStream(ask)) text += chunk.text ?? "";
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(text).toBe("Bonjour ! Comment");
    const run = await onlyRun(p);
    expect(run.error).toBeTruthy();
    expect(run.outputs!.messages[0].content[0].text).toBe("Bonjour ! Comment");
  });
});

describe("wrapGemini: wrapping", () => {
  it("traces once when wrapped twice", async () => {
    const p = project();
    vendor.server.push({ json: fixture("gemini-response.json") });
    const ai = wrapGemini(wrapGemini(genai(), { client, project: p }), { client, project: p });
    await ai.models.generateContent(ask);
    expect(await stored(p)).toHaveLength(1);
  });

  it("leaves the client untouched when TRACEPIPE_TRACING=false", () => {
    const prev = process.env.TRACEPIPE_TRACING;
    process.env.TRACEPIPE_TRACING = "false";
    try {
      const ai = genai();
      const { generateContent, generateContentStream } = ai.models;
      expect(wrapGemini(ai, { client })).toBe(ai);
      expect(ai.models.generateContent).toBe(generateContent);
      expect(ai.models.generateContentStream).toBe(generateContentStream);
    } finally {
      if (prev === undefined) delete process.env.TRACEPIPE_TRACING;
      else process.env.TRACEPIPE_TRACING = prev;
    }
  });

  it("never throws into the caller when recording fails: the calls still return what the SDK returned", async () => {
    vendor.server.push(
      { json: fixture("gemini-response.json") },
      { json: fixture("gemini-response.json") },
      { sse: fixture("gemini-stream.json"), bare: true },
    );
    const broken: RunWriter = {
      createRun: () => {
        throw new Error("writer down");
      },
      updateRun: () => {
        throw new Error("writer down");
      },
    };
    const failingAtEnd: RunWriter = {
      createRun: () => {},
      updateRun: () => {
        throw new Error("writer down");
      },
    };
    expect((await wrapGemini(genai(), { client: broken }).models.generateContent(ask)).text).toBe("Paris is 18°C and rainy.");
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on("unhandledRejection", onUnhandled);
    try {
      const ai = wrapGemini(genai(), { client: failingAtEnd });
      expect((await ai.models.generateContent(ask)).text).toBe("Paris is 18°C and rainy.");
      let text = "";
      for await (const chunk of await ai.models.generateContentStream(ask)) text += chunk.text ?? "";
      expect(text).toBe("Bonjour ! Comment allez-vous ?");
      await new Promise((r) => setTimeout(r, 20));
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
    expect(unhandled).toEqual([]);
  });

  it("rejects what is not a Gemini client with a TypeError", () => {
    expect(() => wrapGemini({ chat: {} }, { client })).toThrow(TypeError);
  });
});
