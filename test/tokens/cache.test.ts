import { createRequire } from "node:module";
import { afterEach, describe, expect, it } from "vitest";
import { countTextTokens, freeEncoders, setEncoderLoader } from "../../src/tokens/index.js";
import { cachedCount, TEXT_CACHE_MIN } from "../../src/tokens/encoders.js";

const { get_encoding } = createRequire(import.meta.url)("tiktoken") as {
  get_encoding(e: string): { encode_ordinary(t: string): Uint32Array; free(): void };
};

let o200k: { encode_ordinary(t: string): Uint32Array } | undefined;
/** tiktoken's own count (one encoder for the file: loading one takes ~200 ms). */
const o200kCount = (t: string) => (o200k ??= get_encoding("o200k_base")).encode_ordinary(t).length;

/** The real encoder, with its calls counted. */
function countingLoader(): { calls: number } {
  const seen = { calls: 0 };
  setEncoderLoader((enc) => {
    const e = get_encoding(enc);
    return {
      encode_ordinary: (t: string) => {
        seen.calls++;
        return e.encode_ordinary(t);
      },
      free: () => e.free(),
    };
  });
  return seen;
}

/** Text with pieces longer than the piece memo keeps (" qqq…"), so every count of it reaches the encoder. */
const longWords = (seed: string, chars: number) =>
  Array.from({ length: Math.ceil(chars / (seed.length + 48)) }, (_, i) => `${seed}${i} ${"q".repeat(40)}`).join(" ");

afterEach(() => {
  setEncoderLoader((enc) => get_encoding(enc));
  freeEncoders();
});

describe("whole-text count cache", () => {
  it("counts a long text an app repeats twice, then looks it up, with the same result, until the encoders are freed", () => {
    const seen = countingLoader();
    const text = longWords("prompt", 4 * TEXT_CACHE_MIN);
    const expected = get_encoding("o200k_base").encode_ordinary(text).length;
    expect(countTextTokens(text, "gpt-4o")).toBe(expected);
    const first = seen.calls;
    expect(first).toBeGreaterThan(0);
    // Met once: counted, not kept (most texts are met once: the doorkeeper keeps them out).
    expect(cachedCount("o200k_base", text)).toBeUndefined();
    // An equal string that is not the same object (as JSON.parse makes for every span) is recognised as met before: counted again and kept.
    expect(countTextTokens(`${text} `.slice(0, -1), "gpt-4o")).toBe(expected);
    const second = seen.calls;
    expect(second).toBeGreaterThan(first); // counted again (its last segment is not remembered by the segment table)
    expect(cachedCount("o200k_base", text)).toBe(expected);
    // From the third time on it is looked up.
    expect(countTextTokens(`${text} `.slice(0, -1), "gpt-4o")).toBe(expected);
    expect(seen.calls).toBe(second);
    freeEncoders();
    expect(countTextTokens(text, "gpt-4o")).toBe(expected);
    expect(seen.calls).toBeGreaterThan(second);
  });

  it("keeps none of many texts each met once, and every one met twice", () => {
    const texts = Array.from(
      { length: 3000 },
      (_, i) => `Summarise the attached report in three bullet points, keeping figures exact. (request ${i})`,
    );
    for (const t of texts) countTextTokens(t, "gpt-4o");
    expect(texts.filter((t) => cachedCount("o200k_base", t) !== undefined).length).toBe(0);
    // Texts that differ only in their middle (same length, head and tail) are told apart by the sampled middle or,
    // where two share a fingerprint, merely kept early: the counts are right either way.
    const middles = Array.from({ length: 500 }, (_, i) => `${"a".repeat(40)} ${String(i).padStart(4, "0")} ${"b".repeat(40)}`);
    for (const t of middles) expect(countTextTokens(t, "gpt-4o")).toBe(o200kCount(t));
    for (const t of middles) expect(countTextTokens(`${t} `.slice(0, -1), "gpt-4o")).toBe(o200kCount(t));
    expect(middles.every((t) => cachedCount("o200k_base", t) === o200kCount(t))).toBe(true);
  });

  it("leaves texts shorter than TEXT_CACHE_MIN to the segment table, and forgets the least recently used past its size", () => {
    const seen = countingLoader();
    // A text shorter than TEXT_CACHE_MIN is left to the segment table; one that long is kept whole (when met again).
    const short = "ö".repeat(TEXT_CACHE_MIN - 1);
    countTextTokens(short, "gpt-4o");
    countTextTokens(short, "gpt-4o");
    expect(cachedCount("o200k_base", short)).toBeUndefined();
    const long = "ö".repeat(TEXT_CACHE_MIN);
    countTextTokens(long, "gpt-4o");
    countTextTokens(long, "gpt-4o");
    expect(cachedCount("o200k_base", long)).toBe(o200kCount(long));
    let calls = seen.calls;
    const kept = longWords("kept", 2000);
    countTextTokens(kept, "gpt-4o");
    countTextTokens(kept, "gpt-4o");
    // Fill well past the cache's 1M characters with other texts (each met twice, so kept), touching `kept` as we go.
    for (let i = 0; i < 40; i++) {
      countTextTokens(longWords(`filler${i}-`, 60_000), "gpt-4o");
      countTextTokens(longWords(`filler${i}-`, 60_000), "gpt-4o");
      calls = seen.calls;
      countTextTokens(kept, "gpt-4o");
      expect(seen.calls).toBe(calls); // recently used: still there
    }
    expect(cachedCount("o200k_base", longWords("filler39-", 60_000))).toBeDefined();
    const dropped = longWords("filler0-", 60_000);
    expect(cachedCount("o200k_base", dropped)).toBeUndefined(); // the oldest filler was dropped
    calls = seen.calls;
    countTextTokens(dropped, "gpt-4o");
    expect(seen.calls).toBeGreaterThan(calls);
  });
});
