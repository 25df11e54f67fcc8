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
    const chain = lsTraceable(async (q: string) => llm({ model: "gpt-4o", messages: [{ role: "user", content: q }] }), {
      name: "answer",
      client,
      project_name: "ls-dropin",
      tracingEnabled: true,
    });
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

describe("feedback from the langsmith SDK against tracepipe serve", () => {
  const markup = "<b>great</b> <img src=x onerror=alert(1)>";

  it("stores createFeedback sent as a feedback part of a multipart batch and as POST /feedback", async () => {
    const client = new LangSmithClient({ apiUrl: col.url, apiKey: "local-key", autoBatchTracing: true });
    const answer = lsTraceable(async (q: string) => `echo ${q}`, {
      name: "graded",
      client,
      project_name: "ls-feedback",
      tracingEnabled: true,
    });
    await answer("hi");
    await client.awaitPendingTraceBatches();
    const [run] = (await col.collector.store.queryRuns({ project: "ls-feedback" })).runs;
    expect(run?.name).toBe("graded");
    // With a trace id the SDK batches the feedback into /runs/multipart (feedback.{id}); without one it posts /feedback.
    const batched = await client.createFeedback(run!.id, "correctness", {
      score: 1,
      comment: markup,
      traceId: run!.trace_id!,
      sessionId: "p-1",
    });
    await client.awaitPendingTraceBatches();
    const direct = await client.createFeedback(run!.id, "label", {
      value: { verdict: "ok" },
      score: true,
      feedbackSourceType: "model",
      sourceInfo: { judge: "g" },
    });
    const stored = await col.collector.store.feedbackOf([run!.id]);
    expect(stored.map((f) => [f.id, f.key, f.score, f.value, f.comment, f.source])).toEqual([
      [batched.id, "correctness", 1, null, markup, "api"],
      [direct.id, "label", 1, { verdict: "ok" }, null, "model"],
    ]);
    expect(stored[0]!.trace_id).toBe(run!.trace_id);
    expect(stored[0]!.extra).toEqual({ session_id: "p-1" });
    expect(stored[1]!.source_metadata).toEqual({ judge: "g" });
  });

  it("answers 422 naming each field of a feedback record without a run or a key", async () => {
    const res = await fetch(`${col.url}/feedback`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ run_id: "not-a-uuid", key: "" }),
    });
    expect(res.status).toBe(422);
    const { detail } = (await res.json()) as { detail: { loc: (string | number)[] }[] };
    expect(detail.map((d) => d.loc.join("."))).toEqual(["run_id", "key"]);
  });
});

describe("LangSmith environment variables as fallbacks", () => {
  it("reads LANGSMITH_* when TRACEPIPE_* is unset or blank, and TRACEPIPE_* wins when set", () => {
    const env = {
      LANGSMITH_ENDPOINT: "http://127.0.0.1:1/ls",
      LANGSMITH_API_KEY: "ls-key",
      LANGSMITH_PROJECT: "ls-proj",
      TRACEPIPE_PROJECT: " ",
    };
    const o = resolveOptions({}, env);
    expect([o.endpoint, o.apiKey, o.project]).toEqual(["http://127.0.0.1:1/ls", "ls-key", "ls-proj"]);
    const own = resolveOptions({}, { ...env, TRACEPIPE_ENDPOINT: "http://127.0.0.1:2", TRACEPIPE_PROJECT: "mine" });
    expect([own.endpoint, own.project]).toEqual(["http://127.0.0.1:2", "mine"]);
    expect(envValue("TRACEPIPE_TRACING", { LANGSMITH_TRACING: "false" })).toBe("false");
    expect(envValue("TRACEPIPE_API_KEY", { LANGSMITH_API_KEY: "k" }, { fallback: false })).toBeUndefined();
    expect(envValue("TRACEPIPE_DB", { TRACEPIPE_DB: "" })).toBeUndefined();
  });
});
