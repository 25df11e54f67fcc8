import { afterEach, describe, expect, it } from "vitest";
import { createRequire } from "node:module";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { countTextTokens, estimateUsage, freeEncoders, pieces, setEncoderLoader } from "../../src/tokens/index.js";
import { PAT_STR } from "../../src/tokens/pretokenize.js";
import { CHUNK, isSpace, RUN } from "../../src/tokens/split.js";

const require = createRequire(import.meta.url);
type Enc = { encode_ordinary(t: string): Uint32Array; free(): void };
const { get_encoding } = require("tiktoken") as { get_encoding(e: string): Enc };
afterEach(() => setEncoderLoader(get_encoding as never));

const WORDS =
  "the model said that a request for tokens was sent to the server with its options and result values, then it never returned; why".split(
    " ",
  );
function prose(n: number, seed = 1): string {
  let s = seed;
  const out: string[] = [];
  let len = 0;
  while (len < n) {
    s = (s * 1103515245 + 12345) >>> 0;
    const w = WORDS[s % WORDS.length]! + (s % 13 === 0 ? ".\n\n" : s % 7 === 0 ? "\n" : " ");
    out.push(w);
    len += w.length;
  }
  return out.join("");
}
const code = (n: number) => prose(n).replace(/ (\w+) /g, "($1) => { $1.push(1); }\n  ");
const csv = (n: number) =>
  Array.from(
    { length: Math.ceil(n / 40) },
    (_, i) => `${i},user_${i % 97},${(i * 3.14159).toFixed(3)},2025-01-${String((i % 28) + 1).padStart(2, "0")},ok`,
  ).join("\n");

describe("token counts", () => {
  it("uses tiktoken's own pre-tokenizer patterns", () => {
    for (const enc of ["o200k_base", "cl100k_base"] as const) {
      const shipped = JSON.parse(readFileSync(require.resolve(`tiktoken/encoders/${enc}.json`), "utf8")) as { pat_str: string };
      expect(PAT_STR[enc]).toBe(shipped.pat_str);
    }
  });

  it("equals tiktoken exactly on prose, code and CSV of any size, through the memo and around it", () => {
    for (const [model, enc] of [
      ["gpt-4o", "o200k_base"],
      ["gpt-4", "cl100k_base"],
    ] as const) {
      freeEncoders();
      const e = get_encoding(enc);
      for (const t of [
        prose(150_000),
        code(100_000),
        csv(100_000),
        "Don't! We'LL see: x=1234567; naïve café 東京は晴れです。\r\n\t  end  ",
        prose(3000, 7),
      ]) {
        // Twice: the first pass fills the memo, the second counts mostly from it.
        expect(countTextTokens(t, model)).toBe(e.encode_ordinary(t).length);
        expect(countTextTokens(t, model)).toBe(e.encode_ordinary(t).length);
      }
      e.free();
    }
  });

  it("stays within 1% of tiktoken on high-entropy text it encodes sparsely", () => {
    const e = get_encoding("o200k_base");
    const b64 = randomBytes(300_000).toString("base64").replace(/.{76}/g, "$&\n");
    const latin1 = randomBytes(400_000).toString("latin1");
    // Prose first, then base64: the density extrapolated is the base64's, not the prose's.
    const mixed = prose(100_000) + b64;
    for (const t of [b64, latin1, mixed]) {
      const exact = e.encode_ordinary(t).length;
      expect(Math.abs(countTextTokens(t, "gpt-4o") / exact - 1)).toBeLessThan(0.01);
    }
    e.free();
  });

  it("grows in proportion to the text on every shape", () => {
    const shapes = [
      prose(50_000),
      csv(50_000),
      randomBytes(40_000).toString("base64"),
      randomBytes(40_000).toString("base64").replace(/.{76}/g, "$&\n"),
      randomBytes(50_000).toString("latin1"),
      "a".repeat(50_000),
      "東京は晴れです。".repeat(6000),
    ];
    for (const t of shapes) {
      for (const model of ["gpt-4o", "claude-sonnet-4-5"]) {
        const one = countTextTokens(t, model);
        const four = countTextTokens(t.repeat(4), model);
        expect(one).toBeGreaterThan(0);
        expect(Math.abs(four / (4 * one) - 1)).toBeLessThan(0.03);
      }
    }
  });

  it("counts each role as one token without encoding it", () => {
    const seen: string[] = [];
    setEncoderLoader((enc) => {
      const real = get_encoding(enc);
      return { encode_ordinary: (t: string) => (seen.push(t), real.encode_ordinary(t)), free: () => real.free() };
    });
    const roles = ["system", "user", "assistant", "tool", "reasoning"] as const;
    const u = estimateUsage({
      model: "gpt-4o",
      inputs: roles.map((role) => ({ role, content: [{ type: "text", text: "42" }] })),
      outputs: [],
    });
    expect(u.input_tokens).toBe(roles.length * (3 + 1 + 1) + 3);
    expect(seen.filter((t) => (roles as readonly string[]).includes(t))).toEqual([]);
  });
});

describe("split", () => {
  it("covers the text exactly, in chunks of at most CHUNK characters and no run longer than RUN inside one", () => {
    const alphabet = fc.constantFrom("a", "b", " ", "\n", "\t", "é", "😀", "\ud800", "\u3000", "。", "=");
    const runs = fc.array(fc.tuple(alphabet, fc.integer({ min: 1, max: 700 })), { maxLength: 60 });
    fc.assert(
      fc.property(runs, (rs) => {
        const text = rs.map(([c, k]) => c.repeat(k)).join("");
        const ps = pieces(text);
        expect(ps.join("")).toBe(text);
        for (const p of ps) {
          expect(p.length).toBeGreaterThan(0);
          let longest = 0;
          let cur = 0;
          for (let i = 0; i < p.length; i++) {
            cur = i > 0 && isSpace(p.charCodeAt(i)) === isSpace(p.charCodeAt(i - 1)) ? cur + 1 : 1;
            longest = Math.max(longest, cur);
          }
          // A piece is either a chunk (bounded, short runs) or one long run on its own.
          if (longest > RUN) expect(longest).toBe(p.length);
          else expect(p.length).toBeLessThanOrEqual(CHUNK);
        }
      }),
      { numRuns: 300 },
    );
  });
});
