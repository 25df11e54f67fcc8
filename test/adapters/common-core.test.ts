/** The shared adapter core (adapters/common): the one withExtras, usage pieces, stream tails and the detect skeleton. */
import { describe, expect, it } from "vitest";
import type { ContentBlock } from "../../src/format/schema.js";
import { withExtras } from "../../adapters/common/extras.js";
import { cacheDetails, countDetails, otherUsageFields } from "../../adapters/common/usage.js";
import { choicesResult, foldStream, onFirstMessage } from "../../adapters/common/stream.js";
import { detector } from "../../adapters/common/detect.js";
import { NormalizeError } from "../../src/errors.js";

const text = (extras?: Record<string, unknown>): ContentBlock =>
  extras ? { type: "text", text: "t", extras } : { type: "text", text: "t" };

describe("withExtras: how new extras meet a block's own", () => {
  it("replace sets what it is given, even an empty object; replace-nonempty ignores an empty one", () => {
    expect(withExtras(text(), {}, "replace")).toEqual(text({}));
    expect(withExtras(text(), {}, "replace-nonempty")).toEqual(text());
    expect(withExtras(text({ a: 1 }), { b: 2 }, "replace")).toEqual(text({ b: 2 }));
  });

  it("merge lays the new over the old in a new object, so extras shared by two blocks stay as they were", () => {
    const shared = { a: 1 };
    const one = withExtras(text(), shared, "merge");
    withExtras(one, { a: 2, b: 3 }, "merge");
    expect(one.extras).toEqual({ a: 2, b: 3 });
    expect(shared).toEqual({ a: 1 });
  });

  it("merge-owned lays the new over the old in place, and hands over the first object it is given", () => {
    const first = { a: 1 };
    const block = withExtras(text(), first, "merge-owned");
    expect(block.extras).toBe(first);
    withExtras(block, { b: 2 }, "merge-owned");
    expect(first).toEqual({ a: 1, b: 2 });
    expect(withExtras(text(), undefined, "merge")).toEqual(text());
  });
});

describe("usage pieces", () => {
  it("renames detail counts (own keys only) and names a bad one by its place", () => {
    expect(
      countDetails({ cached_tokens: 3, constructor: 1, other: 2 }, ["usage"], "prompt_tokens_details", { cached_tokens: "cache_read" }),
    ).toEqual({ cache_read: 3, constructor: 1, other: 2 });
    expect(countDetails(null, ["usage"], "x", {})).toBeUndefined();
    expect(() => countDetails({ cached_tokens: -1 }, ["usage"], "prompt_tokens_details", {})).toThrow(NormalizeError);
    let caught: unknown;
    try {
      countDetails({ cached_tokens: "x" }, ["usage"], "prompt_tokens_details", {});
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(NormalizeError);
    expect((caught as NormalizeError).issues[0]!.loc).toEqual(["usage", "prompt_tokens_details", "cached_tokens"]);
  });

  it("cache details only when the vendor reported one; other fields kept with nulls kept or dropped by name", () => {
    expect(cacheDetails(undefined, undefined)).toBeUndefined();
    expect(cacheDetails(2, undefined)).toEqual({ cache_read: 2 });
    expect(cacheDetails(0, 5)).toEqual({ cache_read: 0, cache_creation: 5 });
    const u = { input_tokens: 1, service_tier: "standard", geo: null };
    expect(otherUsageFields(u, new Set(["input_tokens"]), "keep")).toEqual({ service_tier: "standard", geo: null });
    expect(otherUsageFields(u, new Set(["input_tokens"]), "drop")).toEqual({ service_tier: "standard" });
    expect(otherUsageFields({ input_tokens: 1 }, new Set(["input_tokens"]), "drop")).toBeUndefined();
  });
});

describe("stream tails", () => {
  it("foldStream refuses what is not an array, naming the chunks", () => {
    const acc = { push: () => false, result: () => ({ messages: [] }) };
    expect(() => foldStream({} as unknown as unknown[], acc, "widget events")).toThrow(/array of widget events/);
  });

  it("onFirstMessage adds only the defined facts, after the message's own extras", () => {
    const r = onFirstMessage(
      { messages: [{ role: "assistant", content: [], extras: { a: 1 } }] },
      { stream_error: undefined, unmapped_events: [{ type: "x" }] },
    );
    expect(r.messages[0]!.extras).toEqual({ a: 1, unmapped_events: [{ type: "x" }] });
    const untouched = onFirstMessage({ messages: [{ role: "assistant", content: [] }] }, { stream_error: undefined });
    expect(untouched.messages[0]).toEqual({ role: "assistant", content: [] });
  });

  it("choicesResult puts usage and chunk fields on the first choice, and makes one message for usage alone", () => {
    const usage = { input_tokens: 1, output_tokens: 2, total_tokens: 3 };
    expect(choicesResult([], { usage, meta: { id: "c1" }, model: "m", stop: "stop" })).toEqual({
      messages: [{ role: "assistant", content: [], usage_metadata: usage, extras: { id: "c1" } }],
      trace_provider: "openai",
      trace_model_name: "m",
      usage_metadata: usage,
      stop_reason: "stop",
    });
    expect(choicesResult([], { meta: {} }).messages).toEqual([]);
  });
});

describe("detect skeleton", () => {
  const detect = detector({
    isRequest: (v) => typeof v === "object" && v !== null && "ask" in v,
    isResponse: (v) => typeof v === "object" && v !== null && "answer" in v,
    isStream: (v) => v.every((e) => typeof e === "object" && e !== null && "delta" in e),
    settledByResponse: (v) => typeof v === "object" && v !== null && "plain" in v,
    pairFirst: "request",
  });

  it("tells requests, responses, streams and pairs apart, and never throws", () => {
    expect(detect({ ask: 1 })).toBe("request");
    expect(detect({ answer: 1 })).toBe("response");
    expect(detect([{ delta: 1 }])).toBe("stream");
    expect(detect({ request: { ask: 1 }, response: { answer: 1 } })).toBe("pair");
    expect(detect({ request: { ask: 1 }, response: [{ delta: 1 }] })).toBe("pair");
    expect(detect({ request: null, response: null })).toBeNull();
    expect(detect({ request: { other: 1 }, response: { answer: 1 } })).toBeNull();
    expect(detect("x")).toBeNull();
    const throwing = detector({
      isRequest: () => {
        throw new Error("boom");
      },
      isResponse: () => false,
      isStream: () => false,
      pairFirst: "response",
    });
    expect(throwing({ a: 1 })).toBeNull();
  });

  it("claims a plain request only with a response of its own beside it", () => {
    expect(detect({ request: { plain: 1 }, response: { answer: 1 } })).toBe("pair");
    expect(detect({ request: { plain: 1 } })).toBeNull();
    expect(detect({ request: { plain: 1 }, response: { other: 1 } })).toBeNull();
  });
});
