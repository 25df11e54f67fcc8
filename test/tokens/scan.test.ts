import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { countTextTokens } from "../../src/tokens/index.js";
import { pretokenizer } from "../../src/tokens/pretokenize.js";
import { scan } from "../../src/tokens/scan.js";
import { RUN, split } from "../../src/tokens/split.js";
// A seeded generator (mulberry32), so a failure can be replayed.
import { rng } from "../../benchmarks/corpus.js";

const { get_encoding } = createRequire(import.meta.url)("tiktoken") as {
  get_encoding(e: string): { encode_ordinary(t: string): Uint32Array; free(): void };
};

/** The scanner's pieces as strings. */
function scanned(text: string, enc: "o200k_base" | "cl100k_base"): string[] {
  const ends = new Int32Array(text.length);
  const n = scan(text, enc, ends, Infinity);
  const out: string[] = [];
  for (let k = 0, at = 0; k < n; at = ends[k++]!) out.push(text.slice(at, ends[k]));
  return out;
}

// Weighted toward what the patterns treat specially: both letter cases, contractions, digits,
// every kind of ASCII whitespace, slashes and other punctuation, control characters.
const ATOMS = [
  "a",
  "b",
  "Z",
  "Q",
  "the",
  "The",
  "THE",
  "eXample",
  "'s",
  "'S",
  "'re",
  "'LL",
  "'ve",
  "'d",
  "'m",
  "'t",
  "'x",
  "'",
  "1",
  "42",
  "12345",
  " ",
  "  ",
  "\t",
  "\n",
  "\r\n",
  "\r",
  "\v",
  "\f",
  "/",
  "//",
  ".",
  ",",
  "(#",
  "-",
  "_",
  "\x00",
  "\x7f",
  "{",
  '"',
  "\\",
  "\n/\n",
];

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
      'id,name,amount\n1,Widget,12.50\r\n2,"Gadget, large",1000000\r\n',
      "I'm sure they'll say it's fine, but we've WE'VE don't DON'T",
      "path/to/file.ts:12:3 https://example.com/a/b?c=d&e=f   \t  end",
    ];
    for (const enc of ["o200k_base", "cl100k_base"] as const)
      for (const s of samples) expect(scanned(s, enc)).toEqual(s.match(pretokenizer(enc)));
  });

  /** The longest run of whitespace or of non-whitespace, character by character (split.ts's notion of a run). */
  function longestRun(text: string): number {
    let best = 0;
    let run = 0;
    for (let i = 0; i < text.length; i++) {
      run = i > 0 && /\s/.test(text[i]!) === /\s/.test(text[i - 1]!) ? run + 1 : 1;
      best = Math.max(best, run);
    }
    return best;
  }

  it.each(["o200k_base", "cl100k_base"] as const)("refuses exactly the texts with a run longer than maxRun (%s)", (enc) => {
    const next = rng(enc.length + 7);
    const ends = new Int32Array(200);
    for (let t = 0; t < 4000; t++) {
      let text = "";
      const len = 1 + Math.floor(next() * 12);
      for (let i = 0; i < len; i++) text += ATOMS[Math.floor(next() * ATOMS.length)];
      const maxRun = 1 + Math.floor(next() * 8);
      expect(scan(text, enc, ends, maxRun) >= 0, `${JSON.stringify(text)} maxRun ${maxRun}`).toBe(longestRun(text) <= maxRun);
    }
  });

  it("takes only ASCII text, as one chunk when it has no run longer than split.ts's RUN", () => {
    const scans = (text: string) => scan(text, "o200k_base", new Int32Array(text.length), RUN) >= 0;
    expect(scans("café au lait")).toBe(false);
    const texts = [
      "plain text, with punctuation.\n",
      `a ${"x".repeat(RUN)} b`,
      `a ${"x".repeat(RUN + 1)} b`,
      `a${" ".repeat(RUN + 1)}b`,
      `.${"\n".repeat(RUN / 2)}${" ".repeat(RUN / 2 + 1)}x`,
      `.${"\n/".repeat(RUN)}`,
      "x".repeat(RUN + 1),
    ];
    // What split() does with it: one chunk, the whole text, and no run handed over on its own.
    const oneChunk = (text: string) => {
      const seen: string[] = [];
      split(text, { chunk: (a, b) => seen.push(`chunk ${a}-${b}`), run: (a, b) => seen.push(`run ${a}-${b}`) });
      return seen.length === 1 && seen[0] === `chunk 0-${text.length}`;
    };
    for (const text of texts) expect(scans(text), JSON.stringify(text.slice(0, 20))).toBe(oneChunk(text));
    expect(texts.map(oneChunk)).toEqual([true, true, false, false, false, true, false]);
  });

  it("counts what tiktoken counts on scanned text, up to a run of exactly RUN characters", () => {
    const enc = get_encoding("o200k_base");
    try {
      for (const text of [
        `start ${"ab".repeat(RUN / 2)} end`,
        `${"x".repeat(RUN)}`,
        `a${" ".repeat(RUN)}b`,
        "I'm sure they'll say it's fine.\n\n  - item/one\r\n",
      ]) {
        expect(scan(text, "o200k_base", new Int32Array(text.length), RUN)).toBeGreaterThan(0);
        expect(countTextTokens(text, "gpt-4o")).toBe(enc.encode_ordinary(text).length);
      }
    } finally {
      enc.free();
    }
  });
});
