import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { countTextTokens, pieces } from "../../src/tokens/index.js";
import { pretokenizer } from "../../src/tokens/pretokenize.js";
import { oneChunk, scan } from "../../src/tokens/scan.js";
import { RUN } from "../../src/tokens/split.js";

const { get_encoding } = createRequire(import.meta.url)("tiktoken") as { get_encoding(e: string): { encode_ordinary(t: string): Uint32Array; free(): void } };

/** The scanner's pieces as strings. */
function scanned(text: string, enc: "o200k_base" | "cl100k_base"): string[] {
  const ends = new Int32Array(text.length);
  const n = scan(text, enc, ends);
  const out: string[] = [];
  for (let k = 0, at = 0; k < n; at = ends[k++]!) out.push(text.slice(at, ends[k]));
  return out;
}

/** A seeded generator (mulberry32), so a failure can be replayed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Weighted toward what the patterns treat specially: both letter cases, contractions, digits,
// every kind of ASCII whitespace, slashes and other punctuation, control characters.
const ATOMS = ["a", "b", "Z", "Q", "the", "The", "THE", "eXample", "'s", "'S", "'re", "'LL", "'ve", "'d", "'m", "'t", "'x", "'", "1", "42", "12345", " ", "  ", "\t", "\n", "\r\n", "\r", "\v", "\f", "/", "//", ".", ",", "(#", "-", "_", "\x00", "\x7f", "{", '"', "\\", "\n/\n"];

describe("ASCII scanner", () => {
  it.each(["o200k_base", "cl100k_base"] as const)("cuts generated ASCII text into the pieces of %s's pattern", (enc) => {
    const next = rng(enc.length);
    const re = pretokenizer(enc);
    for (let t = 0; t < 3000; t++) {
      let text = "";
      const len = 1 + Math.floor(next() * 40);
      for (let i = 0; i < len; i++) text += ATOMS[Math.floor(next() * ATOMS.length)];
      expect(scanned(text, enc), JSON.stringify(text)).toEqual(text.match(re));
    }
  });

  it("cuts prose, code and CSV as the pattern does", () => {
    const samples = [
      "Summarise the attached quarterly report in three bullet points, keeping the figures exact. (#17)",
      "- Revenue grew 12% to 4.1M.\n- Costs fell 3% on lower hosting.\n- Headcount stayed at 41. ",
      "function f(x) {\n  return x.map((y) => y * 2); // double\n}\n\n\n",
      "id,name,amount\n1,Widget,12.50\r\n2,\"Gadget, large\",1000000\r\n",
      "I'm sure they'll say it's fine, but we've WE'VE don't DON'T",
      "path/to/file.ts:12:3 https://example.com/a/b?c=d&e=f   \t  end",
    ];
    for (const enc of ["o200k_base", "cl100k_base"] as const) for (const s of samples) expect(scanned(s, enc)).toEqual(s.match(pretokenizer(enc)));
  });

  it("takes only ASCII text, as one chunk when it has no run longer than split.ts's RUN", () => {
    expect(scan("café au lait", "o200k_base", new Int32Array(12))).toBe(-1);
    expect(oneChunk("plain text, with punctuation.\n", RUN)).toBe(true);
    expect(oneChunk(`a ${"x".repeat(RUN)} b`, RUN)).toBe(true);
    expect(oneChunk(`a ${"x".repeat(RUN + 1)} b`, RUN)).toBe(false);
    expect(oneChunk(`a${" ".repeat(RUN + 1)}b`, RUN)).toBe(false);
    expect(oneChunk(`.${"\n".repeat(RUN / 2)}${" ".repeat(RUN / 2 + 1)}x`, RUN)).toBe(false);
    expect(oneChunk("x".repeat(RUN + 1), RUN)).toBe(false);
    for (const text of ["plain", `a ${"x".repeat(RUN + 1)} b`, `a${" ".repeat(RUN + 1)}b`]) expect(oneChunk(text, RUN)).toBe(pieces(text).length === 1);
  });

  it("counts what tiktoken counts on scanned text, up to a run of exactly RUN characters", () => {
    const enc = get_encoding("o200k_base");
    try {
      for (const text of [`start ${"ab".repeat(RUN / 2)} end`, `${"x".repeat(RUN)}`, `a${" ".repeat(RUN)}b`, "I'm sure they'll say it's fine.\n\n  - item/one\r\n"]) {
        expect(oneChunk(text, RUN)).toBe(true);
        expect(countTextTokens(text, "gpt-4o")).toBe(enc.encode_ordinary(text).length);
      }
    } finally {
      enc.free();
    }
  });
});
