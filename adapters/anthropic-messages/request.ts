/** Anthropic Messages request body -> native messages + invocation params. */
import type { RequestResult } from "../types.js";
import type { ContentBlock, Message } from "../../src/format/schema.js";
import { expectArray, expectObj, expectString, fail, isObj, leftovers, type Loc, type Obj } from "../common/guards.js";
import { blockToNative, contentToNative } from "./blocks.js";

const K_MSG = new Set(["role", "content"]);
const K_TOOL_RESULT = new Set(["type", "tool_use_id", "content", "is_error"]);

function systemMessage(system: unknown): Message | undefined {
  if (system === undefined || system === null) return undefined;
  if (typeof system === "string") return { role: "system", content: [{ type: "text", text: system }] };
  return { role: "system", content: contentToNative(system, ["system"]) };
}

/** DESIGN: each tool_result becomes its own `tool` message; `is_error` -> extras.is_error. */
function toolResultMessage(b: Obj, loc: Loc): Message {
  const id = expectString(b.tool_use_id, loc, "tool_use_id");
  const content = b.content === undefined || b.content === null ? [] : contentToNative(b.content, [...loc, "content"]);
  const msg: Message = { role: "tool", content, tool_call_id: id };
  const extras: Obj = { ...leftovers(b, K_TOOL_RESULT) };
  if (b.is_error !== undefined) extras.is_error = b.is_error;
  if (Object.keys(extras).length) msg.extras = extras;
  return msg;
}

/**
 * A user turn may mix tool_result blocks with other blocks. Order is kept:
 * consecutive ordinary blocks form one user message, each tool_result its own
 * tool message, in the order they appear.
 */
function userTurn(m: Obj, loc: Loc, out: Message[]): void {
  const extras = leftovers(m, K_MSG);
  if (!Array.isArray(m.content)) {
    const msg: Message = { role: "user", content: contentToNative(m.content, [...loc, "content"]) };
    if (extras) msg.extras = extras;
    out.push(msg);
    return;
  }
  let pending: ContentBlock[] | undefined;
  const flush = () => {
    if (!pending) return;
    const msg: Message = { role: "user", content: pending };
    if (extras) msg.extras = extras;
    out.push(msg);
    pending = undefined;
  };
  const blocks = m.content;
  for (let j = 0; j < blocks.length; j++) {
    const b = blocks[j];
    const bloc = [...loc, "content", j];
    if (isObj(b) && b.type === "tool_result") {
      flush();
      out.push(toolResultMessage(b, bloc));
    } else {
      (pending ??= []).push(blockToNative(b, bloc));
    }
  }
  flush();
  if (blocks.length === 0) out.push(extras ? { role: "user", content: [], extras } : { role: "user", content: [] });
}

export function normalizeMessages(raw: unknown, system?: unknown): Message[] {
  const list = expectArray(raw, ["messages"]);
  const out: Message[] = [];
  const sys = systemMessage(system);
  if (sys) out.push(sys);
  for (let i = 0; i < list.length; i++) {
    const loc = ["messages", i];
    const m = expectObj(list[i], loc);
    if (m.role === "user") userTurn(m, loc, out);
    else if (m.role === "assistant") {
      const msg: Message = { role: "assistant", content: contentToNative(m.content, [...loc, "content"]) };
      const extras = leftovers(m, K_MSG);
      if (extras) msg.extras = extras;
      out.push(msg);
    } else fail([...loc, "role"], `unsupported role ${JSON.stringify(m.role)}; expected user or assistant`, "unsupported_role");
  }
  return out;
}

export function normalizeRequest(request: unknown): RequestResult {
  const body = expectObj(request, []);
  const messages = normalizeMessages(body.messages, body.system);
  const invocation_params: Obj = {};
  for (const k in body) if (k !== "messages" && k !== "system" && k !== "model" && body[k] !== undefined) invocation_params[k] = body[k];
  const result: RequestResult = { messages, invocation_params, trace_provider: "anthropic" };
  if (typeof body.model === "string") result.trace_model_name = body.model;
  return result;
}
