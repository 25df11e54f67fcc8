/**
 * A streamed generateContent (`:streamGenerateContent?alt=sse`, or the SDK's
 * generateContentStream) is a sequence of whole GenerateContentResponse
 * chunks, each carrying the next parts of each candidate. Folding them: text
 * parts of the same kind (thought or not) are concatenated until a part of
 * another kind or a thought signature closes them; every other part (function
 * calls, inline data, code) arrives whole and is kept as it came; candidate
 * and response fields take their latest value; usage is the last chunk's that
 * carried it (Gemini's counts are cumulative). The result is built as one
 * response and read by normalizeResponse, at any point (a cancelled stream
 * keeps what arrived). Chunks may use either JSON spelling (spelling.ts).
 */
import type { ResponseResult, StreamAccumulator } from "../types.js";
import { describe, expectObj, fail, isObj, type Obj, put } from "../common/guards.js";
import { readResponse } from "./response.js";
import { readEitherSpelling, RESPONSE, RESPONSE_SCAN } from "./spelling.js";
import { StreamProgress, streamReaders } from "../common/stream.js";

interface PartAcc {
  part: Obj | unknown;
  /** Text pieces of a text part still growing; joined once in result(). */
  pieces?: string[];
  thought?: boolean;
  /** A signature closes a thought: nothing is appended after it. */
  closed?: boolean;
}

interface CandAcc {
  fields: Obj;
  content: Obj;
  hasContent: boolean;
  parts: PartAcc[];
}

const TEXT_KEYS = new Set(["text", "thought", "thoughtSignature"]);

/** A part that is only text (and its thought flag / signature) can be merged with the text before it. */
function plainText(p: unknown): p is Obj & { text: string } {
  if (!isObj(p) || typeof p.text !== "string") return false;
  for (const k in p) if (!TEXT_KEYS.has(k) && p[k] !== undefined) return false;
  return true;
}

export class GeminiStreamAccumulator implements StreamAccumulator {
  private readonly top: Obj = {};
  private usage?: unknown;
  private readonly cands = new Map<number, CandAcc>();
  private readonly progress = new StreamProgress();

  push(chunk: unknown): boolean {
    const ci = this.progress.next();
    return readEitherSpelling(chunk, RESPONSE, RESPONSE_SCAN, (c) => this.fold(c, ci), 1);
  }

  /** One chunk, in lowerCamelCase. */
  private fold(chunk: unknown, ci: number): boolean {
    const c = expectObj(chunk, [ci]);
    let content = false;
    for (const k in c) {
      const v = c[k];
      if (v === undefined || v === null) continue;
      if (k === "usageMetadata") this.usage = v;
      else if (k !== "candidates") put(this.top, k, v);
    }
    if (c.candidates !== undefined && c.candidates !== null) {
      if (!Array.isArray(c.candidates)) fail([ci, "candidates"], `expected an array, got ${describe(c.candidates)}`, "list_type");
      c.candidates.forEach((raw, pos) => {
        const cand = expectObj(raw, [ci, "candidates"], pos);
        if (this.foldCandidate(cand, typeof cand.index === "number" ? cand.index : pos, ci, pos)) content = true;
      });
    }
    return content && this.progress.firstContent();
  }

  private foldCandidate(cand: Obj, index: number, ci: number, pos: number): boolean {
    let acc = this.cands.get(index);
    if (!acc) this.cands.set(index, (acc = { fields: {}, content: {}, hasContent: false, parts: [] }));
    for (const k in cand) if (k !== "content" && cand[k] !== undefined && cand[k] !== null) put(acc.fields, k, cand[k]);
    if (cand.content === undefined || cand.content === null) return false;
    const c = expectObj(cand.content, [ci, "candidates", pos], "content");
    acc.hasContent = true;
    for (const k in c) if (k !== "parts" && c[k] !== undefined && c[k] !== null) put(acc.content, k, c[k]);
    if (c.parts === undefined || c.parts === null) return false;
    if (!Array.isArray(c.parts))
      fail([ci, "candidates", pos, "content", "parts"], `expected an array, got ${describe(c.parts)}`, "list_type");
    let content = false;
    for (const p of c.parts) {
      if (plainText(p)) {
        const thought = p.thought === true;
        const last = acc.parts[acc.parts.length - 1];
        if (last?.pieces && !last.closed && last.thought === thought) last.pieces.push(p.text);
        else acc.parts.push({ part: { ...p }, pieces: [p.text], thought });
        const cur = acc.parts[acc.parts.length - 1]!;
        if (typeof p.thoughtSignature === "string") {
          (cur.part as Obj).thoughtSignature = p.thoughtSignature;
          cur.closed = true;
        }
        if (p.text !== "") content = true;
      } else {
        acc.parts.push({ part: p });
        content = true;
      }
    }
    return content;
  }

  result(): ResponseResult {
    const candidates = [...this.cands.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([, acc]) => {
        const cand: Obj = { ...acc.fields };
        if (acc.hasContent)
          cand.content = {
            ...acc.content,
            parts: acc.parts.map((p) => (p.pieces ? { ...(p.part as Obj), text: p.pieces.join("") } : p.part)),
          };
        return cand;
      });
    const body: Obj = { ...this.top };
    if (candidates.length) body.candidates = candidates;
    if (this.usage !== undefined) body.usageMetadata = this.usage;
    return readResponse(body);
  }
}

export const { createStreamAccumulator, normalizeStream } = streamReaders(
  () => new GeminiStreamAccumulator(),
  "GenerateContentResponse chunks",
);
