/**
 * A streamed call's run is the same stored run whichever way its create reached the Client: whole,
 * when the stream had ended before its start was built (one create, its usage estimated in the
 * build), or as a create at its start and an update at its end (the estimate deferred to delivery).
 * Per vendor, for a stream read to its end, one the caller abandons and one that fails midway:
 * every stored field but the ids and times is the same text.
 */
import { afterEach, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "../../src/ingest/index.js";
import { LlmCall } from "../../src/tracing/llm.js";
import { runDeferred } from "../../src/run/deferred.js";
import { anthropicMessages, bedrockConverse, gemini, openaiChat, openaiResponses } from "../../adapters/index.js";
import type { Adapter } from "../../adapters/types.js";
import { startCollector, type Running } from "../helpers/collector.js";
import { tempDir } from "../helpers/runs.js";

const fixture = (name: string): unknown[] =>
  JSON.parse(readFileSync(new URL(`../fixtures/replay/${name}.json`, import.meta.url), "utf8")) as unknown[];
const messages = [{ role: "user", content: "What is the weather in Paris?" }];

const vendors: { name: string; adapter: Adapter; provider: string; body: Record<string, unknown>; chunks: unknown[] }[] = [
  {
    name: "openai chat",
    adapter: openaiChat,
    provider: "openai",
    body: { model: "gpt-4o-mini", stream: true, messages },
    chunks: fixture("openai-stream"),
  },
  {
    name: "openai responses",
    adapter: openaiResponses,
    provider: "openai",
    body: { model: "gpt-4o-mini", stream: true, input: "What is the weather in Paris?" },
    chunks: fixture("openai-response-stream"),
  },
  {
    name: "anthropic",
    adapter: anthropicMessages,
    provider: "anthropic",
    body: { model: "claude-3-5-haiku-latest", max_tokens: 200, stream: true, messages },
    chunks: fixture("anthropic-stream"),
  },
  {
    name: "gemini",
    adapter: gemini,
    provider: "google",
    body: { model: "gemini-2.5-flash", contents: [{ role: "user", parts: [{ text: "What is the weather in Paris?" }] }] },
    chunks: fixture("gemini-stream"),
  },
  {
    name: "bedrock",
    adapter: bedrockConverse,
    provider: "bedrock",
    body: {
      modelId: "anthropic.claude-3-haiku-20240307-v1:0",
      messages: [{ role: "user", content: [{ text: "What is the weather in Paris?" }] }],
    },
    chunks: fixture("bedrock-converse-stream"),
  },
];

type Ending = "complete" | "abandoned" | "failed";
/** Chunks read before an abandoned or failed stream stops. */
const READ = 2;

async function* source(chunks: unknown[], ending: Ending): AsyncGenerator<unknown> {
  for (let i = 0; i < chunks.length; i++) {
    if (ending === "failed" && i === READ) throw new Error("connection reset by the vendor");
    yield chunks[i];
  }
}

/**
 * One streamed call through LlmCall. `split`: its start is built after its first chunk (the call still
 * running: a create, then an update); otherwise after it ended (the create goes whole).
 */
async function stream(client: Client, v: (typeof vendors)[number], ending: Ending, split: boolean): Promise<void> {
  const call = new LlmCall(v.adapter, v.provider, structuredClone(v.body), client, {}, `${v.name} ${ending} ${split}`);
  const it = call.wrapIterator(source(structuredClone(v.chunks), ending));
  let n = 0;
  try {
    for (;;) {
      const step = await it.next();
      if (step.done) break;
      if (++n === 1 && split) runDeferred();
      if (ending === "abandoned" && n === READ) {
        await it.return!();
        break;
      }
    }
  } catch (err) {
    expect((err as Error).message).toBe("connection reset by the vendor");
  }
  runDeferred();
}

/** The stored run's fields as text, the ids and times left out (they differ between any two calls). */
function stored(run: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(run)) {
    if (/(^|_)id$|time$|dotted_order|^events$|^name$/.test(k)) continue;
    out[k] = JSON.stringify(val);
  }
  out.events = JSON.stringify((run.events as { name: string; kwargs?: unknown }[]).map((e) => [e.name, e.kwargs]));
  return out;
}

let col: Running | undefined;
afterEach(async () => {
  await col?.close();
  col = undefined;
});

describe("a streamed run stored whole or as a create and an update", () => {
  it.each(vendors.map((v) => [v.name, v] as const))("is the same run for %s streams, complete, abandoned and failed", async (_name, v) => {
    col = await startCollector();
    const runs: Record<string, Record<string, unknown>> = {};
    const project = "stream-whole";
    for (const split of [false, true]) {
      const client = new Client({
        endpoint: col.url,
        apiKey: "k",
        project,
        spoolDir: join(tempDir("tp-stream-whole-"), "spool"),
        exitHooks: false,
        warn: () => {},
      });
      for (const ending of ["complete", "abandoned", "failed"] as const) await stream(client, v, ending, split);
      expect((await client.shutdown()).ok).toBe(true);
      const { runs: got } = await col.collector.store.queryRuns({ project, limit: 10 });
      expect(got).toHaveLength(split ? 6 : 3);
    }
    const { runs: got } = await col.collector.store.queryRuns({ project, limit: 10 });
    for (const r of got as Record<string, unknown>[]) runs[r.name as string] = r;
    for (const ending of ["complete", "abandoned", "failed"]) {
      const whole = runs[`${v.name} ${ending} false`]!;
      const split = runs[`${v.name} ${ending} true`]!;
      expect(stored(whole)).toEqual(stored(split));
      if (ending !== "complete") expect(whole.error).toBeTruthy();
      // Every stream here has text before it stops, so each run has an output and its usage (reported or estimated).
      expect(JSON.stringify(whole.outputs)).toContain("usage_metadata");
    }
  });
});
