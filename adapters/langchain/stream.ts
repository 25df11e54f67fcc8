/**
 * A stream of AI message chunks (`AIMessageChunk` records in any writing, or
 * `ChatGenerationChunk`s holding them) folded as LangChain adds chunks up:
 * text concatenated, list content merged by each block's `index`,
 * `tool_call_chunks` joined (and merged by index when read), usage summed,
 * metadata merged (later values win). The folded chunk then reads like the
 * finished message (messages.ts).
 */
import type { ResponseResult, StreamAccumulator } from "../types.js";
import { expectObj, isObj, type Obj, put } from "../common/guards.js";
import { readRecord, type LcMessage } from "./records.js";
import { generationToNative } from "./outputs.js";

/** Content lists merge as LangChain merges them: blocks with the same `index` (and type) are one block. */
function mergeContent(a: unknown, b: unknown): unknown {
  if (a === undefined || a === null || a === "") return b;
  if (b === undefined || b === null || b === "") return a;
  if (typeof a === "string" && typeof b === "string") return a + b;
  const left = typeof a === "string" ? [{ type: "text", text: a }] : Array.isArray(a) ? a.map((x) => (isObj(x) ? { ...x } : x)) : [a];
  const right = typeof b === "string" ? [{ type: "text", text: b }] : Array.isArray(b) ? b : [b];
  for (const item of right) {
    const same =
      isObj(item) && item.index !== undefined ? left.find((x) => isObj(x) && x.index === item.index && x.type === item.type) : undefined;
    if (isObj(same) && isObj(item)) {
      for (const k in item) {
        const v = item[k];
        if (typeof v === "string" && typeof same[k] === "string" && k !== "type" && k !== "id") put(same, k, (same[k] as string) + v);
        else if (same[k] === undefined || same[k] === null) put(same, k, v);
      }
    } else left.push(isObj(item) ? { ...item } : item);
  }
  return left;
}

function mergeObj(a: unknown, b: unknown): unknown {
  if (!isObj(a)) return b ?? a;
  if (!isObj(b)) return a;
  const out: Obj = { ...a };
  for (const k in b) put(out, k, isObj(out[k]) && isObj(b[k]) ? mergeObj(out[k], b[k]) : (b[k] ?? out[k]));
  return out;
}

/** Usage counts add up across chunks (LangChain's own rule), details too. */
function addUsage(a: unknown, b: unknown): unknown {
  if (!isObj(a)) return b;
  if (!isObj(b)) return a;
  const out: Obj = { ...a };
  for (const k in b) {
    const x = out[k];
    const y = b[k];
    put(out, k, typeof x === "number" && typeof y === "number" ? x + y : isObj(x) && isObj(y) ? addUsage(x, y) : (y ?? x));
  }
  return out;
}

function fold(acc: Obj, f: Obj): void {
  for (const k in f) {
    const v = f[k];
    if (v === undefined || v === null) continue;
    switch (k) {
      case "content":
        acc.content = mergeContent(acc.content, v);
        break;
      case "tool_call_chunks":
      case "tool_calls":
      case "invalid_tool_calls":
        acc[k] = [...(Array.isArray(acc[k]) ? acc[k] : []), ...(Array.isArray(v) ? v : [v])];
        break;
      case "usage_metadata":
        acc.usage_metadata = addUsage(acc.usage_metadata, v);
        break;
      case "additional_kwargs":
      case "response_metadata":
        acc[k] = mergeObj(acc[k], v);
        break;
      default:
        if (acc[k] === undefined || acc[k] === "") acc[k] = v;
    }
  }
}

/** A chunk: the message record itself, or a generation chunk holding it (its info merged into response_metadata's neighbour). */
function chunkRecord(chunk: unknown, i: number): { rec: LcMessage; info?: Obj } {
  const c = expectObj(chunk, [i]);
  if ("message" in c && !("lc" in c)) {
    const info = isObj(c.generation_info) ? c.generation_info : isObj(c.generationInfo) ? c.generationInfo : undefined;
    return { rec: readRecord(c.message, [i, "message"]), info };
  }
  return { rec: readRecord(c, [i]) };
}

function hasToken(f: Obj): boolean {
  const c = f.content;
  if (typeof c === "string") return c !== "";
  if (
    Array.isArray(c) &&
    c.some((b) => (typeof b === "string" ? b !== "" : isObj(b) && (b.text || b.reasoning || b.args || b.type === "tool_call_chunk")))
  )
    return true;
  return Array.isArray(f.tool_call_chunks) && f.tool_call_chunks.length > 0;
}

export function createStreamAccumulator(): StreamAccumulator {
  const acc: Obj = {};
  let info: Obj | undefined;
  let first = true;
  let n = 0;
  return {
    push(chunk: unknown): boolean {
      const { rec, info: gi } = chunkRecord(chunk, n++);
      if (gi) info = mergeObj(info, gi) as Obj;
      fold(acc, rec.fields);
      if (first && hasToken(rec.fields)) {
        first = false;
        return true;
      }
      return false;
    },
    result(): ResponseResult {
      const fields: Obj = { ...acc };
      // Parsed calls of single chunks are partial; the joined chunks are the calls.
      if (Array.isArray(fields.tool_call_chunks) && fields.tool_call_chunks.length) delete fields.tool_calls;
      const gen = { message: { type: "AIMessageChunk", data: fields }, generation_info: info };
      const read = generationToNative(gen, []);
      const result: ResponseResult = { messages: [read.message] };
      if (read.model) result.trace_model_name = read.model;
      if (read.provider) result.trace_provider = read.provider;
      if (read.stop) result.stop_reason = read.stop;
      if (read.message.usage_metadata) result.usage_metadata = read.message.usage_metadata;
      return result;
    },
  };
}

export function normalizeStream(chunks: readonly unknown[]): ResponseResult {
  const acc = createStreamAccumulator();
  for (const c of chunks) acc.push(c);
  return acc.result();
}
