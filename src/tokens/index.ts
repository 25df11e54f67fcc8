/**
 * Token estimation for when a vendor reported no usage (streams without usage,
 * logs without usage). Results carry `estimated: true`.
 *
 * - OpenAI models: tiktoken's WASM encoders, chosen by model prefix (the longest
 *   matching prefix wins, so gpt-4o is o200k_base though gpt-4 is cl100k_base).
 *   Chat overhead as OpenAI documents it: 3 tokens per message, 1 per name,
 *   3 to prime the reply. Images: 85 tokens at low detail, else 85 + 170 per
 *   512 px tile when the size is known (extras.width / extras.height), else 765
 *   (a 1024x1024 image at high detail).
 * - Other models (Anthropic, unknown): about 4 characters per token for
 *   Latin text, 1 token per CJK character; documented, not exact.
 * - Long runs of text are cut into pieces of at most 4000 characters at a
 *   whitespace where possible, so BPE never sees one enormous word (its cost
 *   grows quadratically with the length of a piece).
 * - Encoders load lazily, once; freeEncoders() releases them. If the WASM
 *   cannot load, the approximation is used and a warning is printed once.
 */
import { createRequire } from "node:module";
import type { ContentBlock, Message, UsageMetadata } from "../format/schema.js";

type Encoding = "o200k_base" | "cl100k_base";
interface Encoder {
  /** Special-token text such as "<|endoftext|>" in a prompt is counted as text, never an error (and this skips the special-token scan). */
  encode_ordinary(text: string): { length: number };
  free(): void;
}

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

/** The tiktoken encoding for a model, or undefined when it is not an OpenAI model. */
export function encodingForModel(model: string | undefined): Encoding | undefined {
  if (!model) return undefined;
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

function encoder(enc: Encoding): Encoder | undefined {
  if (wasmBroken) return undefined;
  let e = encoders.get(enc);
  if (e) return e;
  try {
    e = loader(enc);
  } catch (err) {
    wasmBroken = true;
    process.emitWarning(`tracepipe: tiktoken could not load (${(err as Error).message}); token counts are approximated`, "TracepipeWarning");
    return undefined;
  }
  encoders.set(enc, e);
  return e;
}

/** Which encoders are loaded now (for tests and diagnostics). */
export function loadedEncodings(): Encoding[] {
  return [...encoders.keys()];
}

export function freeEncoders(): void {
  for (const e of encoders.values()) e.free();
  encoders.clear();
}

const PIECE = 4000;
const WORD = 256;
const LONG_WORD = /\S{257,}/g;

/**
 * Cut text into pieces BPE handles in linear time: at most PIECE characters,
 * cut at whitespace. A run of more than WORD non-space characters (a base64
 * blob, minified code) comes out as one piece of its own; countTextTokens
 * samples such a word instead of encoding it whole, because BPE's cost grows
 * with the square of a word's length (a 1 MB word would take seconds).
 */
export function pieces(text: string): string[] {
  if (text.length <= WORD) return [text];
  const out: string[] = [];
  let buf = "";
  const pushText = (t: string) => {
    let i = 0;
    while (i < t.length) {
      const room = PIECE - buf.length;
      if (t.length - i <= room) {
        buf += t.slice(i);
        return;
      }
      let end = i + room;
      const ws = t.lastIndexOf(" ", end);
      if (ws > i) end = ws;
      buf += t.slice(i, end);
      out.push(buf);
      buf = "";
      i = end;
    }
  };
  let last = 0;
  for (const m of text.matchAll(LONG_WORD)) {
    pushText(text.slice(last, m.index));
    if (buf) {
      out.push(buf);
      buf = "";
    }
    out.push(m[0]);
    last = m.index + m[0].length;
  }
  pushText(text.slice(last));
  if (buf) out.push(buf);
  return out;
}

const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]/g;

/** The documented approximation for non-OpenAI models. */
export function approximateTokens(text: string): number {
  if (!text) return 0;
  const cjk = text.match(CJK)?.length ?? 0;
  return cjk + Math.ceil((text.length - cjk) / 4);
}

export function countTextTokens(text: string, model?: string): number {
  const enc = encodingForModel(model);
  const e = enc ? encoder(enc) : undefined;
  if (!e) return approximateTokens(text);
  let n = 0;
  for (const p of pieces(text)) n += p.length > WORD && !/\s/.test(p.slice(0, WORD)) ? longWordTokens(p, e) : e.encode_ordinary(p).length;
  return n;
}

/** Tokens of one long word, extrapolated from three exactly encoded samples (start, middle, end). */
function longWordTokens(word: string, e: Encoder): number {
  const at = [0, Math.floor((word.length - WORD) / 2), word.length - WORD];
  let sampled = 0;
  for (const i of at) sampled += e.encode_ordinary(word.slice(i, i + WORD)).length;
  return Math.max(1, Math.round((sampled / (3 * WORD)) * word.length));
}

function imageTokens(b: ContentBlock): number {
  const ex = (b as { extras?: Record<string, unknown> }).extras ?? {};
  if (ex.detail === "low") return 85;
  const w = Number(ex.width);
  const h = Number(ex.height);
  if (w > 0 && h > 0) {
    // Fit in 2048x2048, then the shortest side to 768, then count 512 px tiles.
    let sw = w;
    let sh = h;
    const f1 = Math.min(1, 2048 / Math.max(sw, sh));
    sw *= f1;
    sh *= f1;
    const f2 = Math.min(1, 768 / Math.min(sw, sh));
    sw *= f2;
    sh *= f2;
    return 85 + 170 * Math.ceil(sw / 512) * Math.ceil(sh / 512);
  }
  return 765;
}

function blockText(b: ContentBlock): string {
  switch (b.type) {
    case "text":
    case "reasoning":
      return b.text;
    case "tool_call":
      return `${b.name ?? ""}${JSON.stringify(b.args)}`;
    case "server_tool_call":
      return `${b.name}${JSON.stringify(b.args)}`;
    case "server_tool_result":
      return typeof b.output === "string" ? b.output : JSON.stringify(b.output ?? "");
    default:
      return "";
  }
}

function contentTokens(m: Message, model: string | undefined): number {
  let n = 0;
  for (const b of m.content) n += b.type === "image" ? imageTokens(b) : countTextTokens(blockText(b), model);
  return n;
}

/** Prompt tokens: OpenAI's chat format adds 3 per message and 1 per name around the role and content. */
function promptTokens(messages: readonly Message[], model: string | undefined, openai: boolean): number {
  let n = 0;
  for (const m of messages) {
    if (openai) n += 3 + (m.extras?.name !== undefined ? 1 : 0);
    n += countTextTokens(m.role, model) + contentTokens(m, model);
  }
  return n;
}

export interface EstimateInput {
  model?: string;
  provider?: string;
  inputs: readonly Message[];
  outputs: readonly Message[];
}

export function estimateUsage(opts: EstimateInput): UsageMetadata {
  const openai = encodingForModel(opts.model) !== undefined;
  // +3 primes the reply (`<|start|>assistant<|message|>`).
  const input = promptTokens(opts.inputs, opts.model, openai) + (openai && opts.inputs.length ? 3 : 0);
  let output = 0;
  for (const m of opts.outputs) output += contentTokens(m, opts.model);
  return { input_tokens: input, output_tokens: output, total_tokens: input + output, estimated: true };
}

/** SPEC §2.6: the model for estimation is metadata.trace_model_name, else inputs.model, else inputs.model_name. */
export function resolveModel(run: { extra?: { metadata?: Record<string, unknown> }; inputs?: Record<string, unknown> }): string | undefined {
  const candidates = [run.extra?.metadata?.trace_model_name, run.inputs?.model, run.inputs?.model_name];
  for (const c of candidates) if (typeof c === "string" && c) return c;
  return undefined;
}
