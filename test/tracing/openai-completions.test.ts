import { describe, expect, it } from "vitest";
import OpenAI from "openai";
import { z } from "zod";
import { zodResponseFormat } from "openai/helpers/zod";
import { wrapOpenAI } from "../../src/tracing/index.js";
import { validate } from "../../src/format/validate.js";
import { fixture } from "../helpers/replay-server.js";
import { useWrapperReplay } from "../helpers/wrapper-replay.js";

const vendor = useWrapperReplay();

const openai = () => new OpenAI({ apiKey: "sk-test", baseURL: `${vendor.server.url}/v1`, maxRetries: 0 });
const ask = { model: "gpt-3.5-turbo-instruct", prompt: "The capital of France is", max_tokens: 16, temperature: 0 };

function onlyRun() {
  const runs = vendor.writer.list();
  expect(runs).toHaveLength(1);
  return runs[0]! as Record<string, any>;
}

describe("wrapOpenAI: completions.create (legacy text completions)", () => {
  it("records a non-streamed call as one llm run and returns exactly the unwrapped result", async () => {
    vendor.server.push({ json: fixture("openai-text-completion.json") }, { json: fixture("openai-text-completion.json") });
    const plain = await openai().completions.create(ask);
    const traced = await wrapOpenAI(openai(), { client: vendor.writer }).completions.create(ask);
    expect(JSON.stringify(traced)).toBe(JSON.stringify(plain));
    expect(traced.choices[0]!.text).toBe("\n\nParis is the capital of France.");
    expect(vendor.server.requests.at(-1)!.path).toBe("/v1/completions");
    expect(vendor.server.requests.at(-1)!.body).toEqual(ask);
    const run = onlyRun();
    expect(run).toMatchObject({ run_type: "llm", name: "OpenAI" });
    expect(run.inputs.messages).toEqual([{ role: "user", content: [{ type: "text", text: "The capital of France is" }] }]);
    expect(run.extra.metadata).toMatchObject({
      trace_provider: "openai",
      trace_model_name: "gpt-3.5-turbo-instruct:20230824-v2",
      invocation_params: { max_tokens: 16, temperature: 0 },
    });
    expect(run.extra.metadata.invocation_params.prompt).toBeUndefined();
    const out = run.outputs.messages;
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({
      role: "assistant",
      content: [{ type: "text", text: "\n\nParis is the capital of France." }],
      extras: { finish_reason: "stop", id: "cmpl-r1" },
    });
    expect(out[0].usage_metadata).toEqual({ input_tokens: 7, output_tokens: 8, total_tokens: 15 });
    expect(run.error ?? undefined).toBeUndefined();
    expect(validate(run.inputs.messages)).toEqual([]);
    expect(validate(out)).toEqual([]);
  });

  it("passes a stream through unchanged, stamps new_token between start and end, and estimates usage when none was asked for", async () => {
    const chunks = fixture("openai-text-completion-stream.json");
    vendor.server.push({ sse: chunks, delayMs: 3 }, { sse: chunks, delayMs: 3 });
    const collect = async (c: OpenAI) => {
      const out: unknown[] = [];
      for await (const ch of await c.completions.create({ ...ask, stream: true })) out.push(ch);
      return out;
    };
    const plain = await collect(openai());
    expect(plain).toHaveLength(chunks.length);
    const seen = await collect(wrapOpenAI(openai(), { client: vendor.writer }));
    expect(JSON.stringify(seen)).toBe(JSON.stringify(plain));
    expect(vendor.server.requests.at(-1)!.body.stream_options).toBeUndefined();
    const run = onlyRun();
    const tok = run.events.find((e: { name: string }) => e.name === "new_token");
    expect(tok).toBeDefined();
    expect(tok.time > run.start_time && tok.time < run.end_time).toBe(true);
    expect(run.outputs.messages[0].content).toEqual([{ type: "text", text: "\n\nParis is the capital." }]);
    expect(run.outputs.messages[0].usage_metadata).toMatchObject({ estimated: true, output_tokens: expect.any(Number) });
    expect(run.extra.metadata.trace_model_name).toBe("gpt-3.5-turbo-instruct:20230824-v2");
  });

  it("with includeUsage asks for stream usage and records the reported counts", async () => {
    const usage = {
      id: "cmpl-s1",
      object: "text_completion",
      created: 1763800000,
      model: "gpt-3.5-turbo-instruct:20230824-v2",
      choices: [],
      usage: { prompt_tokens: 5, completion_tokens: 6, total_tokens: 11 },
    };
    vendor.server.push({ sse: [...fixture("openai-text-completion-stream.json"), usage] });
    for await (const _ of await wrapOpenAI(openai(), { client: vendor.writer, includeUsage: true }).completions.create({
      ...ask,
      stream: true,
    }))
      void _;
    expect(vendor.server.requests.at(-1)!.body.stream_options).toEqual({ include_usage: true });
    expect(onlyRun().outputs.messages[0].usage_metadata).toEqual({ input_tokens: 5, output_tokens: 6, total_tokens: 11 });
  });

  it("a batch of prompts with n > 1: one user message per prompt, one assistant message per choice naming its prompt", async () => {
    const choices = ["a1", "a2", "b1", "b2"].map((text, index) => ({ text, index, logprobs: null, finish_reason: "length" }));
    vendor.server.push({ json: { ...fixture("openai-text-completion.json"), choices } });
    const body = { model: "gpt-3.5-turbo-instruct", prompt: ["A:", "B:"], n: 2, max_tokens: 2 };
    const res = await wrapOpenAI(openai(), { client: vendor.writer }).completions.create(body);
    expect(res.choices).toHaveLength(4);
    const run = onlyRun();
    expect(run.inputs.messages.map((m: { extras: { prompt_index: number } }) => m.extras.prompt_index)).toEqual([0, 1]);
    expect(
      run.outputs.messages.map((m: { extras: { prompt_index: number; choice_index: number } }) => [
        m.extras.prompt_index,
        m.extras.choice_index,
      ]),
    ).toEqual([
      [0, 0],
      [0, 1],
      [1, 2],
      [1, 3],
    ]);
    expect(run.extra.metadata.invocation_params).toMatchObject({ n: 2, max_tokens: 2 });
  });

  it("records an abandoned stream as cancelled with the text so far", async () => {
    vendor.server.push({ sse: fixture("openai-text-completion-stream.json"), delayMs: 2 });
    let n = 0;
    for await (const _ of await wrapOpenAI(openai(), { client: vendor.writer }).completions.create({ ...ask, stream: true }))
      if (++n === 3) break;
    const run = onlyRun();
    expect(run.error).toBe("cancelled");
    expect(run.outputs.messages[0].content).toEqual([{ type: "text", text: "\n\nParis is" }]);
  });

  it("records and rethrows a vendor 4xx unchanged", async () => {
    vendor.server.push({
      status: 404,
      json: {
        error: {
          message: "The model `gpt-4o` is not supported on the completions endpoint",
          type: "invalid_request_error",
          code: "model_not_found",
        },
      },
    });
    const err = await wrapOpenAI(openai(), { client: vendor.writer })
      .completions.create({ ...ask, model: "gpt-4o" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect(onlyRun().error).toContain("not supported on the completions endpoint");
  });

  it("chat and legacy calls through one wrapped client are told apart", async () => {
    vendor.server.push({ json: fixture("openai-completion.json") }, { json: fixture("openai-text-completion.json") });
    const client = wrapOpenAI(openai(), { client: vendor.writer });
    await client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] });
    await client.completions.create(ask);
    expect(vendor.writer.list().map((r) => (r as { name: string }).name)).toEqual(["ChatOpenAI", "OpenAI"]);
  });
});

describe("wrapOpenAI: chat.completions.parse with a structured-output response_format", () => {
  const weather = { ...fixture("openai-completion.json") };
  weather.choices = [{ ...weather.choices[0], message: { ...weather.choices[0].message, content: '{"city":"Paris","celsius":18}' } }];
  const ask = { model: "gpt-4o", messages: [{ role: "user" as const, content: "Weather in Paris as JSON" }] };

  it("zod schema: traced once, the caller gets exactly the unwrapped parsed result, the run keeps the JSON and the schema", async () => {
    vendor.server.push({ json: weather }, { json: weather });
    const response_format = zodResponseFormat(z.object({ city: z.string(), celsius: z.number() }), "weather");
    const plain = await openai().chat.completions.parse({ ...ask, response_format });
    const parsed = await wrapOpenAI(openai(), { client: vendor.writer }).chat.completions.parse({ ...ask, response_format });
    expect(JSON.stringify(parsed)).toBe(JSON.stringify(plain));
    expect(parsed.choices[0]!.message.parsed).toEqual({ city: "Paris", celsius: 18 });
    const run = onlyRun();
    expect(run.outputs.messages[0].content).toEqual([{ type: "text", text: '{"city":"Paris","celsius":18}' }]);
    expect(run.extra.metadata.invocation_params.response_format).toMatchObject({
      type: "json_schema",
      json_schema: { name: "weather", strict: true },
    });
  });

  it("plain json_schema: traced once with the parsed output's text", async () => {
    vendor.server.push({ json: weather });
    const response_format = {
      type: "json_schema" as const,
      json_schema: {
        name: "weather",
        strict: true,
        schema: {
          type: "object",
          properties: { city: { type: "string" }, celsius: { type: "number" } },
          required: ["city", "celsius"],
          additionalProperties: false,
        },
      },
    };
    const parsed = await wrapOpenAI(openai(), { client: vendor.writer }).chat.completions.parse({ ...ask, response_format });
    expect(parsed.choices[0]!.message.parsed).toEqual({ city: "Paris", celsius: 18 });
    const run = onlyRun();
    expect(run.outputs.messages[0].content[0].text).toBe('{"city":"Paris","celsius":18}');
    expect(run.extra.metadata.invocation_params.response_format).toEqual(response_format);
  });
});
