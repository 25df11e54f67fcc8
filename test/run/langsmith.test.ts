/** LangSmith's `ls_*` run metadata in the run builder's names. */
import { describe, expect, it } from "vitest";
import { withModelIdentity } from "../../src/run/langsmith.js";

const LS = {
  ls_provider: "openai",
  ls_model_name: "gpt-4o",
  ls_model_type: "chat",
  ls_temperature: 0.2,
  ls_max_tokens: 50,
  ls_stop: ["\n"],
  ls_integration: "langchain_chat_model",
};

describe("withModelIdentity", () => {
  it("reads ls_provider / ls_model_name when nothing else names the model, and copies the ls_* settings into invocation_params", () => {
    expect(withModelIdentity(LS)).toEqual({
      ...LS,
      trace_provider: "openai",
      trace_model_name: "gpt-4o",
      invocation_params: { temperature: 0.2, max_tokens: 50, stop: ["\n"] },
    });
  });

  it("prefers the model the messages name (the one that answered) to ls_model_name, and a sent trace_* to both", () => {
    expect(withModelIdentity(LS, { trace_model_name: "gpt-4o-2024-08-06" })).toMatchObject({
      trace_provider: "openai",
      trace_model_name: "gpt-4o-2024-08-06",
    });
    expect(
      withModelIdentity(
        { ...LS, trace_provider: "azure", trace_model_name: "my-deployment" },
        { trace_provider: "openai", trace_model_name: "gpt-4o-2024-08-06" },
      ),
    ).toMatchObject({ trace_provider: "azure", trace_model_name: "my-deployment" });
  });

  it("keeps invocation_params the run already has, and adds nothing twice", () => {
    const once = withModelIdentity({ ...LS, invocation_params: { temperature: 1, seed: 7 } })!;
    expect(once.invocation_params).toEqual({ temperature: 1, seed: 7, max_tokens: 50, stop: ["\n"] });
    expect(withModelIdentity(once)).toBeUndefined();
    expect(withModelIdentity({ user: "x" })).toBeUndefined();
  });
});
