import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { ADAPTERS } from "../../adapters/index.js";
import { normalize } from "../../src/normalize.js";
import { NormalizeError } from "../../src/errors.js";

/** Call fn; anything thrown must be a NormalizeError with well-formed issues. */
function onlyNormalizeError(fn: () => unknown): void {
  try {
    fn();
  } catch (err) {
    if (!(err instanceof NormalizeError)) throw new Error(`threw ${String(err)} instead of NormalizeError`, { cause: err });
    expect(err.issues.length).toBeGreaterThan(0);
    for (const i of err.issues) expect(Array.isArray(i.loc) && typeof i.msg === "string" && typeof i.type === "string").toBe(true);
  }
}

// Shapes close to real payloads reach deep code paths that pure random JSON never does.
const part = fc.oneof(
  fc.record({ type: fc.constantFrom("text", "image_url", "input_audio", "file", "refusal", "image", "document", "tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use", "web_search_tool_result", "search_result", "tool_call", "reasoning"), text: fc.jsonValue(), image_url: fc.jsonValue(), source: fc.jsonValue(), input: fc.jsonValue(), content: fc.jsonValue(), id: fc.jsonValue(), tool_use_id: fc.jsonValue(), name: fc.jsonValue() }, { requiredKeys: ["type"] }),
  fc.jsonValue(),
);
const message = fc.record({ role: fc.oneof(fc.constantFrom("system", "developer", "user", "assistant", "tool", "function", "reasoning"), fc.jsonValue()), content: fc.oneof(fc.string(), fc.array(part, { maxLength: 4 }), fc.jsonValue()), tool_calls: fc.jsonValue(), tool_call_id: fc.jsonValue(), function_call: fc.jsonValue(), name: fc.jsonValue() }, { requiredKeys: ["role"] });
const request = fc.record({ model: fc.oneof(fc.constantFrom("gpt-4o", "claude-sonnet-4-5"), fc.jsonValue()), messages: fc.oneof(fc.array(message, { maxLength: 5 }), fc.jsonValue()), system: fc.jsonValue(), max_tokens: fc.jsonValue() }, { requiredKeys: ["messages"] });
const response = fc.record({ object: fc.constantFrom("chat.completion", "x"), type: fc.constantFrom("message", "y"), role: fc.jsonValue(), choices: fc.oneof(fc.array(fc.record({ message: fc.oneof(message, fc.jsonValue()), index: fc.jsonValue(), finish_reason: fc.jsonValue() }), { maxLength: 3 }), fc.jsonValue()), content: fc.oneof(fc.array(part, { maxLength: 4 }), fc.jsonValue()), usage: fc.oneof(fc.dictionary(fc.constantFrom("prompt_tokens", "completion_tokens", "input_tokens", "output_tokens", "cache_read_input_tokens", "prompt_tokens_details"), fc.jsonValue()), fc.jsonValue()), usage_metadata: fc.jsonValue() });
const event = fc.record({ type: fc.constantFrom("message_start", "content_block_start", "content_block_delta", "message_delta", "error", "ping"), index: fc.jsonValue(), delta: fc.jsonValue(), content_block: fc.jsonValue(), message: fc.jsonValue(), usage: fc.jsonValue(), object: fc.constantFrom("chat.completion.chunk"), choices: fc.jsonValue() }, { requiredKeys: ["type"] });
const anyPayload = fc.oneof(fc.jsonValue(), request, response, fc.array(event, { maxLength: 6 }), fc.record({ request, response }));

describe("adapters under arbitrary input", () => {
  for (const adapter of ADAPTERS) {
    it(`${adapter.name} throws nothing but NormalizeError`, () => {
      fc.assert(
        fc.property(anyPayload, (payload) => {
          expect(adapter.detect(payload) === null || typeof adapter.detect(payload) === "string").toBe(true);
          onlyNormalizeError(() => adapter.normalize(payload));
          onlyNormalizeError(() => adapter.normalizeRequest(payload));
          onlyNormalizeError(() => adapter.normalizeResponse(payload));
          if (Array.isArray(payload)) onlyNormalizeError(() => adapter.normalizeStream(payload));
          onlyNormalizeError(() => {
            const acc = adapter.createStreamAccumulator();
            for (const c of Array.isArray(payload) ? payload : [payload]) acc.push(c);
            return acc.result();
          });
        }),
        { numRuns: 400 },
      );
    });
  }

  it("normalize({format: auto}) throws nothing but NormalizeError", () => {
    fc.assert(fc.property(anyPayload, (payload) => onlyNormalizeError(() => normalize(payload))), { numRuns: 400 });
  });
});
