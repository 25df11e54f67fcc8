/**
 * tiktoken's pre-tokenizer patterns as JavaScript regular expressions, so that
 * count.ts can cut text into the same pieces tiktoken's BPE sees and count a
 * piece it has seen before without a call into WASM (BPE never merges across
 * pieces, so the tokens of a text are the sum of its pieces' tokens).
 *
 * The pattern strings are the encodings' definitions (pat_str, as shipped in
 * tiktoken/encoders/*.json; a test pins them to the installed package),
 * rewritten where JavaScript differs from the Rust regex tiktoken uses:
 * - `(?i:'s|...)` inline flags (not in Node 20's RegExp) are spelled out;
 * - `\s` means Unicode White_Space in Rust but also matches U+FEFF and not
 *   U+0085 in JavaScript, so it is replaced by the exact White_Space set.
 */
import type { Encoding } from "./encoders.js";

export const PAT_STR: Record<Encoding, string> = {
  o200k_base:
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  cl100k_base:
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};

/** Unicode White_Space, the set Rust's `\s` matches (split.ts's isSpace is the same set). */
const WHITE_SPACE = "\\t\\n\\v\\f\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const CONTRACTIONS = "(?i:'s|'t|'re|'ve|'m|'ll|'d)";
const CONTRACTIONS_JS = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])";

/** Rewrite a tiktoken pat_str for JavaScript's RegExp with the `u` flag. */
export function toJsPattern(pat: string): string {
  const src = pat.split(CONTRACTIONS).join(CONTRACTIONS_JS);
  let out = "";
  let inClass = false;
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c === "\\") {
      const next = src[i + 1];
      if (next === "s") out += inClass ? WHITE_SPACE : `[${WHITE_SPACE}]`;
      else if (next === "S") {
        if (inClass) throw new Error("\\S inside a character class has no rewrite");
        out += `[^${WHITE_SPACE}]`;
      } else out += c + (next ?? "");
      i++;
      continue;
    }
    if (c === "[") inClass = true;
    else if (c === "]") inClass = false;
    out += c;
  }
  return out;
}

const compiled = new Map<Encoding, RegExp>();

/** The global, Unicode-aware JavaScript RegExp equivalent to an encoding's pre-tokenizer. */
export function pretokenizer(enc: Encoding): RegExp {
  let re = compiled.get(enc);
  if (!re) {
    re = new RegExp(toJsPattern(PAT_STR[enc]), "gu");
    compiled.set(enc, re);
  }
  return re;
}
