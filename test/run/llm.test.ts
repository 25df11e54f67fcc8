import { describe, expect, it } from "vitest";
import { ValidationError } from "../../src/errors.js";
import type { Message } from "../../src/format/schema.js";
import { buildRun, llmFields, llmRun, llmRunName, readVendorCall } from "../../src/run/llm.js";
import { Run } from "../../src/run/schema.js";

const user = (text: string): Message => ({ role: "user", content: [{ type: "text", text }] });
const assistant = (text: string): Message => ({ role: "assistant", content: [{ type: "text", text }] });

describe("llmFields", () => {
  it("names the response's model before the request's, and drops empty invocation params", () => {
    const f = llmFields(
      {
        inputs: [user("hi")],
        outputs: [assistant("yo")],
        provider: "openai",
        requestModel: "gpt-4o",
        responseModel: "gpt-4o-2024-08-06",
        invocation_params: {},
      },
      { validation: "annotate", estimate: "never" },
    );
    expect(f.metadata).toEqual({ trace_provider: "openai", trace_model_name: "gpt-4o-2024-08-06" });
    const g = llmFields(
      { inputs: [user("hi")], requestModel: "gpt-4o", invocation_params: { temperature: 0 } },
      { validation: "annotate", estimate: "never" },
    );
    expect(g.metadata).toEqual({ trace_model_name: "gpt-4o", invocation_params: { temperature: 0 } });
    expect(g.outputs).toBeUndefined();
  });

  it("keeps reported usage and marks estimated usage", () => {
    const reported = llmFields(
      { inputs: [user("hi")], outputs: [assistant("yo")], usage: { input_tokens: 3, output_tokens: 1, total_tokens: 4 } },
      { validation: "annotate", estimate: "now" },
    );
    expect(reported.outputs!.messages[0]!.usage_metadata).toEqual({ input_tokens: 3, output_tokens: 1, total_tokens: 4 });
    const estimated = llmFields(
      { inputs: [user("hello there")], outputs: [assistant("general kenobi")], responseModel: "gpt-4o" },
      { validation: "annotate", estimate: "now" },
    );
    expect(estimated.outputs!.messages[0]!.usage_metadata).toMatchObject({
      estimated: true,
      input_tokens: expect.any(Number),
      output_tokens: expect.any(Number),
    });
    expect(estimated.estimate).toBeUndefined();
  });

  it("defers the estimate to a step the caller runs later", () => {
    const f = llmFields({ inputs: [user("hello")], outputs: [assistant("hi")] }, { validation: "annotate", estimate: "defer" });
    expect(f.outputs!.messages[0]!.usage_metadata).toBeUndefined();
    f.estimate!();
    expect(f.outputs!.messages[0]!.usage_metadata?.estimated).toBe(true);
  });

  it("estimates with the model SPEC §2.6 names: trace_model_name, else inputs.model, else inputs.model_name", () => {
    // A tiktoken model counts differently from the heuristic for other vendors: the same text gives different counts.
    const text = "The quick brown fox jumps over the lazy dog. ".repeat(40);
    const count = (rawInputs: Record<string, unknown>, model?: string) => {
      const f = llmFields(
        { inputs: [user(text)], outputs: [assistant("ok")], responseModel: model },
        { validation: "annotate", estimate: "now", rawInputs },
      );
      return f.outputs!.messages[0]!.usage_metadata!.input_tokens;
    };
    // The check discriminates: another vendor's model counts this text differently.
    expect(count({ model: "claude-sonnet-4-5" })).not.toBe(count({}, "gpt-4o"));
    expect(count({ model: "gpt-4o" })).toBe(count({}, "gpt-4o"));
    expect(count({ model_name: "gpt-4o" })).toBe(count({}, "gpt-4o"));
    expect(count({ model: "gpt-4o", model_name: "claude-sonnet-4-5" })).toBe(count({}, "gpt-4o"));
  });

  it("applies one validation policy: reject throws naming the field, annotate records the same issues", () => {
    const bad = { inputs: [{ role: "tool", content: [{ type: "text", text: "x" }], tool_call_id: "nowhere" } as Message], outputs: [] };
    let thrown: unknown;
    try {
      llmFields(bad, { validation: "reject", estimate: "never" });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ValidationError);
    const issues = (thrown as ValidationError).issues;
    expect(issues[0]!.loc.slice(0, 2)).toEqual(["messages", 0]);
    const annotated = llmFields(bad, { validation: "annotate", estimate: "never" });
    expect(annotated.metadata.validation_errors).toEqual(issues);
  });

  it("adds a new_token event at the first token", () => {
    const f = llmFields(
      { inputs: [user("hi")], outputs: [assistant("yo")], firstTokenUs: 1_700_000_000_123_456 },
      { validation: "annotate", estimate: "never" },
    );
    expect(f.events).toEqual([{ name: "new_token", time: "2023-11-14T22:13:20.123456Z" }]);
  });
});

describe("buildRun / llmRun", () => {
  it("builds a valid root run whose end never precedes its start", () => {
    const run = buildRun({
      at: { id: "0190f0e4-0000-7000-8000-000000000001" },
      name: "x",
      run_type: "chain",
      startUs: 2_000_000,
      endUs: 1_000_000,
      project: "p",
    });
    expect(Run.safeParse(run).success).toBe(true);
    expect(run.trace_id).toBe(run.id);
    expect(run.end_time).toBe(run.start_time);
    expect(run.dotted_order.endsWith(run.id)).toBe(true);
    expect(run.session_name).toBe("p");
  });

  it("names llm runs by provider and merges the producer's metadata under the llm fields", () => {
    const { call } = readVendorCall({
      request: { model: "gpt-4o", messages: [{ role: "user", content: "hi" }], temperature: 0.5 },
      response: {
        id: "c",
        object: "chat.completion",
        model: "gpt-4o-2024-08-06",
        choices: [{ index: 0, message: { role: "assistant", content: "yo" }, finish_reason: "stop" }],
        usage: { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 },
      },
    });
    const { run } = llmRun(
      call,
      { at: { id: "0190f0e4-0000-7000-8000-000000000002" }, startUs: 1_000_000, metadata: { source: "test" } },
      { validation: "reject", estimate: "now" },
    );
    expect(run.name).toBe(llmRunName("openai"));
    expect(run.name).toBe("ChatOpenAI");
    expect(run.extra?.metadata).toEqual({
      source: "test",
      trace_provider: "openai",
      trace_model_name: "gpt-4o-2024-08-06",
      invocation_params: { temperature: 0.5 },
    });
    expect((run.outputs!.messages as Message[])[0]!.usage_metadata).toMatchObject({ input_tokens: 2, output_tokens: 1, total_tokens: 3 });
  });

  it("names where a vendor record is wrong", () => {
    expect(() => readVendorCall({ format: "openai-chat", request: { model: "gpt-4o", messages: [{ role: "user", content: 5 }] } })).toThrow(
      ValidationError,
    );
    try {
      readVendorCall({ format: "openai-chat", request: { model: "gpt-4o", messages: [{ role: "user", content: 5 }] } });
    } catch (err) {
      expect((err as ValidationError).issues[0]!.loc[0]).toBe("request");
    }
    expect(() => readVendorCall({ format: "nope", request: {} })).toThrow(/unknown format/);
  });
});
