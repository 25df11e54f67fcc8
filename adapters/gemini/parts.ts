/**
 * Gemini `Part`s -> native content blocks. A part is an object with one data
 * field (`text`, `inlineData`, `fileData`, `functionCall`, `functionResponse`,
 * `executableCode`, `codeExecutionResult`, `toolCall`, `toolResponse`) plus
 * per-part metadata (`thought`, `thoughtSignature`, `videoMetadata`,
 * `mediaResolution`, `partMetadata`, ...). The SDK also accepts a bare string
 * for a text part.
 *
 * | part | native |
 * |---|---|
 * | `text` | text |
 * | `text` + `thought: true` | reasoning |
 * | `inlineData {mimeType, data}` | image / audio / video / file by MIME, `base64` |
 * | `fileData {fileUri, mimeType}` | image / audio / video / file by MIME, `url` |
 * | `functionCall {id?, name, args}` | tool_call (id synthesized when absent) |
 * | `functionResponse {id?, name, response}` | a `tool` message (see request.ts) |
 * | `executableCode {language, code}` | server_tool_call `code_execution` |
 * | `codeExecutionResult {outcome, output}` | server_tool_result (`OUTCOME_OK` -> success) |
 * | `toolCall {id, toolType, args}` | server_tool_call named by the tool type |
 * | `toolResponse {id, toolType, response}` | server_tool_result |
 * | anything else | the message's `extras.unmapped_content` |
 *
 * `thoughtSignature` (on any part) -> the block's `extras.signature`; other
 * metadata fields go to the block's extras as they are.
 */
import type { ContentBlock, MediaBlock, Message } from "../../src/format/schema.js";
import { parseToolArgs } from "../common/args.js";
import {
  describe,
  expectObj,
  fail,
  isObj,
  leftoversBut,
  optString,
  type Key,
  type Loc,
  type Obj,
  jsonText,
  put,
} from "../common/guards.js";
import { hasKeys, layOver, withExtras } from "../common/extras.js";
import { sniffMime } from "../common/mime.js";
import type { CallIds } from "./ids.js";

export { CallIds } from "./ids.js";

/** Part fields that carry the data, in the order they are looked for; a part with none of them is one we do not know. */
type DataKey =
  | "text"
  | "inlineData"
  | "fileData"
  | "functionCall"
  | "functionResponse"
  | "executableCode"
  | "codeExecutionResult"
  | "toolCall"
  | "toolResponse";

/**
 * What one part became: `true` when its blocks went into the caller's list, a
 * `tool` message of its own (a function response), or `false` for a part we do
 * not know. No wrapper object per part: this runs for every part of every record.
 */
export type PartResult = boolean | Message;

/** `parent` + `key`, built only on the way to an error (key undefined: the part sits at `parent` itself). */
function locOf(parent: Loc, key: Key | undefined, ...rest: Key[]): Loc {
  return key === undefined ? [...parent, ...rest] : [...parent, key, ...rest];
}

/** The object at `parent` + `key` + `field`; the location is built only for an error. */
function objAt(v: unknown, parent: Loc, key: Key | undefined, field: string): Obj {
  return isObj(v) ? v : expectObj(v, locOf(parent, key, field));
}

/** An optional string `k` of the object at `parent` + `key` + `field`; the location is built only for an error. */
function strAt(v: unknown, parent: Loc, key: Key | undefined, field: string, k: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  return typeof v === "string" ? v : optString(v, locOf(parent, key, field), k);
}

/**
 * The part's metadata (everything but its data field), `thoughtSignature`
 * renamed to `signature` and written first. One pass over the part's keys, no
 * set of known keys built per part.
 */
function partExtras(p: Obj, dataKey: string): Obj | undefined {
  let out: Obj | undefined;
  if (typeof p.thoughtSignature === "string") out = { signature: p.thoughtSignature };
  for (const k in p) {
    if (k === dataKey || k === "thought" || k === "thoughtSignature") continue;
    const v = p[k];
    if (v !== undefined) put((out ??= {}), k, v);
  }
  // `thought: true` on a non-text part has no native home of its own.
  if (p.thought !== undefined && p.thought !== null && dataKey !== "text") (out ??= {}).thought = p.thought;
  return out;
}

export function mediaKind(mime: string | undefined): MediaBlock["type"] {
  const m = (mime ?? "").toLowerCase();
  if (m.startsWith("image/")) return "image";
  if (m.startsWith("audio/")) return "audio";
  if (m.startsWith("video/")) return "video";
  return "file";
}

/** `v` sits at `parent` + `k1` + `k2`; the location is built only for an error. */
function inlineBlock(v: unknown, parent: Loc, k1: Key | undefined, k2: Key): MediaBlock {
  const d = isObj(v) ? v : expectObj(v, locOf(parent, k1), k2);
  const data = d.data;
  if (typeof data !== "string") fail(locOf(parent, k1, k2, "data"), `expected a base64 string, got ${describe(data)}`, "string_type");
  const named = d.mimeType === undefined || d.mimeType === null ? undefined : optString(d.mimeType, locOf(parent, k1, k2), "mimeType");
  // validate requires a MIME type with base64; bytes the sender did not label are sniffed.
  const mime = named ?? sniffMime(data);
  const block: MediaBlock = { type: mediaKind(mime), base64: data, mime_type: mime };
  const ex = leftoversBut(d, "data", "mimeType");
  if (ex) block.extras = ex;
  return block;
}

function fileBlock(v: unknown, parent: Loc, k1: Key | undefined, k2: Key): MediaBlock {
  const d = isObj(v) ? v : expectObj(v, locOf(parent, k1), k2);
  const uri = d.fileUri;
  if (typeof uri !== "string") fail(locOf(parent, k1, k2, "fileUri"), `expected a string, got ${describe(uri)}`, "string_type");
  const mime = d.mimeType === undefined || d.mimeType === null ? undefined : optString(d.mimeType, locOf(parent, k1, k2), "mimeType");
  const block: MediaBlock = { type: mediaKind(mime), url: uri };
  if (mime !== undefined) block.mime_type = mime;
  const ex = leftoversBut(d, "fileUri", "mimeType");
  if (ex) block.extras = ex;
  return block;
}

/** `functionResponse.response` -> the tool message's content: JSON text, as other adapters write structured results. */
function responseText(v: unknown, where: () => Loc): ContentBlock[] {
  if (v === undefined || v === null) return [];
  if (typeof v === "string") return [{ type: "text", text: v }];
  return [{ type: "text", text: jsonText(v, where) }];
}

/** The native name of a server tool type: `GOOGLE_SEARCH_WEB` -> `google_search_web`. */
function serverToolName(t: unknown): string {
  return typeof t === "string" && t !== "" ? t.toLowerCase() : "server_tool";
}

/**
 * The part's data field: the first of DataKey's members it holds. Written out as
 * named loads (in DataKey's order), which stay monomorphic, where a loop over the
 * key list would make one generic keyed load per key per part.
 */
function dataKeyOf(p: Obj): DataKey | undefined {
  if (p.text !== undefined && p.text !== null) return "text";
  if (p.inlineData !== undefined && p.inlineData !== null) return "inlineData";
  if (p.fileData !== undefined && p.fileData !== null) return "fileData";
  if (p.functionCall !== undefined && p.functionCall !== null) return "functionCall";
  if (p.functionResponse !== undefined && p.functionResponse !== null) return "functionResponse";
  if (p.executableCode !== undefined && p.executableCode !== null) return "executableCode";
  if (p.codeExecutionResult !== undefined && p.codeExecutionResult !== null) return "codeExecutionResult";
  if (p.toolCall !== undefined && p.toolCall !== null) return "toolCall";
  if (p.toolResponse !== undefined && p.toolResponse !== null) return "toolResponse";
  return undefined;
}

/** Tool arguments: an object as it came (the common case, no wrapper), else parseToolArgs' reading. */
function toolArgs(raw: unknown): { args: Obj; extras?: Obj } {
  return isObj(raw) ? { args: raw } : parseToolArgs(raw);
}

/** One handler per data field: the part's block, or (a function response) a `tool` message of its own. */
type PartHandler = (p: Obj, parent: Loc, key: Key | undefined, turn: number, pos: number, ids: CallIds) => ContentBlock | Message;

const PART_HANDLERS: Record<DataKey, PartHandler> = {
  text: (p, parent, key) => {
    const text = p.text;
    if (typeof text !== "string") fail(locOf(parent, key, "text"), `expected a string, got ${describe(text)}`, "string_type");
    const block: ContentBlock = p.thought === true ? { type: "reasoning", text } : { type: "text", text };
    let ex = partExtras(p, "text");
    // `thought: false` is the default said out loud; anything else is kept.
    if (p.thought !== undefined && p.thought !== true && p.thought !== false) (ex ??= {}).thought = p.thought;
    return withExtras(block, ex, "merge-owned");
  },
  inlineData: (p, parent, key) =>
    withExtras(inlineBlock(p.inlineData, parent, key, "inlineData"), partExtras(p, "inlineData"), "merge-owned"),
  fileData: (p, parent, key) => withExtras(fileBlock(p.fileData, parent, key, "fileData"), partExtras(p, "fileData"), "merge-owned"),
  functionCall: (p, parent, key, turn, pos, ids) => {
    const fc = objAt(p.functionCall, parent, key, "functionCall");
    const name = strAt(fc.name, parent, key, "functionCall", "name");
    const given = strAt(fc.id, parent, key, "functionCall", "id");
    const id = given ?? ids.synth("call", turn, pos);
    ids.callMade(name ?? "", id);
    const parsed = toolArgs(fc.args);
    const block: ContentBlock = { type: "tool_call", id, args: parsed.args };
    if (name !== undefined) block.name = name;
    let ex = layOver(layOver(leftoversBut(fc, "id", "name", "args"), parsed.extras), partExtras(p, "functionCall"));
    if (given === undefined) (ex ??= {}).id_synthesized = true;
    return withExtras(block, ex, "merge-owned");
  },
  functionResponse: (p, parent, key, turn, pos, ids) => {
    const fr = objAt(p.functionResponse, parent, key, "functionResponse");
    const name = strAt(fr.name, parent, key, "functionResponse", "name");
    const given = strAt(fr.id, parent, key, "functionResponse", "id");
    const linked = ids.answer(name ?? "", given);
    const content = responseText(fr.response, () => [...locOf(parent, key, "functionResponse"), "response"]);
    if (fr.parts !== undefined && fr.parts !== null) {
      const floc = locOf(parent, key, "functionResponse");
      if (!Array.isArray(fr.parts)) fail([...floc, "parts"], `expected an array, got ${describe(fr.parts)}`, "list_type");
      for (let j = 0; j < fr.parts.length; j++) {
        const o = expectObj(fr.parts[j], floc, "parts", j);
        if (isObj(o.inlineData))
          content.push(
            withExtras(inlineBlock(o.inlineData, [...floc, "parts"], j, "inlineData"), leftoversBut(o, "inlineData"), "merge-owned"),
          );
        else if (isObj(o.fileData))
          content.push(withExtras(fileBlock(o.fileData, [...floc, "parts"], j, "fileData"), leftoversBut(o, "fileData"), "merge-owned"));
        else content.push({ type: "text", text: jsonText(o, () => [...floc, "parts", j]), extras: { unmapped_part: true } });
      }
    }
    const tool: Message = { role: "tool", content, tool_call_id: linked ?? ids.synth("orphan", turn, pos) };
    let ex = layOver(leftoversBut(fr, "id", "name", "response", "parts"), partExtras(p, "functionResponse"));
    if (name !== undefined) (ex ??= {}).name = name;
    // The API's convention: an `error` key (instead of `output`) reports a failed call.
    if (isObj(fr.response) && fr.response.error !== undefined && fr.response.output === undefined) (ex ??= {}).is_error = true;
    if (ex && hasKeys(ex)) tool.extras = ex;
    return tool;
  },
  executableCode: (p, parent, key, turn, pos, ids) => {
    const c = objAt(p.executableCode, parent, key, "executableCode");
    const given = strAt(c.id, parent, key, "executableCode", "id");
    const id = given ?? ids.synth("code", turn, pos);
    ids.codeMade(id);
    const args: Obj = {};
    if (c.language !== undefined) args.language = c.language;
    if (c.code !== undefined) args.code = c.code;
    let ex = layOver(leftoversBut(c, "id", "language", "code"), partExtras(p, "executableCode"));
    if (given === undefined) (ex ??= {}).id_synthesized = true;
    return withExtras({ type: "server_tool_call", id, name: "code_execution", args }, ex, "merge-owned");
  },
  codeExecutionResult: (p, parent, key, turn, pos, ids) => {
    const r = objAt(p.codeExecutionResult, parent, key, "codeExecutionResult");
    const given = strAt(r.id, parent, key, "codeExecutionResult", "id");
    const callId = ids.codeAnswered(given) ?? ids.synth("code", turn, pos);
    const block: ContentBlock = {
      type: "server_tool_result",
      tool_call_id: callId,
      status: r.outcome === "OUTCOME_OK" ? "success" : "error",
    };
    if (r.output !== undefined) block.output = r.output;
    let ex = layOver(leftoversBut(r, "id", "outcome", "output"), partExtras(p, "codeExecutionResult"));
    if (r.outcome !== undefined) (ex ??= {}).outcome = r.outcome;
    return withExtras(block, ex, "merge-owned");
  },
  toolCall: (p, parent, key, turn, pos, ids) => {
    const t = objAt(p.toolCall, parent, key, "toolCall");
    const given = strAt(t.id, parent, key, "toolCall", "id");
    const id = given ?? ids.synth("server", turn, pos);
    ids.serverMade(id);
    const parsed = toolArgs(t.args);
    let ex = layOver(layOver(leftoversBut(t, "id", "toolType", "args"), parsed.extras), partExtras(p, "toolCall"));
    if (t.toolType !== undefined) (ex ??= {}).tool_type = t.toolType;
    if (given === undefined) (ex ??= {}).id_synthesized = true;
    return withExtras({ type: "server_tool_call", id, name: serverToolName(t.toolType), args: parsed.args }, ex, "merge-owned");
  },
  toolResponse: (p, parent, key, turn, pos, ids) => {
    const t = objAt(p.toolResponse, parent, key, "toolResponse");
    const given = strAt(t.id, parent, key, "toolResponse", "id");
    const callId = ids.serverAnswered(given) ?? ids.synth("server", turn, pos);
    const block: ContentBlock = { type: "server_tool_result", tool_call_id: callId, status: "success" };
    if (t.response !== undefined) block.output = t.response;
    let ex = layOver(leftoversBut(t, "id", "toolType", "response"), partExtras(p, "toolResponse"));
    if (t.toolType !== undefined) (ex ??= {}).tool_type = t.toolType;
    return withExtras(block, ex, "merge-owned");
  },
};

/**
 * One part, at `parent` + `key` (key undefined: at `parent` itself). Its blocks
 * are pushed onto `into`. `turn` and `pos` place it for synthesized ids
 * (`<turn>_<pos>`, or `<pos>` when `turn` < 0).
 */
export function partToNative(
  raw: unknown,
  parent: Loc,
  key: Key | undefined,
  turn: number,
  pos: number,
  ids: CallIds,
  into: ContentBlock[],
): PartResult {
  if (typeof raw === "string") {
    into.push({ type: "text", text: raw });
    return true;
  }
  const p = isObj(raw) ? raw : expectObj(raw, locOf(parent, key));
  const dk = dataKeyOf(p);
  if (dk === undefined) return false;
  const out = PART_HANDLERS[dk](p, parent, key, turn, pos, ids);
  if ("role" in out) return out;
  into.push(out);
  return true;
}
