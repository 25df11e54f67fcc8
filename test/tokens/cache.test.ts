import { createRequire } from "node:module";
import { afterEach, describe, expect, it } from "vitest";
import { countTextTokens, freeEncoders, setEncoderLoader } from "../../src/tokens/index.js";
import { cachedCount, TEXT_CACHE_MIN } from "../../src/tokens/encoders.js";

const { get_encoding } = createRequire(import.meta.url)("tiktoken") as { get_encoding(e: string): { encode_ordinary(t: string): Uint32Array; free(): void } };

const o200kCount = (t: string) => get_encoding("o200k_base").encode_ordinary(t).length;

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
const longWords = (seed: string, chars: number) => Array.from({ length: Math.ceil(chars / (seed.length + 48)) }, (_, i) => `${seed}${i} ${"q".repeat(40)}`).join(" ");

afterEach(() => {
  setEncoderLoader((enc) => get_encoding(enc));
  freeEncoders();
});

describe("whole-text count cache", () => {
  it("counts a long text an app repeats once, with the same result, until the encoders are freed", () => {
    const seen = countingLoader();
    const text = longWords("prompt", 4 * TEXT_CACHE_MIN);
    const expected = get_encoding("o200k_base").encode_ordinary(text).length;
    expect(countTextTokens(text, "gpt-4o")).toBe(expected);
    const first = seen.calls;
    expect(first).toBeGreaterThan(0);
    // An equal string that is not the same object (as JSON.parse makes for every span) is found too.
    expect(countTextTokens(`${text} `.slice(0, -1), "gpt-4o")).toBe(expected);
    expect(seen.calls).toBe(first);
    freeEncoders();
    expect(countTextTokens(text, "gpt-4o")).toBe(expected);
    expect(seen.calls).toBeGreaterThan(first);
  });

  it("leaves texts shorter than TEXT_CACHE_MIN to the segment table, and forgets the least recently used past its size", () => {
    const seen = countingLoader();
    // A text shorter than TEXT_CACHE_MIN is left to the segment table; one that long is kept whole.
    const short = "ö".repeat(TEXT_CACHE_MIN - 1);
    countTextTokens(short, "gpt-4o");
    expect(cachedCount("o200k_base", short)).toBeUndefined();
    const long = "ö".repeat(TEXT_CACHE_MIN);
    countTextTokens(long, "gpt-4o");
    expect(cachedCount("o200k_base", long)).toBe(o200kCount(long));
    let calls = seen.calls;
    const kept = longWords("kept", 2000);
    countTextTokens(kept, "gpt-4o");
    // Fill well past the cache's 1M characters with other texts, touching `kept` as we go.
    for (let i = 0; i < 40; i++) {
      countTextTokens(longWords(`filler${i}-`, 60_000), "gpt-4o");
      calls = seen.calls;
      countTextTokens(kept, "gpt-4o");
      expect(seen.calls).toBe(calls); // recently used: still there
    }
    const dropped = longWords("filler0-", 60_000);
    calls = seen.calls;
    countTextTokens(dropped, "gpt-4o");
    expect(seen.calls).toBeGreaterThan(calls); // the oldest filler was dropped
  });
});
