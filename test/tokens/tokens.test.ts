import { afterEach, describe, expect, it } from "vitest";
import { createRequire } from "node:module";
import {
  approximateTokens,
  countTextTokens,
  encodingForModel,
  estimateUsage,
  freeEncoders,
  pieces,
  resolveModel,
  setEncoderLoader,
} from "../../src/tokens/index.js";

const require = createRequire(import.meta.url);
const { get_encoding } = require("tiktoken") as { get_encoding(e: string): { encode(t: string): Uint32Array; free(): void } };
const realLoader = (enc: string) => get_encoding(enc);

afterEach(() => setEncoderLoader(realLoader as never));

describe("token estimation", () => {
  it("maps models to encodings by the longest prefix", () => {
    expect(encodingForModel("gpt-4o-2024-08-06")).toBe("o200k_base");
    expect(encodingForModel("gpt-4.1-mini")).toBe("o200k_base");
    expect(encodingForModel("gpt-5")).toBe("o200k_base");
    expect(encodingForModel("o3-mini")).toBe("o200k_base");
    expect(encodingForModel("gpt-oss-120b")).toBe("o200k_base");
    expect(encodingForModel("gpt-4-turbo")).toBe("cl100k_base");
    expect(encodingForModel("gpt-3.5-turbo")).toBe("cl100k_base");
    expect(encodingForModel("claude-sonnet-4-5")).toBeUndefined();
  });

  it("counts exactly what tiktoken counts for OpenAI models", () => {
    const text = "The quick brown fox jumps over the lazy dog. 東京は晴れです。";
    for (const [model, enc] of [
      ["gpt-4o", "o200k_base"],
      ["gpt-4", "cl100k_base"],
    ] as const) {
      const e = get_encoding(enc);
      expect(countTextTokens(text, model)).toBe(e.encode(text).length);
      e.free();
    }
  });

  it("counts special-token text in a prompt as ordinary text instead of throwing", () => {
    const text = "ignore this: <|endoftext|> and <|im_start|>";
    const e = get_encoding("o200k_base") as unknown as { encode_ordinary(t: string): Uint32Array; free(): void };
    expect(countTextTokens(text, "gpt-4o")).toBe(e.encode_ordinary(text).length);
    e.free();
  });

  it("applies the chat overhead: 3 per message, 1 per name, 3 to prime the reply", () => {
    const e = get_encoding("o200k_base");
    const n = (t: string) => e.encode(t).length;
    const u = estimateUsage({
      model: "gpt-4o",
      inputs: [
        { role: "system", content: [{ type: "text", text: "Be brief." }] },
        { role: "user", content: [{ type: "text", text: "Hi" }], extras: { name: "ann" } },
      ],
      outputs: [{ role: "assistant", content: [{ type: "text", text: "Hello!" }] }],
    });
    expect(u.input_tokens).toBe(3 + n("system") + n("Be brief.") + 3 + 1 + n("user") + n("Hi") + 3);
    expect(u.output_tokens).toBe(n("Hello!"));
    e.free();
    expect(u).toMatchObject({ estimated: true, total_tokens: u.input_tokens + u.output_tokens });
  });

  it("accounts for images by detail and size", () => {
    const img = (extras: Record<string, unknown>) =>
      estimateUsage({ model: "gpt-4o", inputs: [{ role: "user", content: [{ type: "image", url: "u", extras }] }], outputs: [] })
        .input_tokens;
    const base = img({ detail: "low" }) - 85;
    expect(img({ width: 1024, height: 1024 }) - base).toBe(85 + 170 * 4);
    expect(img({}) - base).toBe(765);
  });

  it("uses the documented approximation for other vendors", () => {
    expect(countTextTokens("abcdefgh", "claude-haiku-4-5")).toBe(2);
    expect(approximateTokens("東京abcd")).toBe(3);
  });

  it("splits pathological text so long words are sampled, not encoded whole", () => {
    const ps = pieces("x".repeat(10_000) + " tail words here");
    expect(ps[0]).toHaveLength(10_000);
    expect(ps.slice(1).join("")).toBe(" tail words here");
    const exact = get_encoding("o200k_base").encode("ab".repeat(2000)).length;
    expect(Math.abs(countTextTokens("ab".repeat(2000), "gpt-4o") - exact) / exact).toBeLessThan(0.05);
  });

  it("falls back to the approximation, with one warning, when the encoder cannot load", () => {
    const warnings: string[] = [];
    const onWarn = (w: Error) => warnings.push(w.message);
    process.on("warning", onWarn);
    setEncoderLoader(() => {
      throw new Error("no wasm here");
    });
    expect(countTextTokens("abcdefgh", "gpt-4o")).toBe(2);
    expect(countTextTokens("abcd", "gpt-4o")).toBe(1);
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        process.off("warning", onWarn);
        expect(warnings.filter((w) => w.includes("no wasm here"))).toHaveLength(1);
        freeEncoders();
        resolve();
      }),
    );
  });

  it("looks the model up in SPEC §2.6's order", () => {
    expect(resolveModel({ extra: { metadata: { trace_model_name: "a" } }, inputs: { model: "b", model_name: "c" } })).toBe("a");
    expect(resolveModel({ inputs: { model: "b", model_name: "c" } })).toBe("b");
    expect(resolveModel({ inputs: { model_name: "c" } })).toBe("c");
  });
});
