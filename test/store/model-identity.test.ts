/**
 * The store gives an llm run sent without `trace_provider` / `trace_model_name`
 * the run builder's names on ingest (run/langsmith.ts), so the trace list shows
 * LangChain's runs like every other run.
 */
import { describe, expect, it } from "vitest";
import { SqliteStore } from "../../src/store/sqlite/index.js";
import { runRecord, testId } from "../helpers/collector.js";

const LS = {
  ls_provider: "openai",
  ls_model_name: "gpt-4o",
  ls_model_type: "chat",
  ls_temperature: 0.2,
  ls_max_tokens: 50,
  ls_stop: ["\n"],
  ls_integration: "langchain_chat_model",
};

describe("the store's ingest", () => {
  const lcInputs = {
    messages: [[{ lc: 1, type: "constructor", id: ["langchain_core", "messages", "HumanMessage"], kwargs: { content: "Hi" } }]],
  };
  const lcOutputs = {
    generations: [
      [
        {
          text: "Hello",
          message: {
            lc: 1,
            type: "constructor",
            id: ["langchain_core", "messages", "AIMessage"],
            kwargs: {
              content: "Hello",
              response_metadata: { model_name: "gpt-4o-2024-08-06" },
              usage_metadata: { input_tokens: 25, output_tokens: 9, total_tokens: 34 },
            },
          },
        },
      ],
    ],
  };

  it("names the model of a LangChain run by ls_model_name at its start, then by the reply's model once it ends, and prices it", async () => {
    const store = new SqliteStore(":memory:");
    const id = testId();
    await store.ingest({
      post: [runRecord({ id, run_type: "llm", name: "ChatOpenAI", inputs: lcInputs, extra: { metadata: LS } }) as never],
    });
    expect((await store.getRun(id))!.extra!.metadata).toMatchObject({
      trace_provider: "openai",
      trace_model_name: "gpt-4o",
      invocation_params: { temperature: 0.2 },
    });
    await store.ingest({ patch: [{ id, end_time: "2026-11-22T10:15:01.000000Z", outputs: lcOutputs, extra: { metadata: LS } } as never] });
    const run = (await store.getRun(id))!;
    expect(run.extra!.metadata).toMatchObject({ trace_provider: "openai", trace_model_name: "gpt-4o-2024-08-06", ls_model_name: "gpt-4o" });
    expect(run.normalized_outputs!.messages[0]).toMatchObject({ usage_metadata: { input_tokens: 25, total_cost: expect.any(Number) } });
    expect((await store.listTraces({})).traces[0]).toMatchObject({
      models: ["gpt-4o-2024-08-06"],
      providers: ["openai"],
      total_tokens: 34,
    });
    store.close();
  });

  it("names the reply's model once the run ends even when the end carries no metadata", async () => {
    const store = new SqliteStore(":memory:");
    const id = testId();
    await store.ingest({ post: [runRecord({ id, run_type: "llm", inputs: lcInputs, extra: { metadata: LS } }) as never] });
    await store.ingest({ patch: [{ id, end_time: "2026-11-22T10:15:01.000000Z", outputs: lcOutputs } as never] });
    expect((await store.getRun(id))!.extra!.metadata).toMatchObject({ trace_model_name: "gpt-4o-2024-08-06", ls_model_name: "gpt-4o" });
    store.close();
  });

  it("leaves a chain run's metadata as it was sent", async () => {
    const store = new SqliteStore(":memory:");
    const id = testId();
    await store.ingest({ post: [runRecord({ id, run_type: "chain", extra: { metadata: LS } }) as never] });
    expect((await store.getRun(id))!.extra!.metadata).toEqual(LS);
    store.close();
  });
});
