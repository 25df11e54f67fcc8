import { createRequire } from "node:module";
import { afterEach, describe, expect, it } from "vitest";
import { countTextTokens, freeEncoders, setEncoderLoader } from "../../src/tokens/index.js";
import { fingerprint, TextCountCache, SegmentTable, slotOf } from "../../src/tokens/memo.js";
import { countBySegments } from "../../src/tokens/segments.js";

const { get_encoding } = createRequire(import.meta.url)("tiktoken") as {
  get_encoding(e: string): { encode_ordinary(t: string): Uint32Array; free(): void };
};
const o200k = get_encoding("o200k_base");
const cl100k = get_encoding("cl100k_base");

/** The real encoder, with the texts it was asked to encode recorded. */
function recordingLoader(): string[] {
  const seen: string[] = [];
  setEncoderLoader((enc) => {
    const e = get_encoding(enc);
    return {
      encode_ordinary: (t: string) => {
        seen.push(t);
        return e.encode_ordinary(t);
      },
      free: () => e.free(),
    };
  });
  return seen;
}

afterEach(() => {
  setEncoderLoader((enc) => get_encoding(enc));
  freeEncoders();
});

/** A deterministic generator (xorshift), so a failure names a reproducible seed. */
function rng(seed: number): () => number {
  let x = seed || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

/** Words and separators chosen to meet every alternative of both patterns at a cut: contractions, digits, punctuation runs, slashes, newlines, runs of spaces. */
const WORDS = [
  "the",
  "The",
  "QUARTERLY",
  "report",
  "it's",
  "we'll",
  "they'RE",
  "don't",
  "I'm",
  "x",
  "'s",
  "'",
  "12",
  "4096",
  "3.14",
  "(#17)",
  "--",
  "/",
  "//",
  "a/b",
  "e.g.",
  "URL",
  "camelCase",
  "snake_case",
  "{}",
  "[]",
  '"q"',
  "#",
  "@me",
  "100%",
  "$5",
  "é",
];
const SEPS = [" ", " ", " ", " ", "  ", "   ", "\n", "\n\n", " \n", "\t", ", ", ". ", "; ", " - ", "\r\n", "", "/"];

function text(r: () => number, words: number, ascii = true): string {
  let out = "";
  for (let i = 0; i < words; i++) {
    let w = WORDS[Math.floor(r() * WORDS.length)]!;
    if (ascii && w === "é") w = "e";
    out += w + SEPS[Math.floor(r() * SEPS.length)]!;
  }
  return out;
}

describe("counting by segments", () => {
  it("counts what tiktoken counts, on generated ASCII text, cold and from the table, for both encodings", () => {
    for (const [model, enc] of [
      ["gpt-4o", o200k],
      ["gpt-4", cl100k],
    ] as const) {
      for (let seed = 1; seed <= 300; seed++) {
        const r = rng(seed);
        const t = text(r, 1 + Math.floor(r() * 120));
        const expected = enc.encode_ordinary(t).length || 1;
        expect(countTextTokens(t, model), `${model} seed ${seed} cold`).toBe(expected);
        expect(countTextTokens(t, model), `${model} seed ${seed} warm`).toBe(expected);
        // The same words again with another tail: a mix of remembered and new segments.
        const longer = `${t}${text(r, 8)}`;
        expect(countTextTokens(longer, model), `${model} seed ${seed} longer`).toBe(enc.encode_ordinary(longer).length || 1);
      }
    }
  });

  it("counts a prompt that shares its text with an earlier one by encoding only what is new", () => {
    const seen = recordingLoader();
    // Words longer than the piece memo keeps, so only the segment table can spare the encoder.
    const shared = Array.from({ length: 40 }, (_, i) => `paragraph${"q".repeat(40)}${i}`).join(" ");
    const first = `${shared} first question?`;
    expect(countTextTokens(first, "gpt-4o")).toBe(o200k.encode_ordinary(first).length);
    seen.length = 0;
    const second = `${shared} and now a second, different question?`;
    expect(countTextTokens(second, "gpt-4o")).toBe(o200k.encode_ordinary(second).length);
    const encoded = seen.reduce((n, s) => n + s.length, 0);
    expect(encoded).toBeGreaterThan(0);
    expect(encoded).toBeLessThan(second.length / 4);
  });

  it("counts text past ASCII by segments too, exactly, and leaves a text whose segment cannot be counted to the whole-text path", () => {
    const counted: string[] = [];
    const count = (s: string) => (counted.push(s), 1);
    // Cut only where the character before the space is ASCII: never after "é" or a no-break space.
    expect(
      countBySegments(`${"plain words ".repeat(4)}then é at the end, more words after\u00a0 that and others`, "o200k_base", count),
    ).toBeGreaterThan(1);
    for (let i = 1; i < counted.length; i++) expect(counted[i - 1]!.charCodeAt(counted[i - 1]!.length - 1)).toBeLessThan(128);
    expect(counted.join("")).toBe(`${"plain words ".repeat(4)}then é at the end, more words after\u00a0 that and others`);
    expect(countBySegments("a few words and then a failing segment", "o200k_base", () => -1)).toBe(-1);
    const mixed = `${text(rng(7), 60)} café ${text(rng(8), 60)}`;
    expect(countTextTokens(mixed, "gpt-4o")).toBe(o200k.encode_ordinary(mixed).length);
  });

  it("counts what tiktoken counts on generated text past ASCII (accents, symbols, CJK, emoji, no-break and ideographic spaces), for both encodings", () => {
    const extra = [
      "é",
      "naïve",
      "°C",
      "“quoted”",
      "—",
      "東京",
      "では",
      "😀",
      "👍🏽",
      "\u00a0",
      "\u3000",
      "\u2009",
      "Ωmega",
      "straße",
      "x\u0301",
    ];
    const seen = recordingLoader();
    for (const [model, enc] of [
      ["gpt-4o", o200k],
      ["gpt-4", cl100k],
    ] as const) {
      for (let seed = 1; seed <= 200; seed++) {
        const r = rng(seed * 7919);
        let t = "";
        const words = 1 + Math.floor(r() * 100);
        for (let i = 0; i < words; i++) t += r() < 0.2 ? extra[Math.floor(r() * extra.length)]! : text(r, 1);
        const expected = enc.encode_ordinary(t).length || 1;
        expect(countTextTokens(t, model), `${model} seed ${seed} cold`).toBe(expected);
        expect(countTextTokens(t, model), `${model} seed ${seed} warm`).toBe(expected);
        const longer = `${t} ${extra[seed % extra.length]} ${text(r, 8)}`;
        expect(countTextTokens(longer, model), `${model} seed ${seed} longer`).toBe(enc.encode_ordinary(longer).length || 1);
      }
    }
    // A segment far longer than the usual (no ASCII word to cut before), between English sentences.
    // (Its runs stay under RUN: a longer one is counted from slices, within about a percent, by design.)
    const long = `${text(rng(3), 30)} ${"東京 では、 ".repeat(120)}${"«δ» ".repeat(40)} ${text(rng(4), 30)}`;
    for (const [model, enc] of [
      ["gpt-4o", o200k],
      ["gpt-4", cl100k],
    ] as const)
      expect(countTextTokens(long, model), model).toBe(enc.encode_ordinary(long).length);
    // A repeated passage past ASCII is counted from the table the second time: only the new tail is encoded.
    const shared = Array.from({ length: 30 }, (_, i) => `Saturday ${i} in Lisbon warms to 21 °C with “light” rain`).join(" ");
    countTextTokens(`${shared} first?`, "gpt-4o");
    seen.length = 0;
    const second = `${shared} and a second question about naïve packing lists?`;
    expect(countTextTokens(second, "gpt-4o")).toBe(o200k.encode_ordinary(second).length);
    expect(seen.reduce((n, s) => n + s.length, 0)).toBeLessThan(second.length / 4);
  });

  it("remembers every segment of a text but its last one, and a text of one segment whole", () => {
    const counted: string[] = [];
    const count = (s: string) => (counted.push(s), s.length);
    const t = `${text(rng(5), 150, true)} and the question that differs each time`;
    expect(countBySegments(t, "o200k_base", count)).toBe(t.length);
    const first = counted.length;
    expect(first).toBeGreaterThan(2);
    counted.length = 0;
    expect(countBySegments(t, "o200k_base", count)).toBe(t.length);
    expect(counted).toEqual([t.slice(t.length - counted[0]!.length)]); // only the tail again
    counted.length = 0;
    // A templated question whose last words differ: the rest of its last segment is remembered too, so a
    // later question counts again only what follows the last place a cut can be made (under SEG_MIN
    // characters from the segment's start, it is not worth a segment of its own).
    const place = (u: string, j: number) => u[j] === " " && /[!-~]/.test(u[j - 1] ?? "") && /[!-~]/.test(u[j + 1] ?? "");
    let cutTexts = 0;
    for (let k = 0; k < 60; k++) {
      const r = rng(600 + k);
      const vocabulary = [
        "the",
        "weather",
        "Lisbon",
        "pack",
        "museum",
        "opens",
        "at",
        "walk",
        "before",
        "lunch",
        "jacket",
        "shoes",
        "rain",
        "a",
        "light",
        "Saturday",
      ];
      const words = Array.from({ length: 8 + k }, () => vocabulary[Math.floor(r() * vocabulary.length)]!).join(" ");
      const question = (n: number) => `${words}, ${words}? (request ${n})`;
      countBySegments(question(1), "o200k_base", count);
      counted.length = 0;
      expect(countBySegments(question(2), "o200k_base", count)).toBe(question(2).length);
      expect(counted.length, JSON.stringify(counted)).toBe(1);
      const tail = counted[0]!;
      expect(question(2).endsWith(tail)).toBe(true);
      counted.length = 0;
      if (tail === question(2)) continue; // no cut at all: a text of one segment (see below)
      for (let j = 32; j < tail.length; j++) expect(place(tail, j), `${JSON.stringify(tail)} at ${j}`).toBe(false);
      cutTexts++;
    }
    expect(cutTexts).toBeGreaterThan(40);
    const prompt = "You are a careful analyst.";
    countBySegments(prompt, "o200k_base", count);
    countBySegments(prompt, "o200k_base", count);
    expect(counted).toEqual([prompt]);
  });

  it("cuts only before a space that follows a non-space and precedes a letter, digit or punctuation, and the segments cover the text", () => {
    const r = rng(99);
    for (let k = 0; k < 200; k++) {
      const t = text(r, 200);
      const segments: string[] = [];
      expect(countBySegments(t, "o200k_base", (s) => (segments.push(s), 0))).toBe(0);
      expect(segments.join("")).toBe(t);
      let at = 0;
      for (const s of segments.slice(0, -1)) {
        at += s.length;
        expect(t[at]).toBe(" ");
        expect(/\s/.test(t[at - 1]!)).toBe(false);
        expect(/[!-~]/.test(t[at + 1]!)).toBe(true);
      }
    }
  });
});

/**
 * The cutting rule walked over every space, as countBySegments did before it
 * learned to skip the spaces too close to a segment's start: the oracle for
 * where it cuts. The segments in order, each with whether it is remembered.
 */
function walkedSegments(t: string): { s: string; remember: boolean }[] {
  const SEG_MIN = 32;
  const SEG_MAX = 192;
  const out: { s: string; remember: boolean }[] = [];
  let start = 0;
  let word = 0;
  for (let i = t.indexOf(" ", 1); i >= 0; i = t.indexOf(" ", i + 1)) {
    const prev = t.charCodeAt(i - 1);
    const next = t.charCodeAt(i + 1);
    if (prev === 32 || (prev >= 9 && prev <= 13) || prev >= 128 || !(next >= 33 && next <= 126)) continue;
    if ((i - start >= SEG_MIN && ((prev ^ (i - word)) & 3) === 0) || i - start >= SEG_MAX) {
      out.push({ s: t.slice(start, i), remember: true });
      start = i;
    }
    word = i;
  }
  if (start > 0 && word - start >= SEG_MIN && t.length - word >= 1) {
    out.push({ s: t.slice(start, word), remember: true });
    start = word;
  }
  out.push({ s: t.slice(start), remember: start === 0 });
  return out;
}

describe("where countBySegments cuts", () => {
  it("cuts where a walk over every space would, on generated text of every length, past ASCII too", () => {
    const r = rng(2024);
    for (let k = 0; k < 400; k++) {
      const words = 1 + Math.floor(r() * (k % 4 === 0 ? 400 : 60));
      // Some texts with long runs between spaces, so that SEG_MAX decides cuts too.
      const t = k % 5 === 0 ? text(r, words).replace(/ (?=[a-z])/g, "_") : text(r, words, k % 2 === 0);
      freeEncoders(); // an empty segment table: every segment is counted, except a repeat within the text
      const counted: string[] = [];
      countBySegments(t, "o200k_base", (s) => (counted.push(s), 1));
      const expected: string[] = [];
      const remembered = new Set<string>();
      for (const { s, remember } of walkedSegments(t)) {
        if (remembered.has(s)) continue;
        expected.push(s);
        if (remember && s.length <= 256) remembered.add(s);
      }
      expect(counted, `text ${k}: ${JSON.stringify(t)}`).toEqual(expected);
    }
  });

  it('counts only the number when the words before it were met before ("… (request 8123)")', () => {
    const ask = (n: number) =>
      `I land in Lisbon on Saturday morning with six free hours. What should I pack for the weather? (request ${n})`;
    const counted: string[] = [];
    countBySegments(ask(1), "o200k_base", (s) => s.length);
    countBySegments(ask(2), "o200k_base", (s) => (counted.push(s), s.length));
    expect(counted).toEqual([" 2)"]);
    freeEncoders(); // the table holds lengths, not counts, now
    for (const n of [3, 4]) expect(countTextTokens(ask(n), "gpt-4o")).toBe(o200k.encode_ordinary(ask(n)).length);
  });
});

describe("SegmentTable", () => {
  it("keeps segments that keep coming back while one-off segments pass through, within two generations", () => {
    const t = new SegmentTable(4);
    t.set("system prompt", 5);
    for (let i = 0; i < 40; i++) {
      t.set(`one-off ${i}`, i);
      expect(t.get("system prompt")).toBe(5); // a hit in the older generation moves it to the newer
    }
    expect(t.get("one-off 0")).toBeUndefined();
    expect(t.get("one-off 39")).toBe(39);
  });
});

describe("TextCountCache with a front", () => {
  /** A new string equal to `s` (JSON.parse makes one per span): the front must compare characters, not objects. */
  const copy = (s: string) => `${s} `.slice(0, -1);

  it("answers from the front only for texts the Maps hold: what a rotation drops is gone, what is used survives", () => {
    const g = new TextCountCache(2, false, 1024);
    // Each text in a front slot of its own, so that every answer below is the front's or the Maps' alone.
    expect(new Set(["system prompt", "a", "b", "c", "d", "e", "f"].map((t) => slotOf(fingerprint(t), 1024))).size).toBe(7);
    g.set("system prompt", 5);
    expect(g.get(copy("system prompt"))).toBe(5);
    g.set("a", 1);
    g.set("b", 2); // rotation: the young Map (system prompt, a) becomes the old one
    expect(g.get(copy("system prompt"))).toBe(5); // found in the old Map: moved to the young one
    g.set("c", 3); // rotation: the old Map (a) is dropped
    expect(g.get(copy("a"))).toBeUndefined();
    expect(g.get(copy("system prompt"))).toBe(5);
    g.set("d", 4);
    g.set("e", 5); // two rotations with the system prompt unused: dropped, front entry included
    g.set("f", 6);
    expect(g.get(copy("system prompt"))).toBeUndefined();
    expect(g.get(copy("f"))).toBe(6);
  });

  it("finds a text whose front slot another took in the Maps, and never takes a text with the same fingerprint for it", () => {
    const g = new TextCountCache(1000, true, 4);
    // Find two texts with the same front slot.
    const texts = Array.from({ length: 64 }, (_, i) => `message number ${i} of the conversation so far`);
    const first = texts[0]!;
    const other = texts.find((t) => t !== first && slotOf(fingerprint(t), 4) === slotOf(fingerprint(first), 4))!;
    expect(other).toBeDefined();
    g.set(first, 11);
    g.set(other, 22); // takes the slot
    expect(g.get(copy(first))).toBe(11);
    expect(g.get(copy(other))).toBe(22);
    expect(g.get(copy(first))).toBe(11);
    // A text with the same fingerprint (it differs at a character the fingerprint does not read) is not taken for it.
    const long = `${"head of a long prompt ".repeat(5)}${"x".repeat(300)}${" tail of it".repeat(5)}`;
    const twin = `${long.slice(0, 200)}y${long.slice(201)}`;
    expect(fingerprint(twin)).toBe(fingerprint(long));
    g.set(long, 33);
    expect(g.get(copy(long))).toBe(33);
    expect(g.get(twin)).toBeUndefined();
  });
});
