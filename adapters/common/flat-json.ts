/**
 * Tool-call arguments are nearly always one flat JSON object: `{"city":"Paris","days":3}`.
 * `readFlatObject` reads exactly that shape (members whose values are strings
 * without escapes, numbers, `true`, `false` or `null`, JSON whitespace between
 * tokens) and gives the object `JSON.parse` gives for it, for less than
 * `JSON.parse` costs on such short texts. Anything else (nesting, an escape, a
 * control character, a `__proto__` key, any syntax error) is undefined: the
 * caller parses it with `JSON.parse`, which also words the error.
 */
import type { Obj } from "./guards.js";

const QUOTE = 34;
const BACKSLASH = 92;
const COMMA = 44;
const COLON = 58;
const OPEN = 123;
const CLOSE = 125;
const MINUS = 45;
const PLUS = 43;
const DOT = 46;
const ZERO = 48;

/**
 * The code unit at `i`, or -1 past the end. Every read goes through here: a
 * `charCodeAt` past the end (NaN) makes the optimizing compiler give up inlining
 * `charCodeAt` at that call site, and every character read becomes a call.
 */
function code(s: string, i: number): number {
  return i < s.length ? s.charCodeAt(i) : -1;
}

function isDigit(c: number): boolean {
  return c >= ZERO && c <= 57;
}

/** The first index at or after `i` that is not JSON whitespace (space, tab, line feed, carriage return). */
function skipSpace(s: string, i: number): number {
  for (;;) {
    const c = code(s, i);
    if (c !== 32 && c !== 10 && c !== 13 && c !== 9) return i;
    i++;
  }
}

/** The index of the quote closing a string whose text starts at `i`, or -1 when it holds an escape or a control character (JSON.parse's to judge) or never closes. */
function plainStringEnd(s: string, i: number): number {
  const n = s.length;
  for (; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c === QUOTE) return i;
    if (c === BACKSLASH || c < 32) return -1;
  }
  return -1;
}

/** The index just past a JSON number starting at `i` (RFC 8259 grammar), or -1 when none starts there. */
function numberEnd(s: string, i: number): number {
  if (code(s, i) === MINUS) i++;
  const first = code(s, i);
  if (first === ZERO) i++;
  else if (isDigit(first)) while (isDigit(code(s, ++i)));
  else return -1;
  if (code(s, i) === DOT) {
    if (!isDigit(code(s, ++i))) return -1;
    while (isDigit(code(s, ++i)));
  }
  const e = code(s, i);
  if (e === 101 || e === 69) {
    let c = code(s, ++i);
    if (c === PLUS || c === MINUS) c = code(s, ++i);
    if (!isDigit(c)) return -1;
    while (isDigit(code(s, ++i)));
  }
  return i;
}

/** What `JSON.parse(text)` gives when `text` is one flat object of plain members; undefined for any other text. */
export function readFlatObject(text: string): Obj | undefined {
  const n = text.length;
  let i = skipSpace(text, 0);
  if (code(text, i) !== OPEN) return undefined;
  const out: Obj = {};
  i = skipSpace(text, i + 1);
  if (code(text, i) === CLOSE) return skipSpace(text, i + 1) === n ? out : undefined;
  for (;;) {
    if (code(text, i) !== QUOTE) return undefined;
    const keyEnd = plainStringEnd(text, i + 1);
    if (keyEnd < 0) return undefined;
    const key = text.slice(i + 1, keyEnd);
    // Assignment below would set the prototype; JSON.parse makes an own member of that name.
    if (key === "__proto__") return undefined;
    i = skipSpace(text, keyEnd + 1);
    if (code(text, i) !== COLON) return undefined;
    i = skipSpace(text, i + 1);
    const c = code(text, i);
    let value: unknown;
    if (c === QUOTE) {
      const end = plainStringEnd(text, i + 1);
      if (end < 0) return undefined;
      value = text.slice(i + 1, end);
      i = end + 1;
    } else if (c === 116 && text.startsWith("true", i)) {
      value = true;
      i += 4;
    } else if (c === 102 && text.startsWith("false", i)) {
      value = false;
      i += 5;
    } else if (c === 110 && text.startsWith("null", i)) {
      value = null;
      i += 4;
    } else {
      const end = numberEnd(text, i);
      if (end < 0) return undefined;
      // Number() and JSON.parse round the same decimal text to the same double.
      value = Number(text.slice(i, end));
      i = end;
    }
    // A repeated key keeps its first place and takes the last value, as in JSON.parse.
    out[key] = value;
    i = skipSpace(text, i);
    const next = code(text, i);
    if (next === CLOSE) return skipSpace(text, i + 1) === n ? out : undefined;
    if (next !== COMMA) return undefined;
    i = skipSpace(text, i + 1);
  }
}
