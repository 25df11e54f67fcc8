import { describe, expect, it } from "vitest";
import OpenAI from "openai";
import { wrapOpenAI } from "../../src/tracing/index.js";
import { validate } from "../../src/format/validate.js";
import { fixture } from "../helpers/replay-server.js";
import { useWrapperReplay } from "../helpers/wrapper-replay.js";

const vendor = useWrapperReplay();

const openai = () => new OpenAI({ apiKey: "sk-test", baseURL: `${vendor.server.url}/v1`, maxRetries: 0 });
const ask = {
  model: "gpt-4.1",
  instructions: "Answer briefly.",
  input: "Weather in Paris?",
  temperature: 0.2,
  previous_response_id: "resp_previous_1",
};

function onlyRun() {
  const runs = vendor.writer.list();
  expect(runs).toHaveLength(1);
  return runs[0]! as Record<string, any>;
}

describe("wrapOpenAI: responses.create", () => {
  it("records a non-streamed call as one llm run and returns exactly the unwrapped result", async () => {
    vendor.server.push({ json: fixture("openai-response.json") }, { json: fixture("openai-response.json") });
    const plain = await openai().responses.create(ask);
    const traced = await wrapOpenAI(openai(), { client: vendor.writer }).responses.create(ask);
    expect(JSON.stringify(traced)).toBe(JSON.stringify(plain));
    expect(traced.output_text).toBe("Checking the weather in Paris.");
    expect(vendor.server.requests.at(-1)!.path).toBe("/v1/responses");
    const run = onlyRun();
    expect(run).toMatchObject({ run_type: "llm", name: "ChatOpenAI" });
    expect(run.inputs.messages).toEqual([
      { role: "system", content: [{ type: "text", text: "Answer briefly." }], extras: { previous_response_id: "resp_previous_1" } },
      { role: "user", content: [{ type: "text", text: "Weather in Paris?" }] },
    ]);
    expect(run.extra.metadata).toMatchObject({
      trace_provider: "openai",
      trace_model_name: "gpt-4.1-2025-04-14",
      invocation_params: { temperature: 0.2, previous_response_id: "resp_previous_1" },
    });
    const out = run.outputs.messages[0];
    expect(out.content.map((b: { type: string }) => b.type)).toEqual(["reasoning", "tool_call", "text"]);
    expect(out.content[1]).toMatchObject({
      type: "tool_call",
      id: "call_12345xyz",
      name: "get_weather",
      args: { location: "Paris, France" },
    });
    // Priced as gpt-4.1 ($2 / $0.50 cached / $8 per million): 72 uncached + 256 cached in, 52 out of which 32 reasoning.
    expect(out.usage_metadata).toEqual({
      input_tokens: 328,
      output_tokens: 52,
      total_tokens: 380,
      input_token_details: { cache_read: 256 },
      output_token_details: { reasoning: 32 },
      input_cost: 0.000272,
      output_cost: 0.000416,
      total_cost: 0.000688,
      input_cost_details: { cache_read: 0.000128 },
      output_cost_details: { reasoning: 0.000256 },
    });
    expect(validate(run.inputs.messages)).toEqual([]);
    expect(validate(run.outputs.messages)).toEqual([]);
  });

  it("passes a stream through unchanged, stamps new_token, and takes usage from response.completed", async () => {
    const events = fixture("openai-response-stream.json");
    vendor.server.push({ sse: events, named: true, delayMs: 2 }, { sse: events, named: true, delayMs: 2 });
    const collect = async (c: OpenAI) => {
      const out: unknown[] = [];
      for await (const ev of await c.responses.create({ ...ask, stream: true })) out.push(ev);
      return out;
    };
    const plain = await collect(openai());
    expect(plain).toHaveLength(events.length);
    const seen = await collect(wrapOpenAI(openai(), { client: vendor.writer }));
    expect(JSON.stringify(seen)).toBe(JSON.stringify(plain));
    const run = onlyRun();
    const tok = run.events.find((e: { name: string }) => e.name === "new_token");
    expect(tok).toBeDefined();
    expect(tok.time > run.start_time && tok.time < run.end_time).toBe(true);
    expect(run.error ?? undefined).toBeUndefined();
    const out = run.outputs.messages[0];
    expect(out.content).toMatchObject([
      { type: "text", text: "Hi there!" },
      { type: "tool_call", id: "call_stream_1", name: "get_weather", args: { location: "Paris" } },
    ]);
    expect(out.usage_metadata).toEqual({
      input_tokens: 37,
      output_tokens: 11,
      total_tokens: 48,
      input_token_details: { cache_read: 0 },
      output_token_details: { reasoning: 0 },
      input_cost: 0.000074,
      output_cost: 0.000088,
      total_cost: 0.000162,
    });
    expect(run.extra.metadata.trace_model_name).toBe("gpt-4.1-2025-04-14");
  });

  it("records an abandoned stream as cancelled with the text so far", async () => {
    vendor.server.push({ sse: fixture("openai-response-stream.json"), named: true, delayMs: 2 });
    let n = 0;
    for await (const _ of await wrapOpenAI(openai(), { client: vendor.writer }).responses.create({ ...ask, stream: true }))
      if (++n === 5) break;
    const run = onlyRun();
    expect(run.error).toBe("cancelled");
    expect(run.outputs.messages[0].content[0]).toMatchObject({ type: "text", text: "Hi" });
  });

  it("records a stream the connection cut as an error, keeping the output so far", async () => {
    vendor.server.push({ sse: fixture("openai-response-stream.json"), named: true, breakAfter: 6 });
    const seen: unknown[] = [];
    const err = await (async () => {
      for await (const ev of await wrapOpenAI(openai(), { client: vendor.writer }).responses.create({ ...ask, stream: true }))
        seen.push(ev);
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(seen).toHaveLength(6);
    const run = onlyRun();
    expect(run.error).toBeTruthy();
    expect(run.error).not.toBe("cancelled");
    expect(run.outputs.messages[0].content[0]).toMatchObject({ type: "text", text: "Hi there!" });
  });

  it("traces responses.stream() once, through create", async () => {
    vendor.server.push({ sse: fixture("openai-response-stream.json"), named: true });
    const stream = wrapOpenAI(openai(), { client: vendor.writer }).responses.stream({ model: "gpt-4.1", input: "hi" });
    const final = await stream.finalResponse();
    expect(final.id).toBe("resp_stream_1");
    const run = onlyRun();
    expect(run.outputs.messages[0].usage_metadata).toMatchObject({ input_tokens: 37, output_tokens: 11 });
  });

  it("traces responses.parse once, through create, and the caller gets the parsed output", async () => {
    vendor.server.push({ json: fixture("openai-response.json") }, { json: fixture("openai-response.json") });
    const plain = await openai().responses.parse(ask);
    const parsed = await wrapOpenAI(openai(), { client: vendor.writer }).responses.parse(ask);
    expect(JSON.stringify(parsed)).toBe(JSON.stringify(plain));
    expect(parsed.output_parsed).toBeNull();
    const run = onlyRun();
    expect(run.outputs.messages[0].content.at(-1)).toMatchObject({ type: "text", text: "Checking the weather in Paris." });
  });

  it("records and rethrows a vendor 4xx unchanged", async () => {
    vendor.server.push({ status: 400, json: { error: { message: "bad input", type: "invalid_request_error", code: null } } });
    const err = await wrapOpenAI(openai(), { client: vendor.writer })
      .responses.create(ask)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(onlyRun().error).toContain("bad input");
  });
});

describe("wrapOpenAI: embeddings.create", () => {
  it("records an embedding run with input, dimensions and usage, not the vectors; the caller gets the decoded floats", async () => {
    vendor.server.push({ json: fixture("openai-embeddings-base64.json") }, { json: fixture("openai-embeddings-base64.json") });
    const body = { model: "text-embedding-3-small", input: ["hello", "world"], dimensions: 4 };
    const plain = await openai().embeddings.create(body);
    const traced = await wrapOpenAI(openai(), { client: vendor.writer }).embeddings.create(body);
    expect(JSON.stringify(traced)).toBe(JSON.stringify(plain));
    expect(traced.data[0]!.embedding).toHaveLength(4);
    expect(vendor.server.requests.at(-1)!.path).toBe("/v1/embeddings");
    const run = onlyRun();
    expect(run).toMatchObject({
      run_type: "embedding",
      name: "OpenAIEmbeddings",
      inputs: { input: ["hello", "world"], model: "text-embedding-3-small", dimensions: 4 },
    });
    // text-embedding-3-small: $0.02 per million input tokens.
    expect(run.outputs).toEqual({
      embeddings: 2,
      dimensions: 4,
      usage_metadata: { input_tokens: 8, output_tokens: 0, total_tokens: 8, input_cost: 1.6e-7, output_cost: 0, total_cost: 1.6e-7 },
    });
    expect(run.extra.metadata).toMatchObject({ trace_provider: "openai", trace_model_name: "text-embedding-3-small" });
    expect(JSON.stringify(run)).not.toContain(fixture("openai-embeddings-base64.json").data[0].embedding);
  });

  it("ends the run of a call whose caller reads the raw response", async () => {
    vendor.server.push({ json: fixture("openai-embeddings-base64.json") });
    const raw = await wrapOpenAI(openai(), { client: vendor.writer })
      .embeddings.create({ model: "text-embedding-3-small", input: "x" })
      .asResponse();
    expect(raw.status).toBe(200);
    expect(raw.bodyUsed).toBe(false);
    const run = onlyRun();
    expect(run.end_time >= run.start_time).toBe(true);
    expect(run.extra.metadata.unparsed_response).toEqual({ status: 200, reason: "the caller read the raw response (asResponse)" });
  });

  it("counts dimensions of float vectors when the caller chose encoding_format float", async () => {
    const json = {
      object: "list",
      data: [{ object: "embedding", index: 0, embedding: [0.1, 0.2, 0.3] }],
      model: "text-embedding-3-large",
      usage: { prompt_tokens: 2, total_tokens: 2 },
    };
    vendor.server.push({ json });
    const res = await wrapOpenAI(openai(), { client: vendor.writer }).embeddings.create({
      model: "text-embedding-3-large",
      input: "hi",
      encoding_format: "float",
    });
    expect(res).toEqual(json);
    expect(onlyRun().outputs).toMatchObject({ embeddings: 1, dimensions: 3 });
    expect(onlyRun().inputs).toEqual({ input: "hi", model: "text-embedding-3-large", encoding_format: "float" });
  });

  it("records and rethrows an error", async () => {
    vendor.server.push({ status: 429, json: { error: { message: "slow down", type: "rate_limit_error" } } });
    const err = await wrapOpenAI(openai(), { client: vendor.writer })
      .embeddings.create({ model: "text-embedding-3-small", input: "x" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(onlyRun().error).toContain("slow down");
  });
});
