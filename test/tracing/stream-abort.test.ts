/**
 * A caller who aborts a stream (the Stream's controller, an AbortSignal, MessageStream.abort(),
 * send()'s abortSignal) gets what the bare SDK gives: the OpenAI, Anthropic and AWS SDKs end the
 * iteration quietly. The run
 * must still say the output was cut short ("cancelled", with what had arrived), not record a
 * complete answer; a stream read to its end stays a success whatever is aborted afterwards.
 */
import { describe, expect, it } from "vitest";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { BedrockRuntimeClient, ConverseStreamCommand } from "@aws-sdk/client-bedrock-runtime";
import { wrapOpenAI, wrapAnthropic } from "../../src/tracing/index.js";
import { wrapBedrock } from "../../src/index.js";
import { fixture } from "../helpers/replay-server.js";
import { useWrapperReplay } from "../helpers/wrapper-replay.js";

const vendor = useWrapperReplay();
/** Bedrock Runtime's client speaks HTTP/2 to an http:// endpoint. */
const aws = useWrapperReplay({ http2: true });
const openai = () => new OpenAI({ apiKey: "sk-test", baseURL: `${vendor.server.url}/v1`, maxRetries: 0 });
const anthropic = () => new Anthropic({ apiKey: "sk-test", baseURL: vendor.server.url, maxRetries: 0 });
const ask = { model: "gpt-4o-mini", messages: [{ role: "user" as const, content: "Hi" }], stream: true as const };

/** The one run, with its create and exactly one ending update. */
function endedOnce() {
  const runs = vendor.writer.list();
  expect(runs).toHaveLength(1);
  const ends = vendor.writer.calls.filter((c) => (c.kind === "create" ? c.run.end_time : (c.patch as { end_time?: string }).end_time));
  expect(ends).toHaveLength(1);
  return runs[0]! as Record<string, any>;
}

const textOf = (run: Record<string, any>) => (run.outputs.messages[0]?.content ?? []).map((b: { text?: string }) => b.text ?? "").join("");

type Outcome = { chunks: string[]; error?: string };

/** Read a chat stream, aborting after the second chunk with `abort`; what the caller saw. */
async function readAborting(client: OpenAI, how: "controller" | "signal"): Promise<Outcome> {
  const ac = new AbortController();
  const stream = await client.chat.completions.create(ask, how === "signal" ? { signal: ac.signal } : undefined);
  const chunks: string[] = [];
  try {
    for await (const ch of stream) {
      chunks.push(ch.choices[0]?.delta?.content ?? "");
      if (chunks.length === 2) (how === "signal" ? ac : stream.controller).abort();
    }
  } catch (err) {
    return { chunks, error: (err as Error).constructor.name };
  }
  return { chunks };
}

describe("an aborted stream", () => {
  for (const how of ["controller", "signal"] as const) {
    it(`ends the run as cancelled with what arrived, when the caller aborts through the ${how}`, async () => {
      vendor.server.push({ sse: fixture("openai-stream.json"), delayMs: 5 }, { sse: fixture("openai-stream.json"), delayMs: 5 });
      const bare = await readAborting(openai(), how);
      const traced = await readAborting(wrapOpenAI(openai(), { client: vendor.writer }), how);
      // The caller's side is the bare SDK's: the loop ends quietly.
      expect(traced.error).toBe(bare.error);
      expect(bare.error).toBeUndefined();
      const run = endedOnce();
      expect(run.error).toBe("cancelled");
      expect(textOf(run)).toBe(traced.chunks.join(""));
    });
  }

  it("ends the run of the OpenAI stream helper as cancelled when the caller aborts it", async () => {
    vendor.server.push({ sse: fixture("openai-stream.json"), delayMs: 5 }, { sse: fixture("openai-stream.json"), delayMs: 5 });
    const read = async (client: OpenAI) => {
      const stream = client.chat.completions.stream({ model: ask.model, messages: ask.messages });
      let n = 0;
      stream.on("chunk", () => {
        if (++n === 2) stream.abort();
      });
      return stream.finalChatCompletion().catch((err: unknown) => (err as Error).constructor.name);
    };
    const bare = await read(openai());
    expect(await read(wrapOpenAI(openai(), { client: vendor.writer }))).toBe(bare);
    expect(endedOnce().error).toBe("cancelled");
  });

  it("ends the run of Anthropic's messages.stream() as cancelled when the caller aborts it on its first text", async () => {
    const events = fixture("anthropic-stream.json");
    vendor.server.push({ sse: events, anthropic: true, delayMs: 5 }, { sse: events, anthropic: true, delayMs: 5 });
    const read = async (client: Anthropic) => {
      const stream = client.messages.stream({ model: "claude-haiku-4-5", max_tokens: 50, messages: [{ role: "user", content: "Hi" }] });
      stream.on("text", () => stream.abort());
      return stream.finalMessage().catch((err: unknown) => (err as Error).constructor.name);
    };
    const bare = await read(anthropic());
    expect(bare).toBe("APIUserAbortError");
    expect(await read(wrapAnthropic(anthropic(), { client: vendor.writer }))).toBe(bare);
    const run = endedOnce();
    expect(run.error).toBe("cancelled");
    expect(textOf(run)).toMatch(/^Hi/);
  });

  it("keeps a stream read to its end a success when its controller is aborted afterwards", async () => {
    vendor.server.push({ sse: fixture("openai-stream.json") });
    const stream = await wrapOpenAI(openai(), { client: vendor.writer }).chat.completions.create(ask);
    const chunks: string[] = [];
    for await (const ch of stream) chunks.push(ch.choices[0]?.delta?.content ?? "");
    stream.controller.abort();
    const run = endedOnce();
    expect(run.error).toBeUndefined();
    expect(textOf(run)).toBe(chunks.join(""));
  });

  it("ends the run of a Bedrock ConverseStream as cancelled when the caller aborts send()'s abortSignal", async () => {
    const read = async (client: BedrockRuntimeClient) => {
      const ac = new AbortController();
      const out = await client.send(
        new ConverseStreamCommand({
          modelId: "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
          messages: [{ role: "user", content: [{ text: "Hi" }] }],
        }),
        { abortSignal: ac.signal },
      );
      let n = 0;
      try {
        for await (const _ of out.stream!) if (++n === 2) ac.abort();
      } catch (err) {
        return (err as Error).name;
      }
      return n;
    };
    const bedrock = () =>
      new BedrockRuntimeClient({
        region: "us-east-1",
        endpoint: aws.server.url,
        credentials: { accessKeyId: "AKIAEXAMPLE", secretAccessKey: "secret" },
        maxAttempts: 1,
      });
    const events = fixture("bedrock-converse-stream.json");
    aws.server.push({ sse: events, eventstream: true, delayMs: 5 }, { sse: events, eventstream: true, delayMs: 5 });
    const bare = await read(bedrock());
    expect(await read(wrapBedrock(bedrock(), { client: aws.writer }))).toBe(bare);
    const runs = aws.writer.list();
    expect(runs).toHaveLength(1);
    expect(runs[0]!.error).toBe("cancelled");
  });
});
