import { afterEach, describe, expect, it } from "vitest";
import { createRequire } from "node:module";
import { randomBytes } from "node:crypto";
import type { Message } from "../../src/format/schema.js";
import { countTextTokens, estimateUsage, setEncoderLoader } from "../../src/tokens/index.js";

const require = createRequire(import.meta.url);
const { get_encoding } = require("tiktoken") as { get_encoding(e: string): { encode_ordinary(t: string): Uint32Array; free(): void } };
afterEach(() => setEncoderLoader(get_encoding as never));

const user = (text: string): Message => ({ role: "user", content: [{ type: "text", text }] });
const SIX_MB = 6 * 1024 * 1024;

describe("token estimation on hostile input", () => {
  it("counts a 6 MB string without whitespace (the regex stack overflowed here)", () => {
    const b64 = randomBytes((SIX_MB * 3) / 4).toString("base64");
    expect(b64).toHaveLength(SIX_MB);
    for (const model of ["gpt-4o", "gpt-4", "claude-sonnet-4-5"]) {
      const n = countTextTokens(b64, model);
      // base64 is about 1.3-1.6 characters per token in tiktoken, 4 in the approximation.
      expect(n).toBeGreaterThan(SIX_MB / 5);
      expect(n).toBeLessThan(SIX_MB);
    }
  });

  it("gives a 6 MB no-whitespace prompt its usage", () => {
    const prompt = "x".repeat(SIX_MB);
    for (const model of ["gpt-4o", "claude-haiku-4-5"]) {
      const u = estimateUsage({ model, inputs: [user(prompt)], outputs: [{ role: "assistant", content: [{ type: "text", text: "ok" }] }] });
      expect(u.estimated).toBe(true);
      expect(u.input_tokens).toBeGreaterThan(SIX_MB / 16);
      expect(u.output_tokens).toBe(1);
      expect(u.total_tokens).toBe(u.input_tokens + u.output_tokens);
    }
  });

  it("counts an 8 MiB unbroken word (the call stack overflowed here)", () => {
    const word = "ab".repeat(4 * 1024 * 1024);
    const n = countTextTokens(word, "gpt-4o");
    const e = get_encoding("o200k_base");
    const per = e.encode_ordinary("ab".repeat(128)).length / 256;
    e.free();
    expect(Math.abs(n / (word.length * per) - 1)).toBeLessThan(0.05);
  });

  it("counts lone surrogates and split pairs without throwing", () => {
    const texts = [
      "\ud800",
      "a\udc00b",
      "\ud83d".repeat(5000),
      "\udc00".repeat(300_000),
      "😀".repeat(200_000),
      `${"é😀".repeat(1000)}\ud800 tail`,
    ];
    for (const t of texts) {
      for (const model of ["gpt-4o", "gpt-3.5-turbo", undefined]) {
        // A token covers at least one byte of the text's UTF-8 (a lone surrogate is the three of U+FFFD).
        const n = countTextTokens(t, model);
        expect(n).toBeGreaterThanOrEqual(1);
        expect(n).toBeLessThanOrEqual(Buffer.byteLength(t));
      }
    }
  });

  it("counts huge arrays of messages: every message's overhead, nothing lost", () => {
    const n = 200_000;
    const inputs = Array.from({ length: n }, (_, i) => user(i % 2 ? "hi" : "ok"));
    const u = estimateUsage({ model: "gpt-4o", inputs, outputs: [] });
    // 3 per message + 1 for the role + 1 for "hi"/"ok", and 3 to prime the reply.
    expect(u.input_tokens).toBe(n * 5 + 3);
  });

  it("counts tool arguments nested far deeper than the call stack, with BigInts and cycles", () => {
    let deep: Record<string, unknown> = { leaf: "value" };
    for (let i = 0; i < 20_000; i++) deep = { k: deep };
    const cyclic: Record<string, unknown> = { name: "loop" };
    cyclic.self = cyclic;
    const withBigInt = { id: 12345678901234567890n, tags: ["a", "b"] };
    const throwing = Object.defineProperty({}, "boom", {
      enumerable: true,
      get() {
        throw new Error("getter");
      },
    });
    // Each value is counted as the JSON text it stands for: nesting in full, a cycle as
    // "[Circular]", a BigInt as its digits, an object whose reading throws as null.
    const deepText = '{"k":'.repeat(20_000) + '{"leaf":"value"}' + "}".repeat(20_000);
    const cases: [Record<string, unknown>, string][] = [
      [deep, deepText],
      [cyclic, '{"name":"loop","self":"[Circular]"}'],
      [withBigInt, '{"id":12345678901234567890,"tags":["a","b"]}'],
      [throwing, "null"],
    ];
    for (const [args, text] of cases) {
      const u = estimateUsage({
        model: "gpt-4o",
        inputs: [user("call it")],
        outputs: [
          {
            role: "assistant",
            content: [
              { type: "tool_call", name: "f", args },
              { type: "server_tool_result", tool_call_id: "t", status: "success", output: args },
            ],
          },
        ],
      });
      // The call counts its name with its arguments; the result counts its output.
      expect(u.output_tokens).toBe(countTextTokens("f" + text, "gpt-4o") + countTextTokens(text, "gpt-4o"));
    }
    // Two tokens or more per level of `{"k":`, so nothing of the depth was cut.
    expect(countTextTokens(deepText, "gpt-4o")).toBeGreaterThan(40_000);
  });

  it("survives malformed messages from a broken producer", () => {
    const bad = [
      null,
      { role: "user" },
      { role: 7, content: "plain string content" },
      { role: "user", content: [null, 5, { type: "image", extras: { width: Symbol("w") } }] },
    ] as unknown as Message[];
    const u = estimateUsage({ model: "gpt-4o", inputs: bad, outputs: bad });
    // What is readable counts as documented (src/tokens/index.ts): 3 per message and 3 to prime
    // the reply, one token per known role (a number is no role), the string content, and an image
    // of unknown size as 765; null messages and blocks that are not objects count nothing.
    const text = countTextTokens("plain string content", "gpt-4o");
    expect(u.input_tokens).toBe(bad.length * 3 + 3 + 2 + text + 765);
    expect(u.output_tokens).toBe(text + 765);
    expect(estimateUsage({ model: 42 as unknown as string, inputs: undefined as unknown as Message[], outputs: [] })).toMatchObject({
      input_tokens: 0,
      output_tokens: 0,
    });
  });

  it("falls back to the approximation when the encoder throws mid-text, without throwing", () => {
    let calls = 0;
    setEncoderLoader((enc) => {
      const real = get_encoding(enc);
      return {
        encode_ordinary(t: string) {
          if (++calls > 3) throw new Error("RuntimeError: unreachable");
          return real.encode_ordinary(t);
        },
        free: () => real.free(),
      };
    });
    const text = randomBytes(300_000).toString("latin1");
    const n = countTextTokens(text, "gpt-4o");
    expect(n).toBeGreaterThan(text.length / 8);
    expect(calls).toBeGreaterThan(3);
  });
});
