/**
 * What an llm run's metadata tells the store: the model a LangChain run names
 * (ls_* keys, then the reply's model) goes into its stored metadata and the
 * trace list, also when only the metadata changes; and usage an
 * instrumentation kept in metadata, with no message to carry it, counts in
 * the totals and the cost.
 */
import { describe, expect, it } from "vitest";
import { childRun, eachStore, rootRun, textMessages, type OpenStore } from "./fixtures.js";

const LS = { ls_provider: "openai", ls_model_name: "gpt-4o", ls_model_type: "chat", ls_temperature: 0.2 };
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

export function identityContract(open: OpenStore): void {
  describe("model identity and usage from metadata", () => {
    const store = eachStore(open);

    it("names a LangChain run's model by ls_model_name at its start, then by the reply's model once it ends, in the run and the trace list", async () => {
      const root = rootRun();
      const llm = childRun(root, { run_type: "llm", name: "ChatOpenAI", inputs: lcInputs, extra: { metadata: LS } });
      await store().ingest({ post: [root, llm] });
      expect((await store().getRun(llm.id))!.extra!.metadata).toMatchObject({
        trace_provider: "openai",
        trace_model_name: "gpt-4o",
        invocation_params: { temperature: 0.2 },
      });
      await store().ingest({
        patch: [
          {
            id: llm.id,
            trace_id: root.id,
            dotted_order: llm.dotted_order,
            end_time: "2026-11-22T10:15:01.000000Z",
            outputs: lcOutputs,
          } as never,
        ],
      });
      expect((await store().getRun(llm.id))!.extra!.metadata).toMatchObject({
        trace_model_name: "gpt-4o-2024-08-06",
        ls_model_name: "gpt-4o",
      });
      expect((await store().listTraces({})).traces[0]).toMatchObject({
        models: ["gpt-4o-2024-08-06"],
        providers: ["openai"],
        total_tokens: 34,
        total_cost: expect.any(Number),
      });
    });

    it("names the model again when a patch brings only the metadata", async () => {
      const root = rootRun();
      const llm = childRun(root, { run_type: "llm", inputs: textMessages(["user", "hi"]), outputs: textMessages(["assistant", "hello"]) });
      await store().ingest({ post: [root, llm] });
      expect((await store().listTraces({})).traces[0]!.models).toEqual([]);
      await store().ingest({
        patch: [
          {
            id: llm.id,
            trace_id: root.id,
            dotted_order: llm.dotted_order,
            extra: { metadata: { ls_provider: "anthropic", ls_model_name: "claude-sonnet-4" } },
          } as never,
        ],
      });
      expect((await store().getRun(llm.id))!.extra!.metadata).toMatchObject({
        trace_provider: "anthropic",
        trace_model_name: "claude-sonnet-4",
      });
      expect((await store().listTraces({})).traces[0]).toMatchObject({ models: ["claude-sonnet-4"], providers: ["anthropic"] });
    });

    it("counts usage kept in metadata when no output message carries it, in the run, the trace and the cost", async () => {
      const root = rootRun();
      const usage = { input_tokens: 3, output_tokens: 4, total_tokens: 7, total_cost: 0.25 };
      const llm = childRun(root, {
        run_type: "llm",
        end_time: "2026-11-22T10:15:01.000000Z",
        extra: { metadata: { trace_provider: "openai", trace_model_name: "gpt-4o", usage_metadata: usage } },
      });
      await store().ingest({ post: [root, llm] });
      expect((await store().listTraces({})).traces[0]).toMatchObject({
        input_tokens: 3,
        output_tokens: 4,
        total_tokens: 7,
        total_cost: 0.25,
      });
      expect((await store().traceRuns(root.id)).find((r) => r.id === llm.id)).toMatchObject({
        input_tokens: 3,
        output_tokens: 4,
        total_tokens: 7,
        total_cost: 0.25,
      });
      expect((await store().listTraces({ min_cost: 0.2 })).traces.map((t) => t.trace_id)).toEqual([root.id]);
    });
  });
}
