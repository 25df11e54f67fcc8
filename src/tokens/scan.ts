/**
 * tiktoken's pre-tokenizer for ASCII text, as a hand-written scanner: the same
 * pieces the regular expressions of pretokenize.ts produce, found in one pass
 * over character codes with no regex and no substring.
 *
 * Why: counting a message is mostly cutting it into pieces and looking each
 * up in the memo (count.ts). Through the Unicode-aware RegExp and split.ts's
 * walk, that cost ~40 ns per character, the largest part of estimating a
 * span's usage; most prompts are plain ASCII, where the patterns reduce to a
 * few character classes and the scanner does the same work in one loop.
 *
 * Restricted to ASCII, the patterns' alternatives read (tried in order at
 * each position, as the regex engine does):
 *   o200k_base:  [^\r\n L N]? Lu* Ll* contraction?     (a letter must follow the prefix)
 *                N{1,3}
 *                " "? P+ [\r\n/]*                        (P: not space, letter or digit)
 *                \s* [\r\n]+  |  \s+(?!\S)  |  \s+
 *   cl100k_base: contraction | [^\r\n L N]? L+ | N{1,3} | " "? P+ [\r\n]* | the same three for spaces
 * Anything else (a character past ASCII) is left to the regex: scan returns -1.
 * test/tokens/scan.test.ts checks the scanner against the regex on generated text.
 */
import type { Encoding } from "./encoders.js";

const UPPER = 1;
const LOWER = 2;
const DIGIT = 3;
/** \r or \n. */
const NEWLINE = 4;
/** Other ASCII whitespace: tab, vertical tab, form feed, space. */
const SPACE = 5;
/** Neither whitespace, letter nor digit. */
const OTHER = 6;

const CLASS = new Uint8Array(128).fill(OTHER);
for (let c = 65; c <= 90; c++) CLASS[c] = UPPER;
for (let c = 97; c <= 122; c++) CLASS[c] = LOWER;
for (let c = 48; c <= 57; c++) CLASS[c] = DIGIT;
CLASS[10] = CLASS[13] = NEWLINE;
CLASS[9] = CLASS[11] = CLASS[12] = CLASS[32] = SPACE;

const APOSTROPHE = 39;
const SLASH = 47;

/** Class of text[i] (0 past the end). The caller has checked that text is ASCII. */
function cls(text: string, i: number): number {
  return i < text.length ? CLASS[text.charCodeAt(i)]! : 0;
}

/** Length of the contraction ('s 't 're 've 'm 'll 'd, either case) at i, or 0. */
function contraction(text: string, i: number): number {
  if (text.charCodeAt(i) !== APOSTROPHE) return 0;
  const a = text.charCodeAt(i + 1) | 0x20; // lower case for letters; NaN | 0x20 past the end is 0x20
  if (a === 0x73 || a === 0x74 || a === 0x6d || a === 0x64) return 2; // s t m d
  const b = text.charCodeAt(i + 2) | 0x20;
  if ((a === 0x72 || a === 0x76) && b === 0x65) return 3; // re ve
  if (a === 0x6c && b === 0x6c) return 3; // ll
  return 0;
}

/**
 * Where the run of whitespace starting at i (text[i] is whitespace) ends as a
 * piece: through its last newline if it has one; else all of it at the end of
 * the text, all but its last character before a non-space, or one character.
 */
function spaces(text: string, i: number): number {
  let k = i;
  let lastNewline = -1;
  for (let c = cls(text, k); c === SPACE || c === NEWLINE; c = cls(text, ++k)) if (c === NEWLINE) lastNewline = k;
  if (lastNewline >= 0) return lastNewline + 1;
  if (k === text.length) return k;
  return k - i >= 2 ? k - 1 : k;
}

/** Past the run of OTHER from i (the newlines after it are walked by scan()). */
function others(text: string, i: number): number {
  let j = i;
  while (cls(text, j) === OTHER) j++;
  return j;
}

/**
 * Cut ASCII text into tiktoken's pieces: their end offsets go into `ends`
 * (which must hold text.length entries); returns how many, or -1 when the
 * text is not one chunk for the scanner: a character past ASCII (the regex's
 * work), or a run of whitespace or of non-whitespace longer than maxRun
 * (split.ts hands such a run over on its own).
 *
 * Runs are followed piece by piece rather than character by character:
 * `space` is the last whitespace position seen and `spaceStart` where its
 * run began. Whitespace is only ever a whole spaces() piece, the first
 * character of a piece, or the newlines after punctuation (walked here one
 * by one); a run of non-whitespace is checked where it ends.
 */
export function scan(text: string, enc: Encoding, ends: Int32Array, maxRun: number): number {
  const o200k = enc === "o200k_base";
  const n = text.length;
  let k = 0;
  let i = 0;
  let space = -1;
  let spaceStart = 0;
  while (i < n) {
    const c = CLASS[text.charCodeAt(i)];
    if (c === undefined) return -1;
    let j: number;
    let punct = -1; // set when the piece is punctuation whose trailing newlines (and slashes) start at j
    if (c === NEWLINE || c === SPACE) {
      const next = cls(text, i + 1);
      let all = false; // the whole piece is whitespace (spaces()), not just its first character
      if (c === SPACE && (next === UPPER || next === LOWER)) j = o200k ? word200(text, i + 1) : letters(text, i + 1);
      else if (c === SPACE && next === OTHER && text.charCodeAt(i) === 32) j = punct = others(text, i + 1);
      else {
        j = spaces(text, i);
        all = true;
      }
      if (space !== i - 1) spaceStart = i;
      space = all ? j - 1 : i;
      if (space + 1 - spaceStart > maxRun) return -1;
    } else if (c === UPPER || c === LOWER) j = o200k ? word200(text, i) : letters(text, i);
    else if (c === DIGIT) j = digits(text, i);
    else {
      const con = o200k ? 0 : contraction(text, i);
      const next = cls(text, i + 1);
      if (con) j = i + con;
      else if (next === UPPER || next === LOWER) j = o200k ? word200(text, i + 1) : letters(text, i + 1);
      else j = punct = others(text, i);
    }
    if (punct >= 0) {
      // Newlines after punctuation (and, for o200k, slashes among them) belong to the piece.
      for (;;) {
        const d = text.charCodeAt(j);
        if (d === 10 || d === 13) {
          if (space !== j - 1) {
            if (j - 1 - space > maxRun) return -1; // the non-whitespace run that ends here
            spaceStart = j;
          }
          space = j++;
          if (j - spaceStart > maxRun) return -1;
        } else if (o200k && d === SLASH) j++;
        else break;
      }
    }
    if (space !== j - 1 && j - 1 - space > maxRun) return -1;
    ends[k++] = j;
    i = j;
  }
  return k;
}

/** o200k's word: upper-case letters, lower-case letters, then a contraction if one follows. */
function word200(text: string, i: number): number {
  let j = i;
  while (cls(text, j) === UPPER) j++;
  while (cls(text, j) === LOWER) j++;
  return j + contraction(text, j);
}

/** cl100k's word: letters of either case. */
function letters(text: string, i: number): number {
  let j = i;
  for (let c = cls(text, j); c === UPPER || c === LOWER; c = cls(text, ++j));
  return j;
}

function digits(text: string, i: number): number {
  let j = i + 1;
  if (cls(text, j) === DIGIT) j++;
  if (cls(text, j) === DIGIT) j++;
  return j;
}
