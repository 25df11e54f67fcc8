/** OpenAI chat-completions request body -> native messages + invocation params. */
import type { RequestResult } from "../types.js";
import type { ContentBlock, Message } from "../../src/format/schema.js";
import {
  describe,
  expectArray,
  expectObj,
  expectString,
  fail,
  leftovers,
  optString,
  type Key,
  type Loc,
  type Obj,
  put,
} from "../common/guards.js";
import { markIfOrphan, noteToolCalls, withUnmapped, type CallIds, type Unmapped } from "../common/content.js";
import { contentToBlocks, textBlock } from "./parts.js";
import { legacyCallId, legacyFunctionCallBlock, toolCallBlock } from "./tools.js";
import { audioBlocks, requestAudioFormat } from "./audio.js";
import { requestResult } from "../common/request.js";

/** The message fields the mapping consumes (`name` is re-added to extras). A switch of string comparisons: it runs for every key of every message. */
function isMessageKey(k: string): boolean {
  switch (k) {
    case "role":
    case "content":
    case "name":
    case "tool_calls":
    case "function_call":
    case "refusal":
    case "audio":
    case "tool_call_id":
    case "reasoning_content":
      return true;
    default:
      return false;
  }
}
const K_AUDIO = new Set(["id", "data", "transcript"]);

function msgExtras(m: Obj, extra?: Obj): Obj | undefined {
  let ex: Obj | undefined;
  for (const k in m) {
    if (isMessageKey(k)) continue;
    const v = m[k];
    if (v !== undefined) put((ex ??= {}), k, v);
  }
  if (m.name !== undefined && m.name !== null) (ex ??= {}).name = m.name;
  if (extra) ex = { ...ex, ...extra };
  return ex;
}

function finish(role: Message["role"], content: ContentBlock[], extras: Obj | undefined, unmapped?: Unmapped[]): Message {
  const msg: Message = { role, content };
  const ex = withUnmapped(extras, unmapped);
  if (ex) msg.extras = ex;
  return msg;
}

/** `parent` + `key` (+ `last`), built only where a location is needed: key undefined means the message sits at `parent` itself. */
function locOf(parent: Loc, key: Key | undefined, last?: Key): Loc {
  // Built by push, not spreads of a rest list: tool calls ask for one per message.
  const loc = parent.slice();
  if (key !== undefined) loc.push(key);
  if (last !== undefined) loc.push(last);
  return loc;
}

/**
 * `list` with `b` added; the first block makes the list, as a literal of one:
 * nearly every assistant message gives one block (its text or its one tool
 * call), and an empty list grows its storage at its first push.
 */
function add(list: ContentBlock[] | undefined, b: ContentBlock): ContentBlock[] {
  if (list === undefined) return [b];
  list.push(b);
  return list;
}

/**
 * Assistant message fields -> blocks, in the order a reader meets them:
 * reasoning, text (content, refusal), audio, then tool calls. The message sits
 * at `parent` + `key` (key undefined: at `parent`); its location is built only
 * for array content, tool calls and errors. `audioFormat` is the request's
 * `audio.format`, for the MIME type of audio bytes.
 */
export function assistantBlocks(
  m: Obj,
  parent: Loc,
  key: Key | undefined,
  messageIndex: number,
  unmapped: Unmapped[],
  audioFormat?: string,
): ContentBlock[] {
  let blocks: ContentBlock[] | undefined;
  if (typeof m.reasoning_content === "string" && m.reasoning_content !== "") {
    blocks = add(blocks, { type: "reasoning", text: m.reasoning_content });
  }
  const content = m.content;
  if (typeof content === "string") blocks = add(blocks, textBlock(content));
  else if (content !== undefined && content !== null) {
    const parts = contentToBlocks(content, locOf(parent, key), "content", unmapped);
    if (blocks === undefined) blocks = parts;
    else for (const b of parts) blocks.push(b);
  }
  if (m.refusal !== undefined && m.refusal !== null) {
    blocks = add(blocks, { type: "text", text: expectString(m.refusal, locOf(parent, key), "refusal"), extras: { refusal: true } });
  }
  if (m.audio !== undefined && m.audio !== null) {
    const loc = locOf(parent, key);
    const a = expectObj(m.audio, loc, "audio");
    const id = optString(a.id, loc, "audio", "id");
    const data = optString(a.data, loc, "audio", "data");
    const transcript = optString(a.transcript, loc, "audio", "transcript");
    if (id === undefined && data === undefined) fail([...loc, "audio", "id"], `expected a string, got ${describe(a.id)}`, "string_type");
    for (const b of audioBlocks({ id, data, transcript, rest: leftovers(a, K_AUDIO) ?? {} }, audioFormat)) blocks = add(blocks, b);
  }
  if (m.tool_calls !== undefined && m.tool_calls !== null) {
    const calls = Array.isArray(m.tool_calls) ? m.tool_calls : expectArray(m.tool_calls, locOf(parent, key), "tool_calls");
    // One location for the list, not one per call.
    const listLoc = locOf(parent, key, "tool_calls");
    for (let j = 0; j < calls.length; j++) blocks = add(blocks, toolCallBlock(calls[j], listLoc, j));
  }
  if (m.function_call !== undefined && m.function_call !== null) {
    blocks = add(blocks, legacyFunctionCallBlock(m.function_call, locOf(parent, key, "function_call"), legacyCallId(messageIndex)));
  }
  return blocks ?? [];
}

/** A message's content as blocks; string content (most messages) needs no location built. */
function messageBlocks(m: Obj, loc: Loc, i: number, unmapped: Unmapped[]): ContentBlock[] {
  return typeof m.content === "string" ? [textBlock(m.content)] : contentToBlocks(m.content, [...loc, i], "content", unmapped);
}

export function normalizeMessages(raw: unknown, loc: Loc = ["messages"], audioFormat?: string): Message[] {
  const list = expectArray(raw, loc);
  const out: Message[] = [];
  // Legacy function calls awaiting their `function` reply, by function name, oldest first (made at first use).
  let pendingLegacy: Map<string, string[]> | undefined;
  // One list for the whole request, emptied per message: withUnmapped copies what it keeps.
  const unmapped: Unmapped[] = [];
  // The ids of the tool calls so far, for telling orphan tool messages (DESIGN); made at the first call.
  let calls: CallIds | undefined;
  for (let i = 0; i < list.length; i++) {
    const m = expectObj(list[i], loc, i);
    const role = m.role;
    // Emptied only when something was kept: setting an array's length is a slow runtime call.
    if (unmapped.length !== 0) unmapped.length = 0;
    switch (role) {
      case "system":
        out.push(finish("system", messageBlocks(m, loc, i, unmapped), msgExtras(m), unmapped));
        break;
      case "developer":
        // DESIGN: developer -> system, remembering the vendor's role.
        out.push(finish("system", messageBlocks(m, loc, i, unmapped), msgExtras(m, { vendor_role: "developer" }), unmapped));
        break;
      case "user":
        out.push(finish("user", messageBlocks(m, loc, i, unmapped), msgExtras(m), unmapped));
        break;
      case "assistant": {
        const msg = finish("assistant", assistantBlocks(m, loc, i, i, unmapped, audioFormat), msgExtras(m), unmapped);
        out.push(msg);
        calls = noteToolCalls(msg.content, calls);
        if (m.function_call !== undefined && m.function_call !== null) {
          const name = (m.function_call as Obj).name;
          const key = typeof name === "string" ? name : "";
          pendingLegacy ??= new Map();
          const q = pendingLegacy.get(key) ?? [];
          q.push(legacyCallId(i));
          pendingLegacy.set(key, q);
        }
        break;
      }
      case "tool": {
        const id = expectString(m.tool_call_id, loc, i, "tool_call_id");
        const msg = finish("tool", messageBlocks(m, loc, i, unmapped), msgExtras(m), unmapped);
        msg.tool_call_id = id;
        markIfOrphan(msg, calls);
        out.push(msg);
        break;
      }
      case "function": {
        // Legacy reply to a function_call: point it at the oldest unanswered call of that name.
        // A call trimmed from the history leaves an orphan (markIfOrphan flags it).
        const name = typeof m.name === "string" ? m.name : "";
        const q = pendingLegacy?.get(name);
        const id = q?.shift() ?? `call_legacy_orphan_${i}`;
        const msg = finish("tool", messageBlocks(m, loc, i, unmapped), msgExtras(m, { vendor_role: "function" }), unmapped);
        msg.tool_call_id = id;
        markIfOrphan(msg, calls);
        out.push(msg);
        break;
      }
      default:
        fail(
          [...loc, i, "role"],
          `unsupported role ${JSON.stringify(role)}; expected system, developer, user, assistant, tool or function`,
          "unsupported_role",
        );
    }
  }
  return out;
}

/** The body fields the messages and the model are read from; the rest are invocation parameters. */
const TAKEN: readonly string[] = ["messages", "model"];

export function normalizeRequest(request: unknown, withParams = true): RequestResult {
  const body = expectObj(request, []);
  const messages = normalizeMessages(body.messages, ["messages"], requestAudioFormat(body));
  return requestResult(messages, body, TAKEN, "openai", body.model, withParams);
}
