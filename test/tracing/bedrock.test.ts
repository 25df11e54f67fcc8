import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import {
  BedrockRuntimeClient,
  ConverseCommand,
  ConverseStreamCommand,
  CountTokensCommand,
  type ConverseCommandInput,
  type Message as BedrockMessage,
} from "@aws-sdk/client-bedrock-runtime";
import { wrapBedrock } from "../../src/index.js";
import { traceable } from "../../src/tracing/index.js";
import { Client } from "../../src/ingest/index.js";
import { validate } from "../../src/format/validate.js";
import { fixture } from "../helpers/replay-server.js";
import { useWrapperReplay } from "../helpers/wrapper-replay.js";
import { startCollector, type Running } from "../helpers/collector.js";
import { tempDir } from "../helpers/runs.js";
import { costFor } from "../../src/tokens/prices/index.js";
import type { UsageMetadata } from "../../src/format/schema.js";

const SECRET = "wJalrXUtnFEMI-SECRET-do-not-log";
// An inference profile id: kept as given, not shortened to a model family.
const MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";

/** Reported tokens and, since Bedrock's Claude ids resolve to a priced model, their cost. */
function priced(tokens: UsageMetadata): UsageMetadata {
  const cost = costFor(tokens, MODEL);
  expect(cost?.total_cost).toBeGreaterThan(0);
  return { ...tokens, ...cost };
}
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

// The client's default handler speaks HTTP/2 to an http:// endpoint.
const vendor = useWrapperReplay({ http2: true });

const bedrock = (maxAttempts = 1) =>
  new BedrockRuntimeClient({
    region: "us-east-1",
    endpoint: vendor.server.url,
    credentials: { accessKeyId: "AKIAEXAMPLE", secretAccessKey: SECRET },
    maxAttempts,
  });

const ask: ConverseCommandInput = {
  modelId: MODEL,
  system: [{ text: "Answer in French." }, { cachePoint: { type: "default" } }],
  messages: [{ role: "user", content: [{ text: "Weather in Paris?" }, { image: { format: "png", source: { bytes: PNG } } }] }],
  inferenceConfig: { maxTokens: 200, temperature: 0.2 },
};

function onlyRun() {
  const runs = vendor.writer.list();
  expect(runs).toHaveLength(1);
  return runs[0]! as Record<string, any>;
}

/** Everything but the per-request `$metadata` (request ids differ between two calls). */
function body(out: object): string {
  const { $metadata: _, ...rest } = out as { $metadata?: unknown };
  return JSON.stringify(rest);
}

async function readAll(stream: AsyncIterable<unknown> | undefined): Promise<unknown[]> {
  const events: unknown[] = [];
  for await (const ev of stream!) events.push(ev);
  return events;
}

describe("wrapBedrock: Converse", () => {
  it("records one llm run with native messages, the model as given, params and cache usage; returns the output unchanged", async () => {
    vendor.server.push({ json: fixture("bedrock-converse.json") }, { json: fixture("bedrock-converse.json") });
    const plain = await bedrock().send(new ConverseCommand(ask));
    const client = wrapBedrock(bedrock(), { client: vendor.writer });
    const traced = await client.send(new ConverseCommand(ask));
    expect(body(traced)).toBe(body(plain));
    expect(traced.$metadata.httpStatusCode).toBe(200);
    expect(vendor.server.requests.at(-1)!.path).toBe(`/model/${encodeURIComponent(MODEL)}/converse`);

    const run = onlyRun();
    expect(run).toMatchObject({ run_type: "llm", name: "ChatBedrockConverse" });
    expect(run.extra.metadata).toMatchObject({
      trace_provider: "bedrock",
      trace_model_name: MODEL,
      invocation_params: { inferenceConfig: { maxTokens: 200, temperature: 0.2 } },
    });
    expect(run.inputs.messages).toEqual([
      { role: "system", content: [{ type: "text", text: "Answer in French.", extras: { cache_point: { type: "default" } } }] },
      {
        role: "user",
        content: [
          { type: "text", text: "Weather in Paris?" },
          { type: "image", base64: Buffer.from(PNG).toString("base64"), mime_type: "image/png" },
        ],
      },
    ]);
    const reply = run.outputs.messages[0];
    expect(reply.content).toEqual([{ type: "text", text: "Bonjour ! Il fait 18 °C à Paris." }]);
    // inputTokens (21) leaves out the cache: read 1024 and written 176 are added in.
    expect(reply.usage_metadata).toEqual(
      priced({ input_tokens: 1221, output_tokens: 14, total_tokens: 1235, input_token_details: { cache_read: 1024, cache_creation: 176 } }),
    );
    expect(reply.extras).toMatchObject({ stopReason: "end_turn", metrics: { latencyMs: 612 } });
    expect(run.end_time >= run.start_time).toBe(true);
    expect(validate(run.inputs.messages)).toEqual([]);
    expect(validate(run.outputs.messages)).toEqual([]);
    expect(JSON.stringify(vendor.writer.calls)).not.toContain(SECRET);
    expect(JSON.stringify(vendor.writer.calls)).not.toMatch(/authorization|AKIAEXAMPLE/i);
  });

  it("links a tool use round trip: toolUse -> tool_call, toolResult -> tool message with its id", async () => {
    const first = fixture("bedrock-converse-tool-use.json");
    vendor.server.push({ json: first }, { json: fixture("bedrock-converse.json") });
    const client = wrapBedrock(bedrock(), { client: vendor.writer });
    const toolConfig = {
      tools: [
        {
          toolSpec: {
            name: "get_weather",
            description: "Current weather",
            inputSchema: { json: { type: "object", properties: { city: { type: "string" } } } },
          },
        },
      ],
    };
    const turn1 = await client.send(new ConverseCommand({ ...ask, toolConfig }));
    const assistant = turn1.output!.message!;
    const toolUse = assistant.content!.find((b) => b.toolUse)!.toolUse!;
    const messages: BedrockMessage[] = [
      ...ask.messages!,
      assistant,
      {
        role: "user",
        content: [{ toolResult: { toolUseId: toolUse.toolUseId!, content: [{ json: { celsius: 18, sky: "rain" } }], status: "success" } }],
      },
    ];
    await client.send(new ConverseCommand({ ...ask, toolConfig, messages }));

    const [r1, r2] = vendor.writer.list() as Record<string, any>[];
    expect(r1!.outputs.messages[0].content).toEqual([
      {
        type: "reasoning",
        text: "The user wants the weather; I should call get_weather for Paris.",
        extras: { signature: "EqQBCkgIBxABGAIiQLk0c2lnbmF0dXJl" },
      },
      { type: "text", text: "Let me check the weather." },
      { type: "tool_call", id: "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", name: "get_weather", args: { city: "Paris", unit: "celsius" } },
    ]);
    expect(r1!.extra.metadata.invocation_params.toolConfig).toEqual(toolConfig);
    const inputs = r2!.inputs.messages;
    expect(inputs.map((m: { role: string }) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
    expect(inputs[3]).toEqual({
      role: "tool",
      tool_call_id: "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q",
      content: [{ type: "text", text: '{"celsius":18,"sky":"rain"}', extras: { vendor_type: "json" } }],
    });
    expect(validate(inputs)).toEqual([]);
  });

  it("records and rethrows a 400 ValidationException unchanged", async () => {
    vendor.server.push({
      status: 400,
      json: { message: "The provided model identifier is invalid." },
      headers: { "x-amzn-errortype": "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/" },
    });
    const client = wrapBedrock(bedrock(), { client: vendor.writer });
    const err = (await client.send(new ConverseCommand({ ...ask, modelId: "no-such-model" })).catch((e: unknown) => e)) as Error & {
      $metadata: { httpStatusCode: number };
    };
    expect(err.name).toBe("ValidationException");
    expect(err.$metadata.httpStatusCode).toBe(400);
    const run = onlyRun();
    expect(run.error).toMatch(/ValidationException: The provided model identifier is invalid/);
    expect(run.extra.metadata.trace_model_name).toBe("no-such-model");
    expect(run.end_time).toBeTruthy();
  });

  it("makes one run for a call the SDK retried", async () => {
    vendor.server.push(
      { status: 503, json: { message: "Service unavailable" }, headers: { "x-amzn-errortype": "ServiceUnavailableException" } },
      { json: fixture("bedrock-converse.json") },
    );
    const client = wrapBedrock(bedrock(2), { client: vendor.writer });
    const out = await client.send(new ConverseCommand(ask));
    expect(out.$metadata.attempts).toBe(2);
    const run = onlyRun();
    expect(run.error).toBeUndefined();
    expect(run.outputs.messages[0].content[0].text).toMatch(/^Bonjour/);
  });

  it("passes other commands through untouched, and wrapping twice traces once", async () => {
    vendor.server.push({ json: { inputTokens: 12 } }, { json: fixture("bedrock-converse.json") });
    const client = wrapBedrock(wrapBedrock(bedrock(), { client: vendor.writer }), { client: vendor.writer });
    const counted = await client.send(new CountTokensCommand({ modelId: MODEL, input: { converse: { messages: ask.messages } } }));
    expect(counted.inputTokens).toBe(12);
    expect(vendor.writer.list()).toHaveLength(0);
    await client.send(new ConverseCommand(ask));
    expect(vendor.writer.list()).toHaveLength(1);
  });

  it("traces a call sent with a callback (send's other call shape) once", async () => {
    vendor.server.push({ json: fixture("bedrock-converse.json") });
    const client = wrapBedrock(bedrock(), { client: vendor.writer });
    const out = await new Promise<{ stopReason?: string }>((resolve, reject) =>
      client.send(new ConverseCommand(ask), (err: unknown, data?: { stopReason?: string }) => (err ? reject(err) : resolve(data!))),
    );
    expect(out.stopReason).toBe("end_turn");
    expect(onlyRun().outputs.messages[0].usage_metadata.input_tokens).toBe(1221);
  });

  it("nests under traceable", async () => {
    vendor.server.push({ json: fixture("bedrock-converse.json") });
    const client = wrapBedrock(bedrock(), { client: vendor.writer });
    const pipeline = traceable(async () => (await client.send(new ConverseCommand(ask))).output?.message?.content?.[0]?.text, {
      name: "pipeline",
      client: vendor.writer,
    });
    expect(await pipeline()).toMatch(/^Bonjour/);
    const root = vendor.writer.list().find((r) => r.name === "pipeline")!;
    const llm = vendor.writer.list().find((r) => r.run_type === "llm")!;
    expect(llm.parent_run_id).toBe(root.id);
    expect(llm.dotted_order.startsWith(root.dotted_order + ".")).toBe(true);
  });
});

describe("wrapBedrock: ConverseStream", () => {
  it("hands the caller every event as the SDK yields it and stamps new_token between start and end", async () => {
    const events = fixture("bedrock-converse-stream.json");
    vendor.server.push({ sse: events, eventstream: true, delayMs: 3 }, { sse: events, eventstream: true, delayMs: 3 });
    const plain = await readAll((await bedrock().send(new ConverseStreamCommand(ask))).stream);
    const client = wrapBedrock(bedrock(), { client: vendor.writer });
    const out = await client.send(new ConverseStreamCommand(ask));
    expect(vendor.server.requests.at(-1)!.path).toBe(`/model/${encodeURIComponent(MODEL)}/converse-stream`);
    const seen = await readAll(out.stream);
    expect(JSON.stringify(seen)).toBe(JSON.stringify(plain));
    expect(seen).toEqual(events);

    const run = onlyRun();
    const tok = run.events.find((e: { name: string }) => e.name === "new_token");
    expect(tok).toBeDefined();
    expect(tok.time > run.start_time && tok.time < run.end_time).toBe(true);
    expect(run.error).toBeUndefined();
    const reply = run.outputs.messages[0];
    expect(reply.content).toEqual([{ type: "text", text: "Bonjour ! Il fait 18 °C." }]);
    expect(reply.usage_metadata).toEqual(
      priced({ input_tokens: 1043, output_tokens: 11, total_tokens: 1054, input_token_details: { cache_read: 1024 } }),
    );
    expect(reply.extras).toMatchObject({ stopReason: "end_turn", metrics: { latencyMs: 388 } });
    expect(run.extra.metadata).toMatchObject({ trace_provider: "bedrock", trace_model_name: MODEL });
  });

  it("folds streamed reasoning and tool input into reasoning and tool_call blocks", async () => {
    vendor.server.push({ sse: fixture("bedrock-converse-tool-stream.json"), eventstream: true });
    const client = wrapBedrock(bedrock(), { client: vendor.writer });
    await readAll((await client.send(new ConverseStreamCommand(ask))).stream);
    const reply = onlyRun().outputs.messages[0];
    expect(reply.content).toEqual([
      { type: "reasoning", text: "Need the weather tool for Paris.", extras: { signature: "EqQBCkgIBxABGAIiQLk0c2lnbmF0dXJl" } },
      { type: "tool_call", id: "tooluse_stream_01", name: "get_weather", args: { city: "Paris" } },
    ]);
    expect(reply.usage_metadata).toEqual(priced({ input_tokens: 402, output_tokens: 61, total_tokens: 463 }));
  });

  it("records an early break as cancelled and keeps the partial output", async () => {
    vendor.server.push({ sse: fixture("bedrock-converse-stream.json"), eventstream: true, delayMs: 5 });
    const client = wrapBedrock(bedrock(), { client: vendor.writer });
    const out = await client.send(new ConverseStreamCommand(ask));
    let n = 0;
    for await (const _ of out.stream!) if (++n === 2) break;
    const run = onlyRun();
    expect(run.error).toBe("cancelled");
    expect(run.outputs.messages[0].content).toEqual([{ type: "text", text: "Bonjour" }]);
    // The stream ended before the usage event: counted locally, and marked so.
    expect(run.outputs.messages[0].usage_metadata).toMatchObject({ estimated: true });
  });

  it("records a stream the connection cut as an error, keeping the output so far", async () => {
    vendor.server.push({ sse: fixture("bedrock-converse-stream.json"), eventstream: true, breakAfter: 3 });
    const client = wrapBedrock(bedrock(), { client: vendor.writer });
    const out = await client.send(new ConverseStreamCommand(ask));
    const err = await readAll(out.stream).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    const run = onlyRun();
    expect(run.error).toBeTruthy();
    expect(run.error).not.toBe("cancelled");
    expect(run.outputs.messages[0].content).toEqual([{ type: "text", text: "Bonjour ! Il fait" }]);
  });

  it("records an exception event mid-stream and rethrows it to the caller", async () => {
    const events = fixture("bedrock-converse-stream.json").slice(0, 3);
    vendor.server.push({
      sse: [...events, { throttlingException: { message: "Too many tokens, please wait before trying again." } }],
      eventstream: true,
    });
    const client = wrapBedrock(bedrock(), { client: vendor.writer });
    const out = await client.send(new ConverseStreamCommand(ask));
    const err = (await readAll(out.stream).catch((e: unknown) => e)) as Error;
    expect(err.name).toBe("ThrottlingException");
    const run = onlyRun();
    expect(run.error).toMatch(/ThrottlingException: Too many tokens/);
    expect(run.outputs.messages[0].content).toEqual([{ type: "text", text: "Bonjour ! Il fait" }]);
  });
});

describe("tracing never throws into the host", () => {
  it("keeps calls and streams working when the run writer throws", async () => {
    const broken = {
      createRun: () => {
        throw new Error("writer down");
      },
      updateRun: () => {
        throw new Error("writer down");
      },
    };
    const noisy = {
      createRun: () => {},
      updateRun: () => {
        throw new Error("writer down");
      },
    };
    for (const w of [broken, noisy]) {
      vendor.server.push({ json: fixture("bedrock-converse.json") }, { sse: fixture("bedrock-converse-stream.json"), eventstream: true });
      const client = wrapBedrock(bedrock(), { client: w });
      const out = await client.send(new ConverseCommand(ask));
      expect(out.output?.message?.content?.[0]?.text).toMatch(/^Bonjour/);
      expect(await readAll((await client.send(new ConverseStreamCommand(ask))).stream)).toEqual(fixture("bedrock-converse-stream.json"));
    }
  });

  it("passes the call through when processInputs throws, and redacts with both hooks", async () => {
    vendor.server.push({ json: fixture("bedrock-converse.json") }, { json: fixture("bedrock-converse.json") });
    const failing = wrapBedrock(bedrock(), {
      client: vendor.writer,
      processInputs: () => {
        throw new Error("redactor bug");
      },
    });
    expect((await failing.send(new ConverseCommand(ask))).stopReason).toBe("end_turn");
    expect(vendor.writer.list()).toHaveLength(0);
    const redacting = wrapBedrock(bedrock(), {
      client: vendor.writer,
      processInputs: () => ({ redacted: true }),
      processOutputs: () => ({ redacted: true }),
    });
    await redacting.send(new ConverseCommand(ask));
    expect(onlyRun()).toMatchObject({ inputs: { redacted: true }, outputs: { redacted: true } });
  });
});

describe("TRACEPIPE_TRACING=false", () => {
  it("leaves the client untouched", async () => {
    const prev = process.env.TRACEPIPE_TRACING;
    process.env.TRACEPIPE_TRACING = "false";
    try {
      const c = bedrock();
      const before = c.middlewareStack.identify();
      expect(wrapBedrock(c, { client: vendor.writer })).toBe(c);
      expect(c.middlewareStack.identify()).toEqual(before);
      vendor.server.push({ json: fixture("bedrock-converse.json") });
      await c.send(new ConverseCommand(ask));
      expect(vendor.writer.list()).toHaveLength(0);
    } finally {
      if (prev === undefined) delete process.env.TRACEPIPE_TRACING;
      else process.env.TRACEPIPE_TRACING = prev;
    }
  });
});

describe("capture -> ingest client -> collector", () => {
  let col: Running;
  beforeAll(async () => {
    col = await startCollector({ apiKey: "tp-key" });
  });
  afterAll(async () => {
    await col.close();
  });

  it("stores a traced ConverseStream call with its time to first token and reported usage", async () => {
    const client = new Client({
      endpoint: col.url,
      apiKey: "tp-key",
      project: "bedrock",
      spoolDir: join(tempDir("tp-bedrock-"), "spool"),
      warn: () => {},
    });
    vendor.server.push({ sse: fixture("bedrock-converse-stream.json"), eventstream: true, delayMs: 3 });
    const wrapped = wrapBedrock(bedrock(), { client });
    let text = "";
    for await (const ev of (await wrapped.send(new ConverseStreamCommand(ask))).stream!) text += ev.contentBlockDelta?.delta?.text ?? "";
    expect(text).toBe("Bonjour ! Il fait 18 °C.");
    await client.shutdown();
    const { runs } = await col.collector.store.queryRuns({ project: "bedrock" });
    expect(runs).toHaveLength(1);
    const llm = runs[0]!;
    expect(llm).toMatchObject({ run_type: "llm", name: "ChatBedrockConverse" });
    expect(llm.first_token_time).toBe(llm.events!.find((e) => e.name === "new_token")!.time);
    expect(llm.first_token_time! > llm.start_time && llm.first_token_time! < llm.end_time!).toBe(true);
    expect((llm.extra as { metadata: Record<string, unknown> }).metadata).toMatchObject({
      trace_provider: "bedrock",
      trace_model_name: MODEL,
    });
    const reply = (llm.outputs as { messages: { usage_metadata?: Record<string, unknown> }[] }).messages[0]!;
    expect(reply.usage_metadata).toMatchObject({ input_tokens: 1043, output_tokens: 11, input_token_details: { cache_read: 1024 } });
  });
});
