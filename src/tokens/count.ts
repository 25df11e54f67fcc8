/**
 * Tokens in one string, in time linear in its length, never throwing.
 *
 * - OpenAI models: tiktoken, exactly, on the chunks split() cuts; a run longer
 *   than RUN characters is counted in RUN-sized slices, all of them when there
 *   are at most SAMPLES, else SAMPLES slices spread evenly over the run and
 *   extrapolated by length (a 10 MB base64 blob costs as much as a 4 KB one).
 * - Other models (Anthropic, unknown): about 4 characters per token for
 *   Latin text, 1 token per CJK character; documented, not exact.
 */
import { dropEncoder, encoder, encodingForModel, type Encoder, type Encoding } from "./encoders.js";
import { isLowSurrogate, RUN, split } from "./split.js";

/** Slices of a long run that are encoded; beyond this the run is sampled. */
const SAMPLES = 16;

function isCjk(c: number): boolean {
  return (c >= 0x3040 && c <= 0x30ff) || (c >= 0x3400 && c <= 0x4dbf) || (c >= 0x4e00 && c <= 0x9fff) || (c >= 0xac00 && c <= 0xd7af) || (c >= 0xf900 && c <= 0xfaff);
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
  const count = exactCounter(enc, e);
  let n = 0;
  split(text, {
    chunk: (s, end) => (n += count(text.slice(s, end))),
    run: (s, end) => (n += countRun(text, s, end, count)),
  });
  return n;
}

/** encode_ordinary's length; if the encoder throws, this piece and the rest are approximated. */
function exactCounter(enc: Encoding, e: Encoder): (s: string) => number {
  let ok = true;
  return (s) => {
    if (ok) {
      try {
        return e.encode_ordinary(s).length;
      } catch {
        ok = false;
        dropEncoder(enc);
      }
    }
    return approximateTokens(s);
  };
}

/** Tokens of text.slice(start, end), a run longer than RUN, from RUN-sized slices. */
function countRun(text: string, start: number, end: number, count: (s: string) => number): number {
  const len = end - start;
  // A slice boundary never separates the halves of a surrogate pair.
  const sliceEnd = (a: number) => {
    const b = Math.min(a + RUN, end);
    return b < end && isLowSurrogate(text.charCodeAt(b)) ? b + 1 : b;
  };
  if (len <= SAMPLES * RUN) {
    let n = 0;
    for (let a = start; a < end; ) {
      const b = sliceEnd(a);
      n += count(text.slice(a, b));
      a = b;
    }
    return n;
  }
  let tokens = 0;
  let chars = 0;
  for (let k = 0; k < SAMPLES; k++) {
    let a = start + Math.floor((k * (len - RUN)) / (SAMPLES - 1));
    if (isLowSurrogate(text.charCodeAt(a))) a++;
    const b = sliceEnd(a);
    tokens += count(text.slice(a, b));
    chars += b - a;
  }
  return Math.max(1, Math.round((tokens / chars) * len));
}
