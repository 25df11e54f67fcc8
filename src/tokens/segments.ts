/**
 * Counting an ASCII text by segments: the text is cut, in one pass over its
 * character codes, into segments of a few words at places where tiktoken's
 * pre-tokenizer splits anyway, and a segment seen before is counted from a
 * table.
 *
 * Why: the prompts of one app share most of their text (the system prompt,
 * the template around the user's question, the conversation so far), but
 * they are rarely equal as wholes, so the whole-text cache (encoders.ts)
 * misses them and every piece of every prompt went through the scanner and
 * the piece memo again (the largest part of estimating a span's usage). Finding the cuts is one light pass; a segment is looked up
 * as a slice of the text (no copy) in a Map, which hashes and compares it in
 * V8's native code, cheaper than hashing character codes in JavaScript.
 *
 * Where a cut is exact: before a space that follows a non-whitespace ASCII
 * character and precedes one (a letter, a digit or punctuation). The piece
 * holding the character before the space cannot take the space (a word, a
 * number or a run of punctuation all stop at whitespace, and a contraction
 * needs an apostrophe), and a piece starts at the space: ` word`, ` (`, or
 * the space alone before a digit (numbers take no leading space); each
 * piece is decided by its own characters and the one after it, which for
 * the last piece of a segment is the space or the end of the segment, alike.
 * Runs of whitespace or non-whitespace never cross a cut, so the scanner's
 * run limit sees the same runs. BPE never merges across pieces: the text's
 * count is the sum of its segments' counts.
 *
 * Digits and punctuation count as well as letters after the space: the part
 * of a prompt that differs from call to call is often a number (an id, an
 * amount, a date: "… (request 8123)"), and with only letters the words before
 * it up to the last letter stayed in the one segment counted piece by piece
 * every time.
 *
 * Where a cut is made: at such a place, once the segment has SEG_MIN
 * characters and the word before the place says so (its length and last
 * character: about one place in four), or past SEG_MAX characters. Cutting by
 * content, not by position, lets a passage repeated at another offset (a
 * message quoted in a later turn) fall into the same segments after its first
 * cut.
 *
 * Text past ASCII (accents, a degree sign, typographic quotes, other scripts)
 * is cut the same way: the places are still decided by the ASCII characters on
 * either side of the space (a character past ASCII before the space is not
 * taken as a cut: some are whitespace to tiktoken, and staying off them keeps
 * the argument above about ASCII alone), and the pieces the pre-tokenizer
 * makes never cross such a place whatever the rest of the text holds. `count`
 * receives such segments too; a segment it cannot count exactly (-1) sends the
 * whole text back to the caller.
 */
import type { Encoding } from "./encoders.js";
import { segmentTableFor } from "./encoders.js";
import type { SegmentTable } from "./memo.js";

/** Fewest characters in a segment cut by content; shorter segments cost more in lookups than they save. */
const SEG_MIN = 32;
/** A segment is cut at the first exact place past this many characters, whatever its words say. */
const SEG_MAX = 192;
/** Segments up to this long are remembered (at most 2 x 4096 per encoding: encoders.ts), so at most 2M characters are held. */
const SEG_KEEP = 256;

/** A printable ASCII character other than the space: a letter, a digit or punctuation (NaN, past the end, is not). */
const isVisible = (c: number) => c >= 33 && c <= 126;

/**
 * Whether a space between these two characters is a place to cut: not after
 * whitespace (ASCII's as tiktoken's `\s` sees it: space, tab, newline,
 * vertical tab, form feed, carriage return) nor after a character past
 * ASCII, and before a visible ASCII character.
 */
function isPlace(prev: number, next: number): boolean {
  return prev !== 32 && !(prev >= 9 && prev <= 13) && prev < 128 && isVisible(next);
}

/** The last place to cut strictly between `after` and `before` (space positions), or `after` when there is none. */
function lastPlace(text: string, after: number, before: number): number {
  for (let j = text.lastIndexOf(" ", before - 1); j > after; j = text.lastIndexOf(" ", j - 1)) {
    if (isPlace(text.charCodeAt(j - 1), text.charCodeAt(j + 1))) return j;
  }
  return after;
}

/**
 * The token count of `text` (at most split.ts's CHUNK characters), summed
 * over its segments; `count` counts a segment exactly or returns -1. Returns
 * -1 when a segment could not be counted exactly: then the caller counts the
 * text whole.
 */
export function countBySegments(text: string, enc: Encoding, count: (segment: string) => number): number {
  // The scan is native (indexOf's search for one character): a loop over character codes in
  // JavaScript cost as much as looking the segments up.
  const table = segmentTableFor(enc);
  const n = text.length;
  let total = 0;
  let start = 0;
  // Spaces closer than SEG_MIN to the segment's start cannot end it: the search starts past them, and
  // the last place among them (the rule below reads the word before a cut) is found walking back from
  // the first space that can, usually one step (cheaper than testing every space).
  let i = text.indexOf(" ", SEG_MIN);
  let word = lastPlace(text, 0, i < 0 ? n : i); // where the word before the next possible cut began
  while (i >= 0) {
    const prev = text.charCodeAt(i - 1);
    if (isPlace(prev, text.charCodeAt(i + 1))) {
      const len = i - start;
      if ((len >= SEG_MIN && ((prev ^ (i - word)) & 3) === 0) || len >= SEG_MAX) {
        const k = segment(text, start, i, table, count);
        if (k < 0) return -1;
        total += k;
        start = i;
        i = text.indexOf(" ", start + SEG_MIN);
        word = lastPlace(text, start, i < 0 ? n : i);
        continue;
      }
      word = i;
    }
    i = text.indexOf(" ", i + 1);
  }
  // The last segment of a text that was cut is where prompts usually differ (the question after the
  // template, the newest turn): it is counted but not remembered, so one-off tails do not push the
  // segments that do repeat out of the table. A text of one segment (a system prompt) is remembered.
  // What differs is usually the last few words ("... (request 8123)"): the rest of that segment, up to
  // its last exact place, is a segment of its own, remembered, so only those words are counted piece by
  // piece (before, the whole segment was, every time). Not for a text of one segment: it is remembered whole.
  if (start > 0 && word - start >= SEG_MIN && n - word >= 1) {
    const k = segment(text, start, word, table, count);
    if (k < 0) return -1;
    total += k;
    start = word;
  }
  const k = segment(text, start, n, table, count, start === 0);
  return k < 0 ? -1 : total + k;
}

function segment(
  text: string,
  start: number,
  end: number,
  table: SegmentTable,
  count: (segment: string) => number,
  remember = true,
): number {
  const s = start === 0 && end === text.length ? text : text.slice(start, end);
  const known = table.get(s);
  if (known !== undefined) return known;
  const k = count(s);
  // The key is copied out of the text: a slice would keep the whole text alive as long as the table holds it.
  if (k >= 0 && remember && end - start <= SEG_KEEP) table.set(` ${s}`.slice(1), k);
  return k;
}
