import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import OpenAI from "openai";
import { wrapOpenAI, traceable } from "../../src/tracing/index.js";
import { Client } from "../../src/ingest/index.js";
import { fixture } from "../helpers/replay-server.js";
import { useWrapperReplay } from "../helpers/wrapper-replay.js";
import { startCollector, type Running } from "../helpers/collector.js";
import { tempDir } from "../helpers/runs.js";

const vendor = useWrapperReplay();
let col: Running;
beforeAll(async () => {
  col = await startCollector({ apiKey: "tp-key" });
});
afterAll(async () => {
  await col.close();
});

describe("capture -> ingest client -> collector", () => {
  it("delivers a traced streamed call and its parent to the collector, with time to first token", async () => {
    const dir = tempDir("tp-e2e-");
    const client = new Client({ endpoint: col.url, apiKey: "tp-key", project: "e2e", spoolDir: join(dir, "spool"), warn: () => {} });
    vendor.server.push({ sse: fixture("openai-stream.json"), delayMs: 3 });
    const openai = wrapOpenAI(new OpenAI({ apiKey: "sk-x", baseURL: `${vendor.server.url}/v1`, maxRetries: 0 }), { client });
    const chat = traceable(
      async (question: string) => {
        let text = "";
        for await (const c of await openai.chat.completions.create({
          model: "gpt-4o-mini",
          stream: true,
          messages: [{ role: "user", content: question }],
        }))
          text += c.choices[0]?.delta.content ?? "";
        return text;
      },
      { name: "chat", client },
    );
    expect(await chat("hello?")).toBe("Hello! How can I help?");
    await client.shutdown();
    const { runs } = await col.collector.store.queryRuns({ project: "e2e" });
    expect(runs).toHaveLength(2);
    const llm = runs.find((r) => r.run_type === "llm")!;
    const root = runs.find((r) => r.name === "chat")!;
    expect(llm.parent_run_id).toBe(root.id);
    expect(llm.end_time).toBeTruthy();
    expect(llm.detected_format).toBe("native");
    expect(llm.first_token_time).toBe(llm.events!.find((e) => e.name === "new_token")!.time);
    expect(llm.first_token_time! > llm.start_time && llm.first_token_time! < llm.end_time!).toBe(true);
    expect((llm.extra as { metadata: Record<string, unknown> }).metadata).toMatchObject({
      trace_provider: "openai",
      trace_model_name: "gpt-4o-mini-2024-07-18",
    });
    expect(root.outputs).toEqual({ output: "Hello! How can I help?" });
    // The stream reported no usage: the estimate, made off the caller's path, still arrived.
    const usage = (llm.outputs as { messages: { usage_metadata?: Record<string, unknown> }[] }).messages[0]!.usage_metadata;
    expect(usage).toMatchObject({ estimated: true, input_tokens: expect.any(Number), output_tokens: expect.any(Number) });
    expect(usage!.output_tokens as number).toBeGreaterThan(0);
  });
});
