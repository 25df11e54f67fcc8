/**
 * tiktoken's WASM encoders: chosen by model prefix, loaded lazily, once.
 * If the WASM cannot load, callers get undefined and use the approximation;
 * a warning is printed once.
 */
import { createRequire } from "node:module";
import { fingerprint, TextCountCache, PieceMemo, SegmentTable, slotOf } from "./memo.js";

export type Encoding = "o200k_base" | "cl100k_base";
export interface Encoder {
  /** Special-token text such as "<|endoftext|>" in a prompt is counted as text, never an error (and this skips the special-token scan). */
  encode_ordinary(text: string): { length: number };
  free(): void;
}

// The longest matching prefix wins, so gpt-4o is o200k_base though gpt-4 is cl100k_base.
const PREFIXES: [string, Encoding][] = [
  ["gpt-4o", "o200k_base"],
  ["chatgpt-4o", "o200k_base"],
  ["gpt-4.1", "o200k_base"],
  ["gpt-4.5", "o200k_base"],
  ["gpt-5", "o200k_base"],
  ["gpt-oss", "o200k_base"],
  ["o1", "o200k_base"],
  ["o3", "o200k_base"],
  ["o4", "o200k_base"],
  ["gpt-4", "cl100k_base"],
  ["gpt-3.5", "cl100k_base"],
  ["text-embedding-3", "cl100k_base"],
  ["text-embedding-ada", "cl100k_base"],
];

/** Models already looked up (every text of every estimate asks); bounded, emptied when full. */
const byModel = new Map<string, Encoding | null>();
const MAX_MODELS = 256;

/** The tiktoken encoding for a model, or undefined when it is not an OpenAI model. */
export function encodingForModel(model: string | undefined): Encoding | undefined {
  if (typeof model !== "string" || !model) return undefined;
  const known = byModel.get(model);
  if (known !== undefined) return known ?? undefined;
  const enc = lookUp(model);
  if (byModel.size >= MAX_MODELS) byModel.clear();
  byModel.set(model, enc ?? null);
  return enc;
}

function lookUp(model: string): Encoding | undefined {
  const m = model.toLowerCase().replace(/^openai\//, "");
  let best: [string, Encoding] | undefined;
  for (const p of PREFIXES) if (m.startsWith(p[0]) && (!best || p[0].length > best[0].length)) best = p;
  return best?.[1];
}

const encoders = new Map<Encoding, Encoder>();
let wasmBroken = false;
let loader: (enc: Encoding) => Encoder = (enc) => {
  const require = createRequire(import.meta.url);
  const { get_encoding } = require("tiktoken") as { get_encoding(e: string): Encoder };
  return get_encoding(enc);
};

/** For tests: replace how encoders are loaded (e.g. one that fails, to exercise the fallback). */
export function setEncoderLoader(fn: (enc: Encoding) => Encoder): void {
  loader = fn;
  freeEncoders();
  wasmBroken = false;
}

export function encoder(enc: Encoding): Encoder | undefined {
  if (wasmBroken) return undefined;
  let e = encoders.get(enc);
  if (e) return e;
  try {
    e = loader(enc);
  } catch (err) {
    wasmBroken = true;
    process.emitWarning(
      `tracepipe: tiktoken could not load (${(err as Error)?.message}); token counts are approximated`,
      "TracepipeWarning",
    );
    return undefined;
  }
  encoders.set(enc, e);
  return e;
}

/**
 * Forget an encoder whose encode threw (a WASM trap, out of memory): the next
 * count loads a fresh one rather than reusing an instance in an unknown state.
 */
export function dropEncoder(enc: Encoding): void {
  const e = encoders.get(enc);
  encoders.delete(enc);
  try {
    e?.free();
  } catch {
    // Already unusable; nothing more to release.
  }
}

const memos = new Map<Encoding, PieceMemo>();

/** Token counts of pieces already seen, per encoding (see count.ts), at most `maxEntries`; emptied by freeEncoders(). */
export function memoFor(enc: Encoding, maxEntries: number): PieceMemo {
  let m = memos.get(enc);
  if (!m) memos.set(enc, (m = new PieceMemo(maxEntries)));
  return m;
}

/** Segments per generation of a SegmentTable. */
const SEGMENT_ENTRIES = 1 << 12;
const segmentTables = new Map<Encoding, SegmentTable>();

/** Token counts of text segments already seen, per encoding (see segments.ts); emptied by freeEncoders(). */
export function segmentTableFor(enc: Encoding): SegmentTable {
  let m = segmentTables.get(enc);
  if (!m) segmentTables.set(enc, (m = new SegmentTable(SEGMENT_ENTRIES)));
  return m;
}

/**
 * Counts of whole texts, per encoding: a system prompt, a tool result or a
 * turn of the conversation so far that every call of an app repeats is
 * counted twice (see the doorkeeper below), then looked up. A lookup is far
 * cheaper than counting (a 150-character message by segments cost ~20x a
 * lookup that hashed it in V8's native code; a hit now compares it with the
 * text kept instead: memo.ts TextCountCache), so only texts shorter than
 * TEXT_CACHE_MIN are left to the segment table; at most TEXT_CACHE_CHARS
 * characters are held (see TextCache).
 */
export const TEXT_CACHE_MIN = 64;
export const TEXT_CACHE_MAX = 1 << 16;
const TEXT_CACHE_CHARS = 1 << 20;

/** lookUpCount's answers when it has no count: the text is new (do not keep its count), or was seen before (keep it). */
export const FIRST_SIGHT = -1;
export const SEEN_BEFORE = -2;

/**
 * Slots of the doorkeeper's fingerprint table (a direct-mapped table of
 * 32-bit fingerprints: 64 KiB), and of the count cache's front (as many
 * references to texts the cache holds, and 128 KiB of counts and generations).
 */
const SEEN_SLOTS = 1 << 14;
/**
 * Two generations (memo.ts TextCountCache), each up to half of TEXT_CACHE_CHARS
 * characters: a text in use stays, and what has not been asked for in two
 * generations goes, at a constant cost per lookup. (A Map kept in
 * least-recently-used order evicted from its front, and V8 walks the holes
 * that deletions leave there: with the texts of every message cached,
 * eviction cost more than counting.)
 *
 * A doorkeeper in front: a text's count is kept only when the text is met a
 * second time, and a text met for the first time is not looked up in the Maps
 * at all. Why: most texts longer than TEXT_CACHE_MIN are met once (the user's
 * question, the model's answer), and keeping every one made the cache hold
 * a generation of them. In a program doing other work (span conversion),
 * those strings lived through several young collections and were promoted,
 * and hashing each for its lookup missed the processor's caches, which made
 * estimation several times dearer than counted alone. The
 * doorkeeper is a table of fingerprints (typed memory: nothing for the
 * collector to trace), and a fingerprint reads ~40 characters however long
 * the text.
 */
class TextCache {
  private readonly counts = new TextCountCache(TEXT_CACHE_CHARS / 2, true, SEEN_SLOTS);
  private readonly seen = new Int32Array(SEEN_SLOTS);

  /** The count, or FIRST_SIGHT / SEEN_BEFORE (see the class comment). */
  lookUp(text: string): number {
    const fp = fingerprint(text);
    const slot = slotOf(fp, SEEN_SLOTS);
    if (this.seen[slot] !== fp) {
      this.seen[slot] = fp;
      return FIRST_SIGHT;
    }
    return this.counts.get(text, fp) ?? SEEN_BEFORE;
  }

  get(text: string): number | undefined {
    return this.counts.get(text);
  }

  set(text: string, n: number): void {
    this.counts.set(text, n);
  }
}
const textCaches = new Map<Encoding, TextCache>();

function textCache(enc: Encoding): TextCache {
  let c = textCaches.get(enc);
  if (!c) textCaches.set(enc, (c = new TextCache()));
  return c;
}

/** The count kept for `text`, or FIRST_SIGHT / SEEN_BEFORE; either way the doorkeeper notes the text. */
export function lookUpCount(enc: Encoding, text: string): number {
  return textCache(enc).lookUp(text);
}

/** The count kept for `text`, if any (no doorkeeping: for tests and diagnostics). */
export function cachedCount(enc: Encoding, text: string): number | undefined {
  return textCaches.get(enc)?.get(text);
}

/** Keep `text`'s count (for a text lookUpCount said was SEEN_BEFORE). */
export function cacheCount(enc: Encoding, text: string, n: number): void {
  textCache(enc).set(text, n);
}

/** Which encoders are loaded now (for tests and diagnostics). */
export function loadedEncodings(): Encoding[] {
  return [...encoders.keys()];
}

/** What counting keeps between calls outside these tables (count.ts's reused SegmentCounter), dropped by freeEncoders(). */
const onFree: (() => void)[] = [];
export function whenEncodersFreed(fn: () => void): void {
  onFree.push(fn);
}

export function freeEncoders(): void {
  for (const enc of [...encoders.keys()]) dropEncoder(enc);
  memos.clear();
  segmentTables.clear();
  textCaches.clear();
  for (const fn of onFree) fn();
}
