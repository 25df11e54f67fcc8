/**
 * `normalize`'s record keeps a request's messages and model, never its
 * invocation parameters, so the record path asks the request readers for none
 * (common/request.ts, `withParams`). What it keeps must be what the full
 * reading gives, as text (key order included), on every generated record and
 * on requests that carry parameters of every kind.
 */
import { describe, expect, it } from "vitest";
import { normalize } from "../../src/normalize.js";
import { anthropicMessages, bedrockConverse, openaiChat, openaiCompletions, openaiResponses } from "../../adapters/index.js";
import type { Adapter } from "../../adapters/types.js";
import { RECORD_CLASSES } from "../../benchmarks/corpus.js";
import { FORMATS, generateFormatCorpus } from "../../benchmarks/corpus-formats.js";

const READERS: Record<string, Adapter> = {
  "openai-chat": openaiChat,
  "anthropic-messages": anthropicMessages,
  "openai-responses": openaiResponses,
  "bedrock-converse": bedrockConverse,
  "openai-completions": openaiCompletions,
};

/** The request reader with and without parameters agree on all but the parameters, which the second leaves empty. */
function sameWithoutParams(adapter: Adapter, request: unknown): void {
  const full = adapter.normalizeRequest(request);
  const bare = (adapter.normalizeRequest as (r: unknown, withParams: boolean) => typeof full)(request, false);
  expect(bare.invocation_params).toEqual({});
  const { invocation_params: _, ...rest } = full;
  const { invocation_params: __, ...bareRest } = bare;
  expect(JSON.stringify(bareRest)).toBe(JSON.stringify(rest));
}

describe("the record path reads requests without their invocation parameters", () => {
  it("keeps the messages, provider and model the full request reading gives, on every generated record", () => {
    for (const format of FORMATS) {
      const adapter = READERS[format];
      expect(adapter !== undefined || format === "gemini").toBe(true);
      if (!adapter) continue; // Gemini reads its parameters on its own path
      for (const kind of RECORD_CLASSES)
        for (const { payload } of generateFormatCorpus(20, kind, format, 3)) {
          sameWithoutParams(adapter, payload.request);
          const full = adapter.normalizeRequest(payload.request);
          expect(Object.keys(full.invocation_params).length).toBeGreaterThan(0);
          const out = normalize(payload);
          expect(JSON.stringify(out.inputs)).toBe(JSON.stringify({ messages: full.messages }));
          expect(out.metadata.trace_provider).toBe(full.trace_provider);
          // The response names the model first; a lone request gives the request's.
          expect(normalize(payload.request, { format }).metadata).toEqual({
            trace_provider: full.trace_provider,
            trace_model_name: full.trace_model_name,
          });
        }
    }
  });

  it("still gives every parameter to callers of normalizeRequest", () => {
    const request = {
      model: "gpt-4o",
      messages: [{ role: "user", content: "hi" }],
      temperature: 0.2,
      tools: [{ type: "function", function: { name: "f", parameters: {} } }],
      stop: undefined,
    };
    const withProto = JSON.parse(JSON.stringify(request).replace('"temperature"', '"__proto__":{"x":1},"temperature"')) as object;
    for (const r of [request, withProto]) sameWithoutParams(openaiChat, r);
    expect(openaiChat.normalizeRequest(withProto).invocation_params).toEqual(
      JSON.parse('{"__proto__":{"x":1},"temperature":0.2,"tools":[{"type":"function","function":{"name":"f","parameters":{}}}]}'),
    );
    const lone = { model: "claude-sonnet-4-5", max_tokens: 64, system: "be brief", messages: [{ role: "user", content: "hi" }] };
    sameWithoutParams(anthropicMessages, lone);
    expect(anthropicMessages.normalizeRequest(lone).invocation_params).toEqual({ max_tokens: 64 });
    expect(JSON.stringify(normalize(lone))).toBe(
      JSON.stringify({
        format: "anthropic-messages",
        metadata: { trace_provider: "anthropic", trace_model_name: "claude-sonnet-4-5" },
        inputs: { messages: anthropicMessages.normalizeRequest(lone).messages },
      }),
    );
  });
});
