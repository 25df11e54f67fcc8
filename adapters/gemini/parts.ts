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
import { describe, expectObj, fail, isObj, leftovers, optString, type Loc, type Obj } from "../common/guards.js";
import { sniffMime } from "../common/mime.js";

/** Part fields that carry the data; a part with none of them is one we do not know. */
const DATA_KEYS = ["text", "inlineData", "fileData", "functionCall", "functionResponse", "executableCode", "codeExecutionResult", "toolCall", "toolResponse"] as const;
/** Part fields every mapping consumes (the data key is added per case). */
const K_PART_COMMON = ["thought", "thoughtSignature"];

/**
 * Ids for calls the API gave none. The Gemini API matches a `functionResponse`
 * to its `functionCall` by name (ids are optional and often absent), so a call
 * without an id gets a deterministic one, derived from its position, and each
 * later response without an id takes the oldest unanswered call of its name.
 * Code execution results answer the latest unanswered `executableCode`, and
 * server `toolResponse`s the latest unanswered `toolCall`, the same way.
 */
export class CallIds {
  private readonly byName = new Map<string, string[]>();
  private readonly code: string[] = [];
  private readonly server: string[] = [];

  /** `prefix` keeps ids of different records' parts apart: `3_1` is part 1 of content 3, `c0_2` part 2 of candidate 0. */
  constructor(private readonly prefix = "") {}

  synth(kind: string, where: string): string {
    return `gemini_${kind}_${this.prefix}${where}`;
  }

  callMade(name: string, id: string): void {
    const q = this.byName.get(name);
    if (q) q.push(id);
    else this.byName.set(name, [id]);
  }

  /** The call a response answers: its own id when given (and that call is no longer pending), else the oldest pending call of that name. */
  answer(name: string, id: string | undefined): string | undefined {
    const q = this.byName.get(name);
    if (id !== undefined) {
      const at = q ? q.indexOf(id) : -1;
      if (at >= 0) q!.splice(at, 1);
      return id;
    }
    return q?.shift();
  }

  codeMade(id: string): void {
    this.code.push(id);
  }

  codeAnswered(id: string | undefined): string | undefined {
    return answerLatest(this.code, id);
  }

  serverMade(id: string): void {
    this.server.push(id);
  }

  serverAnswered(id: string | undefined): string | undefined {
    return answerLatest(this.server, id);
  }
}

function answerLatest(list: string[], id: string | undefined): string | undefined {
  if (id !== undefined) {
    const at = list.indexOf(id);
    if (at >= 0) list.splice(at, 1);
    return id;
  }
  return list.pop();
}

/** What one part becomes: blocks for the current message, a tool message of its own, or nothing we know. */
export type PartResult = { blocks: ContentBlock[] } | { tool: Message } | undefined;

function withExtras<T extends ContentBlock>(block: T, extras: Obj | undefined): T {
  if (extras && Object.keys(extras).length) (block as { extras?: Obj }).extras = { ...(block as { extras?: Obj }).extras, ...extras };
  return block;
}

/** The part's metadata (everything but its data field), `thoughtSignature` renamed to `signature`. */
function partExtras(p: Obj, dataKey: string): Obj | undefined {
  const known = new Set([...K_PART_COMMON, dataKey]);
  let out = leftovers(p, known);
  if (typeof p.thoughtSignature === "string") out = { signature: p.thoughtSignature, ...out };
  // `thought: true` on a non-text part has no native home of its own.
  if (p.thought !== undefined && p.thought !== null && dataKey !== "text") out = { ...out, thought: p.thought };
  return out;
}

export function mediaKind(mime: string | undefined): MediaBlock["type"] {
  const m = (mime ?? "").toLowerCase();
  if (m.startsWith("image/")) return "image";
  if (m.startsWith("audio/")) return "audio";
  if (m.startsWith("video/")) return "video";
  return "file";
}

function inlineBlock(v: unknown, loc: Loc): MediaBlock {
  const d = expectObj(v, loc);
  const data = d.data;
  if (typeof data !== "string") fail([...loc, "data"], `expected a base64 string, got ${describe(data)}`, "string_type");
  const named = optString(d.mimeType, loc, "mimeType");
  // validate requires a MIME type with base64; bytes the sender did not label are sniffed.
  const mime = named ?? sniffMime(data);
  const block: MediaBlock = { type: mediaKind(mime), base64: data, mime_type: mime };
  return withExtras(block, leftovers(d, new Set(["data", "mimeType"])));
}

function fileBlock(v: unknown, loc: Loc): MediaBlock {
  const d = expectObj(v, loc);
  const uri = d.fileUri;
  if (typeof uri !== "string") fail([...loc, "fileUri"], `expected a string, got ${describe(uri)}`, "string_type");
  const mime = optString(d.mimeType, loc, "mimeType");
  const block: MediaBlock = { type: mediaKind(mime), url: uri };
  if (mime !== undefined) block.mime_type = mime;
  return withExtras(block, leftovers(d, new Set(["fileUri", "mimeType"])));
}

/** `functionResponse.response` -> the tool message's content: JSON text, as other adapters write structured results. */
function responseText(v: unknown): ContentBlock[] {
  if (v === undefined || v === null) return [];
  if (typeof v === "string") return [{ type: "text", text: v }];
  return [{ type: "text", text: JSON.stringify(v) }];
}

const K_FN_CALL = new Set(["id", "name", "args"]);
const K_FN_RESPONSE = new Set(["id", "name", "response", "parts"]);
const K_CODE = new Set(["id", "language", "code"]);
const K_CODE_RESULT = new Set(["id", "outcome", "output"]);
const K_TOOL_CALL = new Set(["id", "toolType", "args"]);
const K_TOOL_RESPONSE = new Set(["id", "toolType", "response"]);

/** The native name of a server tool type: `GOOGLE_SEARCH_WEB` -> `google_search_web`. */
function serverToolName(t: unknown): string {
  return typeof t === "string" && t !== "" ? t.toLowerCase() : "server_tool";
}

/** One part. `where` is its position for synthesized ids (`<content>_<part>`). */
export function partToNative(raw: unknown, loc: Loc, where: string, ids: CallIds): PartResult {
  if (typeof raw === "string") return { blocks: [{ type: "text", text: raw }] };
  const p = expectObj(raw, loc);
  const key = DATA_KEYS.find((k) => p[k] !== undefined && p[k] !== null);
  switch (key) {
    case "text": {
      if (typeof p.text !== "string") fail([...loc, "text"], `expected a string, got ${describe(p.text)}`, "string_type");
      const block: ContentBlock = p.thought === true ? { type: "reasoning", text: p.text } : { type: "text", text: p.text };
      let ex = partExtras(p, "text");
      // `thought: false` is the default said out loud; anything else is kept.
      if (p.thought !== undefined && p.thought !== true && p.thought !== false) ex = { ...ex, thought: p.thought };
      return { blocks: [withExtras(block, ex)] };
    }
    case "inlineData":
      return { blocks: [withExtras(inlineBlock(p.inlineData, [...loc, "inlineData"]), partExtras(p, key))] };
    case "fileData":
      return { blocks: [withExtras(fileBlock(p.fileData, [...loc, "fileData"]), partExtras(p, key))] };
    case "functionCall": {
      const floc = [...loc, "functionCall"];
      const fc = expectObj(p.functionCall, floc);
      const name = optString(fc.name, floc, "name");
      const given = optString(fc.id, floc, "id");
      const id = given ?? ids.synth("call", where);
      ids.callMade(name ?? "", id);
      const parsed = parseToolArgs(fc.args);
      const block: ContentBlock = { type: "tool_call", id, args: parsed.args };
      if (name !== undefined) block.name = name;
      let ex: Obj | undefined = { ...leftovers(fc, K_FN_CALL), ...parsed.extras, ...partExtras(p, key) };
      if (given === undefined) ex = { ...ex, id_synthesized: true };
      return { blocks: [withExtras(block, ex)] };
    }
    case "functionResponse": {
      const floc = [...loc, "functionResponse"];
      const fr = expectObj(p.functionResponse, floc);
      const name = optString(fr.name, floc, "name");
      const given = optString(fr.id, floc, "id");
      const linked = ids.answer(name ?? "", given);
      const content = responseText(fr.response);
      if (fr.parts !== undefined && fr.parts !== null) {
        if (!Array.isArray(fr.parts)) fail([...floc, "parts"], `expected an array, got ${describe(fr.parts)}`, "list_type");
        fr.parts.forEach((fp, j) => {
          const ploc = [...floc, "parts", j];
          const o = expectObj(fp, ploc);
          if (isObj(o.inlineData)) content.push(withExtras(inlineBlock(o.inlineData, [...ploc, "inlineData"]), leftovers(o, new Set(["inlineData"]))));
          else if (isObj(o.fileData)) content.push(withExtras(fileBlock(o.fileData, [...ploc, "fileData"]), leftovers(o, new Set(["fileData"]))));
          else content.push({ type: "text", text: JSON.stringify(o), extras: { unmapped_part: true } });
        });
      }
      const tool: Message = { role: "tool", content, tool_call_id: linked ?? ids.synth("orphan", where) };
      const ex: Obj = { ...leftovers(fr, K_FN_RESPONSE), ...partExtras(p, key) };
      if (name !== undefined) ex.name = name;
      // The API's convention: an `error` key (instead of `output`) reports a failed call.
      if (isObj(fr.response) && fr.response.error !== undefined && fr.response.output === undefined) ex.is_error = true;
      if (Object.keys(ex).length) tool.extras = ex;
      return { tool };
    }
    case "executableCode": {
      const cloc = [...loc, "executableCode"];
      const c = expectObj(p.executableCode, cloc);
      const given = optString(c.id, cloc, "id");
      const id = given ?? ids.synth("code", where);
      ids.codeMade(id);
      const args: Obj = {};
      if (c.language !== undefined) args.language = c.language;
      if (c.code !== undefined) args.code = c.code;
      let ex: Obj | undefined = { ...leftovers(c, K_CODE), ...partExtras(p, key) };
      if (given === undefined) ex = { ...ex, id_synthesized: true };
      return { blocks: [withExtras({ type: "server_tool_call", id, name: "code_execution", args }, ex)] };
    }
    case "codeExecutionResult": {
      const rloc = [...loc, "codeExecutionResult"];
      const r = expectObj(p.codeExecutionResult, rloc);
      const given = optString(r.id, rloc, "id");
      const callId = ids.codeAnswered(given) ?? ids.synth("code", where);
      const block: ContentBlock = { type: "server_tool_result", tool_call_id: callId, status: r.outcome === "OUTCOME_OK" ? "success" : "error" };
      if (r.output !== undefined) block.output = r.output;
      const ex: Obj = { ...leftovers(r, K_CODE_RESULT), ...partExtras(p, key) };
      if (r.outcome !== undefined) ex.outcome = r.outcome;
      return { blocks: [withExtras(block, ex)] };
    }
    case "toolCall": {
      const tloc = [...loc, "toolCall"];
      const t = expectObj(p.toolCall, tloc);
      const given = optString(t.id, tloc, "id");
      const id = given ?? ids.synth("server", where);
      ids.serverMade(id);
      const parsed = parseToolArgs(t.args);
      let ex: Obj | undefined = { ...leftovers(t, K_TOOL_CALL), ...parsed.extras, ...partExtras(p, key) };
      if (t.toolType !== undefined) ex = { ...ex, tool_type: t.toolType };
      if (given === undefined) ex = { ...ex, id_synthesized: true };
      return { blocks: [withExtras({ type: "server_tool_call", id, name: serverToolName(t.toolType), args: parsed.args }, ex)] };
    }
    case "toolResponse": {
      const tloc = [...loc, "toolResponse"];
      const t = expectObj(p.toolResponse, tloc);
      const given = optString(t.id, tloc, "id");
      const callId = ids.serverAnswered(given) ?? ids.synth("server", where);
      const block: ContentBlock = { type: "server_tool_result", tool_call_id: callId, status: "success" };
      if (t.response !== undefined) block.output = t.response;
      let ex: Obj | undefined = { ...leftovers(t, K_TOOL_RESPONSE), ...partExtras(p, key) };
      if (t.toolType !== undefined) ex = { ...ex, tool_type: t.toolType };
      return { blocks: [withExtras(block, ex)] };
    }
    default:
      return undefined;
  }
}
