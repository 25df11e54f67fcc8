/**
 * The ways LangChain writes one message down, read into one shape: its kind
 * (the message class) and its fields.
 * - constructor records, `{lc: 1, type: "constructor", id: [...namespace, Class], kwargs}`:
 *   what `toJSON()` (JS, namespace `langchain_core.messages`) and `dumpd` /
 *   `to_json()` (Python, `langchain.schema.messages`) write, and what the tracer sends;
 * - `{type, data}` dicts: Python's `messages_to_dict`;
 * - plain message dicts, `{type, content, ...}` or `{role, content, ...}`, as
 *   `convert_to_messages` accepts them.
 */
import { fail, isObj, type Loc, type Obj } from "../common/guards.js";

export type Kind = "human" | "ai" | "system" | "developer" | "tool" | "chat" | "function" | "remove";

export interface LcMessage {
  kind: Kind;
  /** A `*MessageChunk` class: read like the finished message. */
  chunk: boolean;
  fields: Obj;
}

const CLASSES: Record<string, Kind> = {
  HumanMessage: "human",
  AIMessage: "ai",
  SystemMessage: "system",
  ToolMessage: "tool",
  ChatMessage: "chat",
  FunctionMessage: "function",
  RemoveMessage: "remove",
};
/** `type` values of dicts and of message fields (`human`, `ai`, ...), with the role names `convert_to_messages` also takes. */
const TYPES: Record<string, Kind> = {
  human: "human",
  user: "human",
  ai: "ai",
  assistant: "ai",
  system: "system",
  developer: "developer",
  tool: "tool",
  chat: "chat",
  function: "function",
  remove: "remove",
};

/** The kind of a class name: `AIMessage`, `AIMessageChunk`, ... */
function classKind(name: unknown): { kind: Kind; chunk: boolean } | undefined {
  if (typeof name !== "string") return undefined;
  const chunk = name.endsWith("Chunk");
  const cls = chunk ? name.slice(0, -5) : name;
  return Object.hasOwn(CLASSES, cls) ? { kind: CLASSES[cls]!, chunk } : undefined;
}

/** The kind of a `type` value: `ai`, `human`, ..., or a chunk class name (Python's chunk types are `AIMessageChunk`, ...). */
function kindOf(name: unknown): { kind: Kind; chunk: boolean } | undefined {
  if (typeof name === "string" && Object.hasOwn(TYPES, name)) return { kind: TYPES[name]!, chunk: false };
  return classKind(name);
}

/** A constructor record of a message class. */
export function isConstructorMessage(v: unknown): v is Obj {
  return isObj(v) && v.lc === 1 && v.type === "constructor" && Array.isArray(v.id) && classKind(v.id[v.id.length - 1]) !== undefined;
}

/** A `{type, data}` dict of `messages_to_dict`. */
export function isDictMessage(v: unknown): v is Obj {
  return isObj(v) && isObj(v.data) && kindOf(v.type) !== undefined && !("content" in v) && !("lc" in v);
}

/** A plain `{type, content}` dict with a LangChain type (`human`, `ai`, `AIMessageChunk`, ...); `{role, content}` alone is everyone's, not evidence. */
export function isTypedMessage(v: unknown): v is Obj {
  return isObj(v) && "content" in v && kindOf(v.type) !== undefined;
}

/** Any LangChain-specific message writing (not a plain `{role, content}`). */
export function isLangChainMessage(v: unknown): boolean {
  return isConstructorMessage(v) || isDictMessage(v) || isTypedMessage(v);
}

/** One record of any of the three writings -> its kind and fields; a NormalizeError naming the field otherwise. */
export function readRecord(v: unknown, loc: Loc): LcMessage {
  if (!isObj(v))
    return fail(
      loc,
      `expected a LangChain message (an object), got ${v === null ? "null" : Array.isArray(v) ? "array" : typeof v}`,
      "object_type",
    );
  if ("lc" in v) {
    if (v.type !== "constructor" || !Array.isArray(v.id))
      return fail(
        [...loc, "type"],
        `a serialized LangChain object of type ${JSON.stringify(v.type)} is not a message`,
        "unsupported_message",
      );
    const k = classKind(v.id[v.id.length - 1]);
    if (!k) return fail([...loc, "id"], `${JSON.stringify(v.id.join("."))} is not a LangChain message class`, "unsupported_message");
    const kwargs = v.kwargs === undefined ? {} : v.kwargs;
    if (!isObj(kwargs)) return fail([...loc, "kwargs"], "expected an object", "object_type");
    return { ...k, fields: kwargs };
  }
  if (isObj(v.data) && !("content" in v)) {
    const k = kindOf(v.type);
    if (!k) return fail([...loc, "type"], `unsupported message type ${JSON.stringify(v.type)}`, "unsupported_message");
    return { ...k, fields: v.data };
  }
  // A LangChain `type` names the class (a ChatMessage dump has both `type: "chat"` and its free `role`); else the role does.
  const byType = kindOf(v.type) !== undefined;
  const key = byType || !("role" in v) ? "type" : "role";
  const k = kindOf(v[key]);
  if (!k)
    return fail(
      [...loc, key],
      `unsupported message type ${JSON.stringify(v[key])}; expected human, user, ai, assistant, system, developer, tool, chat, function or a LangChain message class`,
      "unsupported_message",
    );
  const fields: Obj = {};
  for (const f in v) if (f !== key) fields[f] = v[f];
  return { ...k, fields };
}
