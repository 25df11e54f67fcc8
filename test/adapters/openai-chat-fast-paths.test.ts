/**
 * The OpenAI chat adapter's cheaper paths must give what the longer ones gave:
 * detection's request scan for Anthropic and Converse evidence (markers.ts isChatWithoutAnthropicOrConverseEvidence)
 * steps aside wherever it cannot decide alone, orphan tool messages are judged
 * while the messages are built, and the reply envelope lands in the first
 * message's extras in the same place and order.
 */
import { describe, expect, it } from "vitest";
import { normalize } from "../../src/normalize.js";
import { fastDetect } from "../../adapters/index.js";
import { markOrphans } from "../../adapters/common/content.js";
import { normalizeMessages } from "../../adapters/openai-chat/index.js";
import { agree } from "../helpers/detect-agree.js";
import fc from "fast-check";
import { CHAT_FIELDS } from "../../adapters/openai-chat/usage.js";
import { normalizeUsage } from "../../adapters/openai-chat/index.js";
import { includedCacheUsage, knownFields } from "../../adapters/common/usage.js";

type Obj = Record<string, unknown>;

const reply = (message: Obj = { role: "assistant", content: "ok" }): Obj => ({
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1,
  model: "gpt-4o-2024-08-06",
  choices: [{ index: 0, message, finish_reason: "stop" }],
});

describe("detection of an OpenAI pair from the request's Anthropic evidence alone", () => {
  it("names a plain chat request beside an OpenAI response OpenAI's", () => {
    const p = { request: { model: "local", messages: [{ role: "user", content: "hi" }] }, response: reply() };
    expect(fastDetect(p)).toBe("openai-chat");
    expect(agree(p)).toBe("format openai-chat");
  });

  it("asks the full scan about a Claude model name when no OpenAI role was seen, and names the pair when a system message is there", () => {
    const bare = { request: { model: "claude-sonnet-4-5", messages: [{ role: "user", content: "hi" }] }, response: reply() };
    expect(fastDetect(bare)).toBeUndefined();
    expect(agree(bare)).toMatch(/^error /);
    // A message key only OpenAI writes is evidence too, which the full scan (asked for a Claude name) finds.
    const named = { request: { model: "claude-sonnet-4-5", messages: [{ role: "user", content: "hi", name: "ann" }] }, response: reply() };
    expect(fastDetect(named)).toBe("openai-chat");
    expect(agree(named)).toBe("format openai-chat");
    const system = {
      request: {
        model: "claude-sonnet-4-5",
        messages: [
          { role: "system", content: "be brief" },
          { role: "user", content: "hi" },
        ],
      },
      response: reply(),
    };
    expect(fastDetect(system)).toBe("openai-chat");
    expect(agree(system)).toBe("format openai-chat");
  });

  it("steps aside for Anthropic blocks, body keys, tools or tool choice in the request, and for a request that is not chat-shaped", () => {
    const messages = [{ role: "user", content: "hi" }];
    const requests: Obj[] = [
      { model: "m", messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: "x" }] }] },
      { model: "m", messages: [{ role: "user", content: [{ type: "image", source: { type: "base64", data: "AA" } }] }] },
      { model: "m", messages: [{ role: "user", content: [{ type: "text", text: "x", citations: [] }] }] },
      { model: "m", system: "be brief", messages },
      { model: "m", messages, tools: [{ name: "f", input_schema: { type: "object" } }] },
      { model: "m", messages, tool_choice: { type: "any" } },
      { model: "m", messages: [{ content: "no role" }] },
      { model: "m", messages: ["not a message"] },
    ];
    for (const request of requests) {
      const p = { request, response: reply() };
      expect(fastDetect(p)).toBeUndefined();
      agree(p);
    }
  });

  it("reads past the 64th message as the full scan does: roles there may be anything, and a bad one still counts", () => {
    const many = (last: unknown): Obj[] => [...Array.from({ length: 70 }, () => ({ role: "user", content: "hi" })), last as Obj];
    const loose = { request: { model: "m", messages: many("not an object") }, response: reply() };
    expect(fastDetect(loose)).toBe("openai-chat");
    expect(agree(loose)).toBe("format openai-chat");
    const anthropicLate = {
      request: { model: "m", messages: many({ role: "user", content: [{ type: "tool_use", id: "t", name: "f", input: {} }] }) },
      response: reply(),
    };
    expect(fastDetect(anthropicLate)).toBeUndefined();
    agree(anthropicLate);
  });

  it("a request message that throws when read or when its keys are listed gives the full scan's answer", () => {
    const hostileRole: Obj = { content: "hi" };
    Object.defineProperty(hostileRole, "role", {
      enumerable: true,
      get() {
        throw new Error("hostile role");
      },
    });
    const hostileKeys = new Proxy(
      { role: "user", content: "hi" },
      {
        ownKeys() {
          throw new Error("hostile keys");
        },
      },
    );
    for (const m of [hostileRole, hostileKeys]) {
      for (const at of [0, 70]) {
        const messages: unknown[] = Array.from({ length: at === 0 ? 1 : 71 }, () => ({ role: "user", content: "hi" }));
        messages[at] = m;
        const p = { request: { model: "m", messages }, response: reply() };
        expect(fastDetect(p)).toBeUndefined();
        agree(p);
      }
    }
  });
});

describe("orphan tool messages judged while the messages are built", () => {
  const call = (id: string) => ({
    role: "assistant",
    content: null,
    tool_calls: [{ id, type: "function", function: { name: "f", arguments: '{"a":1}' } }],
  });
  const result = (id: string, extra: Obj = {}) => ({ role: "tool", tool_call_id: id, content: "r", ...extra });

  it("flags exactly what markOrphans over the finished list flags, with extras in the same place", () => {
    const histories: Obj[][] = [
      [result("c1"), call("c1"), result("c1")],
      [call("c1"), result("c2", { name: "f" }), result("c1", { name: "f" })],
      [
        { role: "assistant", content: null, function_call: { name: "f", arguments: "{}" } },
        { role: "function", name: "f", content: "r" },
      ],
      [{ role: "function", name: "f", content: "r" }],
      [{ role: "user", content: "hi" }, call("c1"), call("c2"), result("c2"), result("c1"), result("c3")],
      // Past the short list of ids: results for the first, the last and missing calls among many.
      [
        ...Array.from({ length: 40 }, (_, i) => call(`c${i}`)),
        result("c0"),
        result("c39"),
        result("c40"),
        call("c41"),
        result("c41"),
        result("x"),
      ],
      [...Array.from({ length: 33 }, (_, i) => call(`c${i}`)), result("c32"), result("c33")],
    ];
    for (const messages of histories) {
      const built = normalizeMessages(messages);
      // The same messages with the flags taken off, then flagged the old way, in one pass over the finished list.
      const unflagged = normalizeMessages(messages).map((m) => {
        if (m.extras?.orphan !== true) return m;
        const { orphan: _orphan, ...rest } = m.extras;
        const copy = { ...m };
        if (Object.keys(rest).length > 0) copy.extras = rest;
        else delete copy.extras;
        return copy;
      });
      expect(JSON.stringify(built)).toBe(JSON.stringify(markOrphans(unflagged)));
    }
    expect(JSON.stringify(normalizeMessages([result("c9")]))).toBe(
      '[{"role":"tool","content":[{"type":"text","text":"r"}],"tool_call_id":"c9","extras":{"orphan":true}}]',
    );
    expect(JSON.stringify(normalizeMessages([result("c9", { name: "f" })]))).toBe(
      '[{"role":"tool","content":[{"type":"text","text":"r"}],"extras":{"name":"f","orphan":true},"tool_call_id":"c9"}]',
    );
  });
});

describe("the reply envelope in the first message's extras", () => {
  const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 };

  it("comes after the choice's own extras, before usage when the choice has extras and after it when not", () => {
    const withStop = normalize({ ...reply(), usage }, { format: "openai-chat" });
    expect(JSON.stringify(withStop.outputs!.messages[0])).toBe(
      '{"role":"assistant","content":[{"type":"text","text":"ok"}],"extras":{"finish_reason":"stop","id":"chatcmpl-1","object":"chat.completion","created":1},' +
        '"usage_metadata":{"input_tokens":3,"output_tokens":2,"total_tokens":5}}',
    );
    const bare = { ...reply(), usage, choices: [{ message: { role: "assistant", content: "ok" } }] };
    expect(JSON.stringify(normalize(bare, { format: "openai-chat" }).outputs!.messages[0])).toBe(
      '{"role":"assistant","content":[{"type":"text","text":"ok"}],"usage_metadata":{"input_tokens":3,"output_tokens":2,"total_tokens":5},' +
        '"extras":{"id":"chatcmpl-1","object":"chat.completion","created":1}}',
    );
  });

  it("never overrides what the choice or message says, and keeps undefined members out", () => {
    const r = {
      id: "chatcmpl-1",
      object: "chat.completion",
      service_tier: undefined,
      finish_reason: "from the envelope",
      choices: [{ message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
    };
    expect(normalize(r, { format: "openai-chat" }).outputs!.messages[0]!.extras).toEqual({
      finish_reason: "stop",
      id: "chatcmpl-1",
      object: "chat.completion",
    });
    const wrapped = { message: { role: "assistant", content: "ok", refusal: null, stamp: 1 }, stamp: 2, id: "x" };
    expect(normalize(wrapped, { format: "openai-chat" }).outputs!.messages[0]!.extras).toEqual({ stamp: 1, id: "x" });
  });
});

describe("chat usage details renamed by code", () => {
  it("gives what CHAT_FIELDS' renaming tables give, for any detail names and counts", () => {
    const names = fc.oneof(
      fc.constantFrom("cached_tokens", "audio_tokens", "reasoning_tokens", "accepted_prediction_tokens", "constructor", "toString"),
      fc.string(),
    );
    const counts = fc.dictionary(names, fc.oneof(fc.nat(), fc.constant(null)), { maxKeys: 5 });
    const tables = knownFields(CHAT_FIELDS);
    fc.assert(
      fc.property(counts, counts, (input, output) => {
        const u = { prompt_tokens: 7, completion_tokens: 3, prompt_tokens_details: input, completion_tokens_details: output };
        expect(JSON.stringify(normalizeUsage(u, ["usage"]))).toBe(JSON.stringify(includedCacheUsage(u, ["usage"], tables)));
      }),
      { numRuns: 1000 },
    );
  });
});
