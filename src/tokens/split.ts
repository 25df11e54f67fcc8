/**
 * One linear pass that cuts text into what BPE can encode in linear time.
 *
 * tiktoken's own cost grows with the square of the longest piece its regex
 * produces (one word, or one run of whitespace), and a regex over a multi-MB
 * run overflows the regex stack. So the text is walked once, character by
 * character, with no regex and no backward search:
 *
 * - runs (maximal stretches of whitespace, or of non-whitespace) of at most
 *   RUN characters stay inside chunks of at most CHUNK characters, cut just
 *   before a space that starts a word, where tiktoken's pre-tokenizer would
 *   split anyway, so the counts stay exact;
 * - a longer run (a base64 blob, minified code, CJK text without spaces, one
 *   repeated character) is handed over on its own, to be counted in RUN-sized
 *   slices (see countRun in count.ts).
 */

/** Most characters handed to the encoder in one call. */
export const CHUNK = 4000;
/** Longest unbroken run encoded whole; longer runs are sliced. */
export const RUN = 256;

/** Whitespace as tiktoken's pre-tokenizer (`\s`, Unicode White_Space) sees it. */
export function isSpace(c: number): boolean {
  if (c <= 32) return c === 32 || (c >= 9 && c <= 13);
  if (c < 0x85) return false;
  return (
    c === 0x85 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000
  );
}

export function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

export interface Visitor {
  /** text.slice(start, end): ordinary text, at most CHUNK characters, no run longer than RUN. */
  chunk(start: number, end: number): void;
  /** text.slice(start, end): one run longer than RUN characters. */
  run(start: number, end: number): void;
}

/** Walk `text` once and report its chunks and long runs in order; together they cover it exactly. */
export function split(text: string, v: Visitor): void {
  const n = text.length;
  let chunkStart = 0;
  let runStart = 0;
  let runSpace = n > 0 && isSpace(text.charCodeAt(0));
  // Candidate cut points inside the current chunk: the whitespace character just
  // before a word. A space (0x20) there is exact for tiktoken; another
  // whitespace character (a newline after punctuation) may cost one token.
  let cutSpace = -1;
  let cutAny = -1;
  for (let i = 0; i < n; i++) {
    const sp = isSpace(text.charCodeAt(i));
    if (sp !== runSpace) {
      runSpace = sp;
      runStart = i;
      if (!sp) {
        cutAny = i - 1;
        if (text.charCodeAt(i - 1) === 32) cutSpace = i - 1;
      }
    }
    if (i - runStart >= RUN) {
      let end = i + 1;
      while (end < n && isSpace(text.charCodeAt(end)) === sp) end++;
      if (runStart > chunkStart) v.chunk(chunkStart, runStart);
      v.run(runStart, end);
      chunkStart = runStart = end;
      cutSpace = cutAny = -1;
      if (end < n) runSpace = isSpace(text.charCodeAt(end));
      i = end - 1;
      continue;
    }
    if (i + 1 - chunkStart > CHUNK) {
      // Prefer an exact cut unless it would leave a chunk under half full.
      let at = cutSpace > chunkStart + CHUNK / 2 ? cutSpace : cutAny > chunkStart ? cutAny : i;
      // A hard cut never separates the halves of a surrogate pair.
      if (at === i && isLowSurrogate(text.charCodeAt(i))) at = i - 1;
      v.chunk(chunkStart, at);
      chunkStart = at;
      cutSpace = cutAny = -1;
    }
  }
  if (chunkStart < n) v.chunk(chunkStart, n);
}

/** The pieces split() reports, as strings (for tests and diagnostics). */
export function pieces(text: string): string[] {
  const out: string[] = [];
  const push = (s: number, e: number) => out.push(text.slice(s, e));
  split(text, { chunk: push, run: push });
  return out;
}
