/**
 * The OpenAI chat usage reader is the shared included-cache reader
 * (common/usage.ts) written out with chat's field names: on any usage object
 * the two must give the same usage, as text (key order included), or the same
 * NormalizeError.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { CHAT_FIELDS } from "../../adapters/openai-chat/usage.js";
import { normalizeUsage } from "../../adapters/openai-chat/index.js";
import { includedCacheUsage, knownFields } from "../../adapters/common/usage.js";
import { NormalizeError } from "../../src/errors.js";

const shared = knownFields(CHAT_FIELDS);

function outcome(read: () => unknown): string {
  try {
    return `usage ${JSON.stringify(read())}`;
  } catch (err) {
    if (err instanceof NormalizeError) return `error ${JSON.stringify(err.issues)}`;
    throw err;
  }
}

const count = fc.oneof(fc.nat(), fc.constant(0), fc.constant(Number.MAX_SAFE_INTEGER));
const anyValue = fc.oneof(count, fc.constant(null), fc.constant(undefined), fc.integer({ min: -5, max: -1 }), fc.double(), fc.string());
const detailName = fc.oneof(
  fc.constantFrom("cached_tokens", "audio_tokens", "reasoning_tokens", "accepted_prediction_tokens", "constructor", "__proto__"),
  fc.string(),
);
const details = fc.oneof(
  fc.dictionary(detailName, fc.oneof(count, fc.constant(null)), { maxKeys: 4 }),
  fc.dictionary(detailName, anyValue, { maxKeys: 3 }),
  fc.constant(null),
  fc.constant(undefined),
  fc.string(),
  fc.array(count, { maxLength: 2 }),
);
const fieldName = fc.oneof(
  fc.constantFrom("prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details", "completion_tokens_details"),
  fc.constantFrom("service_tier", "constructor", "__proto__", "toString"),
  fc.string(),
);

describe("the OpenAI chat usage reader", () => {
  it("gives what the shared reader gives with CHAT_FIELDS, for any usage object", () => {
    const usage = fc.record(
      {
        prompt_tokens: anyValue,
        completion_tokens: anyValue,
        total_tokens: anyValue,
        prompt_tokens_details: details,
        completion_tokens_details: details,
      },
      { requiredKeys: [] },
    );
    const withOthers = fc.tuple(usage, fc.dictionary(fieldName, fc.oneof(anyValue, details), { maxKeys: 3 })).map(([u, more]) => {
      // Own keys as JSON.parse makes them, `__proto__` included.
      return JSON.parse(JSON.stringify({ ...more, ...u })) as Record<string, unknown>;
    });
    fc.assert(
      fc.property(fc.oneof(usage, withOthers), (u) => {
        expect(outcome(() => normalizeUsage(u, ["usage"]))).toBe(outcome(() => includedCacheUsage(u, ["usage"], shared)));
      }),
      { numRuns: 3000 },
    );
  });

  it("adds up a missing total, refuses a sum past 2^53 - 1, and passes over absent usage", () => {
    expect(normalizeUsage({ prompt_tokens: 5, completion_tokens: 2 }, ["usage"])).toEqual({
      input_tokens: 5,
      output_tokens: 2,
      total_tokens: 7,
    });
    const big = { prompt_tokens: Number.MAX_SAFE_INTEGER, completion_tokens: 1 };
    expect(outcome(() => normalizeUsage(big, ["usage"]))).toBe(outcome(() => includedCacheUsage(big, ["usage"], shared)));
    expect(outcome(() => normalizeUsage(big, ["usage"]))).toMatch(/^error .*"usage","total_tokens"/);
    expect(normalizeUsage(null, ["usage"])).toBeUndefined();
    expect(normalizeUsage(undefined, ["usage"])).toBeUndefined();
    expect(outcome(() => normalizeUsage("12", ["usage"]))).toMatch(/^error .*object_type/);
  });
});
