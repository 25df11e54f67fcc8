/**
 * Tokens in one string, in time linear in its length, never throwing.
 *
 * Other models (Anthropic, unknown): about 4 characters per token for Latin
 * text, 1 token per CJK character; documented, not exact.
 *
 * OpenAI models: tiktoken's counts, at most tiktoken's own cost.
 * - split.ts cuts the text into chunks (and slices of long runs) that BPE
 *   handles in linear time, at places where tiktoken's pre-tokenizer splits
 *   anyway, so the sum over chunks is tiktoken's count.
 * - Memo: a chunk is cut into tiktoken's pieces with the same pattern in
 *   JavaScript (pretokenize.ts; for ASCII text that is one chunk, the usual
 *   message, by the equivalent scanner of scan.ts, which skips the regex and
 *   split.ts's walk); a piece seen before is counted from a table (memo.ts),
 *   the rest go to tiktoken. Natural text (prose, code, CSV) repeats its pieces,
 *   so most of it never reaches WASM. Looking pieces up costs more than it
 *   saves unless most of the text is known: when less than MIN_HIT_SHARE of a
 *   chunk's characters were, the next chunks go straight to tiktoken, and the
 *   memo is tried again PROBE_EVERY chunks later.
 * - Sparse: past the first EXACT_CHARS characters, text the memo does not help
 *   with (random bytes, wrapped base64, CJK; prose while the memo is still
 *   cold) is encoded one chunk in SPARSE;
 *   the chunks in between are counted at the running tokens per character of
 *   the chunks counted exactly. When a chunk's density departs from the
 *   running one (prose, then a base64 attachment), chunks are counted exactly
 *   until it settles. Such text has an even token density: the estimate
 *   stays within about a percent (benchmarks/tokens.ts prints the difference).
 * - Segments: a text of one chunk is cut into segments of a few words
 *   at places where the pre-tokenizer splits anyway (segments.ts); a segment
 *   seen before (the shared parts of an app's prompts) is counted from a
 *   table, the others as above.
 * - Whole texts of TEXT_CACHE_MIN to TEXT_CACHE_MAX characters met a second
 *   time are remembered with their counts (encoders.ts): a prompt an app
 *   repeats is counted twice, then looked up.
 * - A run longer than SAMPLES * RUN characters (a base64 blob, one repeated
 *   character) is counted from SAMPLES slices spread over it, extrapolated by
 *   length: a 10 MB word costs what a 4 KB one does.
 */
import {
  cacheCount,
  dropEncoder,
  encoder,
  encodingForModel,
  lookUpCount,
  memoFor,
  SEEN_BEFORE,
  TEXT_CACHE_MAX,
  TEXT_CACHE_MIN,
  whenEncodersFreed,
  type Encoder,
  type Encoding,
} from "./encoders.js";
import { PieceMemo } from "./memo.js";
import { pretokenizer } from "./pretokenize.js";
import { scan } from "./scan.js";
import { countBySegments } from "./segments.js";
import { CHUNK, isLowSurrogate, RUN, split } from "./split.js";

/** Slices of a long run that are encoded; beyond this the run is sampled. */
const SAMPLES = 16;
/** Pieces up to this long are remembered, at most MEMO_ENTRIES of them per encoding. */
const MEMO_MAX = 32;
const MEMO_ENTRIES = 1 << 16;
/** Unknown pieces per chunk encoded one by one (and remembered) so that the memo warms up. */
const LEARN_PER_CHUNK = 64;
const MIN_HIT_SHARE = 0.6;
const PROBE_EVERY = 16;
const EXACT_CHARS = 1 << 15;
const SPARSE = 4;
const SETTLED = 0.1;

function isCjk(c: number): boolean {
  return (
    (c >= 0x3040 && c <= 0x30ff) ||
    (c >= 0x3400 && c <= 0x4dbf) ||
    (c >= 0x4e00 && c <= 0x9fff) ||
    (c >= 0xac00 && c <= 0xd7af) ||
    (c >= 0xf900 && c <= 0xfaff)
  );
}

/** The documented approximation for non-OpenAI models. */
export function approximateTokens(text: string): number {
  if (typeof text !== "string" || !text) return 0;
  let cjk = 0;
  for (let i = 0; i < text.length; i++) if (isCjk(text.charCodeAt(i))) cjk++;
  return cjk + Math.ceil((text.length - cjk) / 4);
}

export function countTextTokens(text: string, model?: string): number {
  if (typeof text !== "string" || !text) return 0;
  const enc = encodingForModel(model);
  const e = enc ? encoder(enc) : undefined;
  if (!enc || !e) return approximateTokens(text);
  // Kept when met a second time (the doorkeeper in encoders.ts).
  let keep = false;
  if (text.length >= TEXT_CACHE_MIN && text.length <= TEXT_CACHE_MAX) {
    const known = lookUpCount(enc, text);
    if (known >= 0) return known;
    keep = known === SEEN_BEFORE;
  }
  // The usual message, one chunk as split() would cut it: by segments, each counted once (segments.ts).
  if (text.length <= CHUNK) {
    segEnc = enc;
    segEncoder = e;
    const bySegments = countBySegments(text, enc, countSegment);
    if (bySegments >= 0) {
      const n = Math.max(1, bySegments);
      if (keep) cacheCount(enc, text, n);
      return n;
    }
  }
  const t = new SegmentCounter(enc, e);
  // Pieces from the scanner when the text is ASCII and one chunk (a segment could not be counted exactly: a long run).
  const scanned = text.length <= CHUNK ? scan(text, enc, ends, RUN) : -1;
  if (scanned >= 0) t.add(text, scanned);
  else t.addSplit(text);
  const n = Math.max(1, Math.round(t.n));
  // A count the encoder failed part of the way through is an approximation: not kept.
  if (keep && t.exactOk) cacheCount(enc, text, n);
  return n;
}

/**
 * What countSegment counts with, set by countTextTokens just before it counts
 * by segments: one function for every text rather than a closure made per text
 * (counting is synchronous, so nothing else can run in between).
 */
let segEnc: Encoding = "o200k_base";
let segEncoder: Encoder | undefined;
function countSegment(s: string): number {
  return Buffer.byteLength(s) === s.length ? exactScanned(s, segEnc, segEncoder!) : exactMatched(s, segEnc, segEncoder!);
}

/**
 * One SegmentCounter for counting segments, emptied for each (a segment is counted
 * whole before the next begins), while its encoder is the one in use: a new
 * encoder (after freeEncoders or a failure) gets a new SegmentCounter.
 */
let segmentTally: SegmentCounter | undefined;
// Its memo and encoder go with the rest when the encoders are freed.
whenEncodersFreed(() => {
  segmentTally = undefined;
  segEncoder = undefined;
});
function tallyFor(enc: Encoding, e: Encoder): SegmentCounter {
  if (segmentTally?.countsWith(enc, e)) return segmentTally.reset();
  return (segmentTally = new SegmentCounter(enc, e));
}

/** tiktoken's count of an ASCII segment through the scanner and the piece memo, or -1 when it is not one scanned chunk or the encoder failed. */
function exactScanned(s: string, enc: Encoding, e: Encoder): number {
  const scanned = scan(s, enc, ends, RUN);
  if (scanned < 0) return -1;
  const t = tallyFor(enc, e);
  t.add(s, scanned);
  return t.exactOk ? t.n : -1;
}

/**
 * tiktoken's count of a segment that is not ASCII (its UTF-8 size differs
 * from its length; Buffer.byteLength tells faster than a regular expression),
 * cut and counted as a whole text is. Exact: a segment is at most CHUNK
 * characters, so nothing is counted sparsely and no run is long enough to be
 * sampled. -1 when the encoder failed.
 */
function exactMatched(s: string, enc: Encoding, e: Encoder): number {
  const t = tallyFor(enc, e);
  t.addSplit(s);
  return t.exactOk ? Math.round(t.n) : -1;
}

/** Piece ends from scan(), reused by every call (counting is synchronous). */
const ends = new Int32Array(CHUNK);

/** The running count of one text. */
class SegmentCounter {
  n = 0;
  private chunks = 0;
  private memoAt = 0;
  private seen = 0;
  /**
   * Tokens and characters of the chunks counted exactly, each halved at every
   * new one: the density the sparse mode extrapolates, weighted by size (a
   * 40-character slice does not speak for a 4000-character chunk) and local
   * to where the text is now.
   */
  private densityTokens = 0;
  private densityChars = 0;
  /** The last exact chunk's density differed from the running one by more than SETTLED: the shape is changing, keep counting exactly. */
  private unsettled = true;
  private ok = true;
  /** The share of the last chunk counted through the memo that the memo knew (viaMemo). */
  private hitShare = 0;
  private readonly memo: PieceMemo;

  /** The encoder worked throughout (no trap, so nothing was approximated for that reason). */
  get exactOk(): boolean {
    return this.ok;
  }
  private readonly re: RegExp;

  constructor(
    private readonly enc: Encoding,
    private readonly e: Encoder,
  ) {
    this.memo = memoFor(enc, MEMO_ENTRIES);
    this.re = pretokenizer(enc);
  }

  /** Whether this tally counts with `e` for `enc` (and the memo kept for them: freeEncoders makes a new encoder). */
  countsWith(enc: Encoding, e: Encoder): boolean {
    return this.enc === enc && this.e === e && this.ok;
  }

  /** Empty, for the next text. */
  reset(): this {
    this.n = 0;
    this.chunks = 0;
    this.memoAt = 0;
    this.seen = 0;
    this.densityTokens = 0;
    this.densityChars = 0;
    this.unsettled = true;
    return this;
  }

  /** tiktoken's count of s; if the encoder throws (a WASM trap), this and the rest of the text are approximated. */
  private exact(s: string): number {
    if (this.ok) {
      try {
        return this.e.encode_ordinary(s).length;
      } catch {
        this.ok = false;
        dropEncoder(this.enc);
      }
    }
    return approximateTokens(s);
  }

  /** A whole text, cut by split() into chunks and slices of long runs. */
  addSplit(text: string): void {
    split(text, {
      chunk: (s, end) => this.add(text.slice(s, end)),
      run: (s, end) => this.run(text, s, end),
    });
  }

  /** One chunk or run slice: at most CHUNK characters, no run longer than RUN; `scanned`: its pieces are ends[0..scanned). */
  add(s: string, scanned = -1): void {
    const i = this.chunks++;
    this.seen += s.length;
    let tokens: number;
    if (i >= this.memoAt && this.ok) {
      const m = this.viaMemo(s, scanned);
      tokens = m >= 0 ? m : this.exact(s);
      this.memoAt = m >= 0 && this.hitShare >= MIN_HIT_SHARE ? i + 1 : i + PROBE_EVERY;
    } else if (this.seen > EXACT_CHARS && i % SPARSE !== 0 && !this.unsettled) {
      this.n += (this.densityTokens / this.densityChars) * s.length;
      return;
    } else tokens = this.exact(s);
    const running = this.densityTokens / this.densityChars;
    this.unsettled = !(Math.abs(tokens / s.length / running - 1) < SETTLED);
    this.densityTokens = this.densityTokens / 2 + tokens;
    this.densityChars = this.densityChars / 2 + s.length;
    this.n += tokens;
  }

  /**
   * Count s piece by piece, leaving the share of its characters found in the
   * memo in `hitShare`; -1 if the pieces do not cover s. The pieces are the
   * regex's, or, given `scanned`, the first `scanned` entries of `ends` (scan.ts).
   */
  private viaMemo(s: string, scanned = -1): number {
    const pieces = scanned >= 0 ? undefined : s.match(this.re);
    if (!pieces && scanned < 0) return -1;
    const count = pieces ? pieces.length : scanned;
    const memo = this.memo;
    let n = 0;
    let hits = 0;
    let learn = LEARN_PER_CHUNK;
    let at = 0;
    let spanStart = -1;
    for (let k = 0; k < count; k++) {
      const end = pieces ? at + pieces[k]!.length : ends[k]!;
      const len = end - at;
      const h = len <= MEMO_MAX ? PieceMemo.hash(s, at, end) : 0;
      const known = len <= MEMO_MAX ? memo.get(s, at, end, h) : -1;
      if (known >= 0 || (learn > 0 && len <= MEMO_MAX)) {
        if (spanStart >= 0) {
          n += this.exact(s.slice(spanStart, at));
          spanStart = -1;
        }
        if (known >= 0) {
          hits += len;
          n += known;
        } else {
          learn--;
          const c = this.exact(pieces ? pieces[k]! : s.slice(at, end));
          if (this.ok) memo.set(s, at, end, h, c);
          n += c;
        }
      } else if (spanStart < 0) spanStart = at;
      at = end;
    }
    if (at !== s.length) return -1;
    if (spanStart >= 0) n += this.exact(s.slice(spanStart));
    this.hitShare = hits / s.length;
    return n;
  }

  /** text.slice(start, end), a run longer than RUN, in RUN-sized slices. */
  run(text: string, start: number, end: number): void {
    const len = end - start;
    // A slice boundary never separates the halves of a surrogate pair.
    const sliceEnd = (a: number) => {
      const b = Math.min(a + RUN, end);
      return b < end && isLowSurrogate(text.charCodeAt(b)) ? b + 1 : b;
    };
    if (len <= SAMPLES * RUN) {
      for (let a = start; a < end;) {
        const b = sliceEnd(a);
        this.add(text.slice(a, b));
        a = b;
      }
      return;
    }
    let tokens = 0;
    let chars = 0;
    for (let k = 0; k < SAMPLES; k++) {
      let a = start + Math.floor((k * (len - RUN)) / (SAMPLES - 1));
      if (isLowSurrogate(text.charCodeAt(a))) a++;
      const b = sliceEnd(a);
      tokens += this.exact(text.slice(a, b));
      chars += b - a;
    }
    this.n += Math.max(1, (tokens / chars) * len);
  }
}
