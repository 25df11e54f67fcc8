/**
 * LangSmith drop-in: the `langsmith` SDK's own client, pointed at tracepipe's
 * collector, delivers its runs (and they are normalized); and tracepipe reads
 * LangSmith's environment variables when its own are unset.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client as LangSmithClient } from "langsmith";
import { traceable as lsTraceable } from "langsmith/traceable";
import { envValue } from "../../src/env.js";
import { resolveOptions } from "../../src/ingest/config.js";
import { startCollector, type Running } from "../helpers/collector.js";

let col: Running;
beforeAll(async () => {
  col = await startCollector();
});
afterAll(() => col.close());

describe("the langsmith SDK against tracepipe serve", () => {
  it("delivers a traced chain and its llm child, normalized", async () => {
    const client = new LangSmithClient({ apiUrl: col.url, apiKey: "local-key", autoBatchTracing: true });
    const llm = lsTraceable(
      async (input: { model: string; messages: { role: string; content: string }[] }) => ({
        id: "chatcmpl-1",
        object: "chat.completion",
        model: "gpt-4o-2024-08-06",
        choices: [{ index: 0, message: { role: "assistant", content: `echo: ${input.messages[0]!.content}` }, finish_reason: "stop" }],
        usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
      }),
      { name: "ChatOpenAI", run_type: "llm", client, project_name: "ls-dropin", tracingEnabled: true },
    );
    const chain = lsTraceable(async (q: string) => llm({ model: "gpt-4o", messages: [{ role: "user", content: q }] }), { name: "answer", client, project_name: "ls-dropin", tracingEnabled: true });
    await chain("hello");
    await client.awaitPendingTraceBatches();

    const { runs } = await col.collector.store.queryRuns({ project: "ls-dropin" });
    expect(runs.map((r) => r.name).sort()).toEqual(["ChatOpenAI", "answer"]);
    const child = runs.find((r) => r.name === "ChatOpenAI")!;
    const root = runs.find((r) => r.name === "answer")!;
    expect(child.parent_run_id).toBe(root.id);
    expect(child.trace_id).toBe(root.id);
    expect(child.end_time).toBeTruthy();
    expect(child.detected_format).toBe("openai-chat");
    expect(child.normalized_inputs).toEqual({ messages: [{ role: "user", content: [{ type: "text", text: "hello" }] }] });
    expect((child.normalized_outputs!.messages[0] as { content: unknown }).content).toEqual([{ type: "text", text: "echo: hello" }]);
  });
});

describe("LangSmith environment variables as fallbacks", () => {
  it("reads LANGSMITH_* when TRACEPIPE_* is unset or blank, and TRACEPIPE_* wins when set", () => {
    const env = { LANGSMITH_ENDPOINT: "http://127.0.0.1:1/ls", LANGSMITH_API_KEY: "ls-key", LANGSMITH_PROJECT: "ls-proj", TRACEPIPE_PROJECT: " " };
    const o = resolveOptions({}, env);
    expect([o.endpoint, o.apiKey, o.project]).toEqual(["http://127.0.0.1:1/ls", "ls-key", "ls-proj"]);
    const own = resolveOptions({}, { ...env, TRACEPIPE_ENDPOINT: "http://127.0.0.1:2", TRACEPIPE_PROJECT: "mine" });
    expect([own.endpoint, own.project]).toEqual(["http://127.0.0.1:2", "mine"]);
    expect(envValue("TRACEPIPE_TRACING", { LANGSMITH_TRACING: "false" })).toBe("false");
    expect(envValue("TRACEPIPE_API_KEY", { LANGSMITH_API_KEY: "k" }, { fallback: false })).toBeUndefined();
    expect(envValue("TRACEPIPE_DB", { TRACEPIPE_DB: "" })).toBeUndefined();
  });
});
