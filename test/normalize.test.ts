import { describe, expect, it } from "vitest";
import { detectFormat, normalize } from "../src/normalize.js";
import { NormalizeError } from "../src/errors.js";
import { expectValidNative } from "./helpers/native.js";

describe("native reply shapes (SPEC §2.6)", () => {
  const expected = [{ role: "assistant", content: [{ type: "text", text: "hi" }] }];
  it.each([
    [
      "{choices:[{message}]} with usage_metadata",
      {
        choices: [{ message: { role: "assistant", content: "hi" } }],
        usage_metadata: { input_tokens: 1, output_tokens: 2, total_tokens: 3 },
      },
    ],
    ["{message}", { message: { role: "assistant", content: "hi" } }],
    ["{role, content} with blocks", { role: "assistant", content: [{ type: "text", text: "hi" }] }],
    ["[role, content]", ["assistant", "hi"]],
  ])("accepts %s", (_n, payload) => {
    const out = normalize(payload);
    expect(out.format).toBe("native");
    expect(out.outputs!.messages.map(({ role, content }) => ({ role, content }))).toEqual(expected);
    expectValidNative(out.outputs!.messages);
  });

  it("puts usage_metadata of a {choices} reply on the first message", () => {
    const out = normalize({
      choices: [{ message: { role: "assistant", content: "hi" } }],
      usage_metadata: { input_tokens: 1, output_tokens: 2, total_tokens: 3 },
    });
    expect(out.outputs!.messages[0]!.usage_metadata).toEqual({ input_tokens: 1, output_tokens: 2, total_tokens: 3 });
  });

  it("keeps a record with nothing but native fields native", () => {
    const out = normalize({ messages: [{ role: "assistant", content: [{ type: "tool_call", id: "a", name: "f", args: {} }] }] });
    expect(out.format).toBe("native");
  });
});

describe("format detection", () => {
  it.each([
    [{ model: "gpt-4o", messages: [{ role: "user", content: "x" }] }, "openai-chat"],
    [{ model: "claude-haiku-4-5", max_tokens: 5, messages: [{ role: "user", content: "x" }] }, "anthropic-messages"],
    [{ messages: [{ role: "developer", content: "x" }] }, "openai-chat"],
    [{ max_tokens: 5, system: "s", messages: [{ role: "user", content: "x" }] }, "anthropic-messages"],
    [{ object: "chat.completion", choices: [{ message: { role: "assistant", content: "x" } }] }, "openai-chat"],
    [{ type: "message", role: "assistant", content: [{ type: "text", text: "x" }] }, "anthropic-messages"],
    [[{ type: "message_start", message: {} }], "anthropic-messages"],
    [[{ object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: "x" } }] }], "openai-chat"],
  ])("detects %j as %s", (payload, format) => {
    expect(detectFormat(payload)).toBe(format);
  });

  it("refuses to guess on a payload it cannot classify", () => {
    try {
      normalize({ hello: "world" });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(NormalizeError);
      expect((err as NormalizeError).issues[0]).toMatchObject({ loc: [], type: "unknown_format", msg: expect.stringContaining('"hello"') });
    }
  });

  it("treats a request with string content and no vendor marker as native, not as a guessed vendor", () => {
    const out = normalize({ messages: [{ role: "user", content: "hi" }] });
    expect(out.format).toBe("native");
    expect(out.metadata.trace_provider).toBeUndefined();
  });

  it("reports conflicting vendor markers as an error", () => {
    expect(() => normalize({ system: "s", messages: [{ role: "developer", content: "x" }] })).toThrow(NormalizeError);
  });

  it("honours an explicit format and rejects an unknown one", () => {
    expect(normalize({ messages: [{ role: "user", content: "x" }] }, { format: "anthropic-messages" }).format).toBe("anthropic-messages");
    expect(() => normalize({}, { format: "cohere-chat" })).toThrow(/unknown format "cohere-chat"/);
  });
});
