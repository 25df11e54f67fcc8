/**
 * One LangChain message (see records.ts) -> one native message, one rule per field:
 * - the class gives the role: Human -> user, AI -> assistant, System -> system,
 *   Tool -> tool (with its `tool_call_id`), Function -> tool linked to the call it
 *   answers, Chat -> by its `role`; a chunk class reads like the finished message;
 * - `content` through blocks.ts; `tool_calls` (and `invalid_tool_calls`) become
 *   `tool_call` blocks after it, each call once (a v1 message also lists its
 *   calls among its content blocks); a chunk's `tool_call_chunks` are its calls
 *   when it carries no parsed ones;
 * - `usage_metadata` is the native usage (usage.ts);
 * - `additional_kwargs`, `response_metadata` and every other field go to
 *   extras, since nothing is dropped. An older message whose calls sit only in
 *   OpenAI's form inside `additional_kwargs` (`tool_calls`, `function_call`)
 *   still gets its tool_call blocks from there, so its tool results link up.
 */
import type { ContentBlock, Message } from "../../src/format/schema.js";
import { markOrphans, withUnmapped, type Unmapped } from "../common/content.js";
import { expectArray, expectObj, expectString, fail, isObj, type Loc, type Obj, put } from "../common/guards.js";
import { toolCallBlock as openaiToolCall, legacyFunctionCallBlock } from "../openai-chat/tools.js";
import { contentToNative, toolCallBlock } from "./blocks.js";
import { readRecord, type Kind, type LcMessage } from "./records.js";
import { messageUsage } from "./usage.js";

/** Fields the mapping consumes; every other field goes to the message's extras. */
const CONSUMED = new Set([
  "content",
  "type",
  "role",
  "tool_calls",
  "invalid_tool_calls",
  "tool_call_chunks",
  "tool_call_id",
  "usage_metadata",
  "additional_kwargs",
  "response_metadata",
]);

/** Calls without a parsed counterpart wait here for the FunctionMessage that answers them, by name. */
export interface Conversation {
  legacyCalls: Map<string, string[]>;
  /** Position of the message being read, for synthesized ids. */
  index: number;
}

export function newConversation(): Conversation {
  return { legacyCalls: new Map(), index: 0 };
}

function isEmpty(v: unknown): boolean {
  return v === undefined || v === null || (isObj(v) && Object.keys(v).length === 0) || (Array.isArray(v) && v.length === 0);
}

function extrasOf(f: Obj): Obj | undefined {
  let out: Obj | undefined;
  for (const k in f) {
    const v = f[k];
    // What LangChain's own serializer leaves out as the default (`example: false`) carries nothing either.
    if (v === undefined || v === null || (k === "example" && v === false)) continue;
    if (CONSUMED.has(k)) {
      if ((k === "additional_kwargs" || k === "response_metadata") && !isEmpty(v)) put((out ??= {}), k, v);
      continue;
    }
    put((out ??= {}), k, v);
  }
  return out;
}

/** `tool_call_chunks` merged by `index` (strings concatenated, as LangChain merges them): a chunk's calls when it has no parsed ones. */
function mergedChunks(list: unknown[], loc: Loc): Obj[] {
  const byIndex = new Map<unknown, Obj>();
  const out: Obj[] = [];
  for (let i = 0; i < list.length; i++) {
    const c = expectObj(list[i], loc, i);
    const key = c.index ?? `#${i}`;
    const prev = byIndex.get(key);
    if (!prev) {
      const first = { ...c };
      byIndex.set(key, first);
      out.push(first);
      continue;
    }
    for (const f of ["id", "name", "args"]) {
      if (typeof c[f] === "string") prev[f] = typeof prev[f] === "string" ? (prev[f] as string) + (c[f] as string) : c[f];
    }
  }
  return out;
}

/** The assistant's blocks: reasoning kept aside by providers, content, then each tool call once. */
function assistantBlocks(f: Obj, loc: Loc, conv: Conversation, unmapped: Unmapped[]): ContentBlock[] {
  const blocks = contentToNative(f.content, [...loc, "content"], unmapped);
  const ak = isObj(f.additional_kwargs) ? f.additional_kwargs : undefined;
  // DESIGN: `reasoning_content` (compatible vendors) is a reasoning block, first as the model thought it first;
  // so is the Responses API's reasoning item, which ChatOpenAI keeps in `additional_kwargs.reasoning`.
  if (ak && !blocks.some((b) => b.type === "reasoning")) {
    if (typeof ak.reasoning_content === "string" && ak.reasoning_content !== "")
      blocks.unshift({ type: "reasoning", text: ak.reasoning_content });
    else if (isObj(ak.reasoning) && Array.isArray(ak.reasoning.summary)) {
      const text = ak.reasoning.summary
        .map((p) => (isObj(p) && typeof p.text === "string" ? p.text : ""))
        .filter((t) => t)
        .join("\n\n");
      blocks.unshift({ type: "reasoning", text });
    }
  }
  const seen = new Set<string>();
  for (const b of blocks) if (b.type === "tool_call" && b.id !== undefined) seen.add(b.id);
  const add = (b: ContentBlock) => {
    if (b.type === "tool_call" && b.id !== undefined) {
      if (seen.has(b.id)) return;
      seen.add(b.id);
    }
    blocks.push(b);
  };
  let calls = 0;
  for (const key of ["tool_calls", "invalid_tool_calls"] as const) {
    if (f[key] === undefined || f[key] === null) continue;
    const list = expectArray(f[key], loc, key);
    for (let j = 0; j < list.length; j++) {
      const c = expectObj(list[j], loc, key, j);
      add(toolCallBlock(key === "invalid_tool_calls" ? { ...c, type: "invalid_tool_call" } : c, [...loc, key, j]));
      calls++;
    }
  }
  if (calls === 0 && Array.isArray(f.tool_call_chunks) && f.tool_call_chunks.length) {
    // `index` is only how chunks find each other: the finished call has none.
    for (const { index: _index, ...c } of mergedChunks(f.tool_call_chunks, [...loc, "tool_call_chunks"]))
      add(toolCallBlock({ ...c, type: "tool_call" }, [...loc, "tool_call_chunks"]));
    calls++;
  }
  if (calls === 0 && ak) {
    if (Array.isArray(ak.tool_calls))
      for (let j = 0; j < ak.tool_calls.length; j++) add(openaiToolCall(ak.tool_calls[j], [...loc, "additional_kwargs", "tool_calls"], j));
    if (isObj(ak.function_call)) {
      const id = `call_legacy_${conv.index}`;
      add(legacyFunctionCallBlock(ak.function_call, [...loc, "additional_kwargs", "function_call"], id));
      const name = typeof ak.function_call.name === "string" ? ak.function_call.name : "";
      conv.legacyCalls.set(name, [...(conv.legacyCalls.get(name) ?? []), id]);
    }
  }
  return blocks;
}

const CHAT_ROLES: Record<string, Kind> = {
  user: "human",
  human: "human",
  assistant: "ai",
  ai: "ai",
  model: "ai",
  system: "system",
  developer: "developer",
  tool: "tool",
  function: "function",
};

function finish(role: Message["role"], content: ContentBlock[], extras: Obj | undefined, unmapped: Unmapped[]): Message {
  const msg: Message = { role, content };
  const ex = withUnmapped(extras, unmapped);
  if (ex) msg.extras = ex;
  return msg;
}

/** One read record -> a native message. */
export function toNative(rec: LcMessage, loc: Loc, conv: Conversation): Message {
  const f = rec.fields;
  const unmapped: Unmapped[] = [];
  let extras = extrasOf(f);
  let kind = rec.kind;
  if (kind === "chat") {
    // ChatMessage carries a free role: a known one maps, any other reads as the user's words; the role is kept.
    const role = expectString(f.role, loc, "role");
    kind = Object.hasOwn(CHAT_ROLES, role) ? CHAT_ROLES[role]! : "human";
    // A tool result needs the call it answers; a chat message that names none is read as words to the model.
    if (kind === "tool" && typeof f.tool_call_id !== "string") kind = "human";
    extras = { ...extras, vendor_role: role };
  }
  switch (kind) {
    case "human":
      return finish("user", contentToNative(f.content, [...loc, "content"], unmapped), extras, unmapped);
    case "system":
      return finish("system", contentToNative(f.content, [...loc, "content"], unmapped), extras, unmapped);
    case "developer":
      return finish("system", contentToNative(f.content, [...loc, "content"], unmapped), { vendor_role: "developer", ...extras }, unmapped);
    case "ai": {
      const msg = finish("assistant", assistantBlocks(f, loc, conv, unmapped), extras, unmapped);
      const usage = messageUsage(f.usage_metadata, [...loc, "usage_metadata"]);
      if (usage) msg.usage_metadata = usage;
      return msg;
    }
    case "tool": {
      const msg = finish("tool", contentToNative(f.content, [...loc, "content"], unmapped), extras, unmapped);
      msg.tool_call_id = expectString(f.tool_call_id, loc, "tool_call_id");
      return msg;
    }
    case "function": {
      // A legacy function result: it answers the oldest open call of its name (DESIGN's synthesized ids).
      const name = typeof f.name === "string" ? f.name : "";
      const msg = finish(
        "tool",
        contentToNative(f.content, [...loc, "content"], unmapped),
        { vendor_role: "function", ...extras },
        unmapped,
      );
      msg.tool_call_id = conv.legacyCalls.get(name)?.shift() ?? `call_legacy_orphan_${conv.index}`;
      return msg;
    }
    case "remove":
      // LangGraph's instruction to drop a message from the state: no words of anyone's, kept as it came.
      return finish("system", [], { langchain_type: "remove", ...extras }, unmapped);
    default:
      return fail(loc, `unsupported message kind ${JSON.stringify(kind)}`, "unsupported_message");
  }
}

/** A conversation (a list of records of any writing) -> native messages, tool results linked or marked orphans. */
export function messagesToNative(list: readonly unknown[], loc: Loc, conv: Conversation = newConversation(), tag?: Obj): Message[] {
  const out: Message[] = [];
  for (let i = 0; i < list.length; i++) {
    const mloc = [...loc, i];
    const msg = toNative(readRecord(list[i], mloc), mloc, conv);
    if (tag) msg.extras = { ...msg.extras, ...tag };
    out.push(msg);
    conv.index++;
  }
  return out;
}

export { markOrphans };
