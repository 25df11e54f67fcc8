/** Anthropic Messages request body -> native messages + invocation params. */
import type { RequestResult } from "../types.js";
import type { ContentBlock, Message } from "../../src/format/schema.js";
import { expectArray, expectObj, expectString, fail, isObj, leftovers, leftoversBut, type Loc, type Obj } from "../common/guards.js";
import { markOrphans, withUnmapped, type Unmapped } from "../common/content.js";
import { contentToNative, pushBlock } from "./blocks.js";
import { requestResult } from "../common/request.js";

const K_TOOL_RESULT = new Set(["type", "tool_use_id", "content", "is_error"]);

function message(role: Message["role"], content: ContentBlock[], extras: Obj | undefined, unmapped: Unmapped[]): Message {
  const msg: Message = { role, content };
  const ex = withUnmapped(extras, unmapped);
  if (ex) msg.extras = ex;
  return msg;
}

function systemMessage(system: unknown): Message | undefined {
  if (system === undefined || system === null) return undefined;
  if (typeof system === "string") return { role: "system", content: [{ type: "text", text: system }] };
  const unmapped: Unmapped[] = [];
  return message("system", contentToNative(system, [], "system", unmapped), undefined, unmapped);
}

/** DESIGN: each tool_result becomes its own `tool` message; `is_error` -> extras.is_error. */
function toolResultMessage(b: Obj, loc: Loc): Message {
  const id = expectString(b.tool_use_id, loc, "tool_use_id");
  const unmapped: Unmapped[] = [];
  const content = b.content === undefined || b.content === null ? [] : contentToNative(b.content, loc, "content", unmapped);
  const extras: Obj = { ...leftovers(b, K_TOOL_RESULT) };
  if (b.is_error !== undefined) extras.is_error = b.is_error;
  const msg = message("tool", content, Object.keys(extras).length ? extras : undefined, unmapped);
  msg.tool_call_id = id;
  return msg;
}

/**
 * A user turn may mix tool_result blocks with other blocks. Order is kept:
 * consecutive ordinary blocks form one user message, each tool_result its own
 * tool message, in the order they appear.
 */
function userTurn(m: Obj, loc: Loc, out: Message[]): void {
  const extras = leftoversBut(m, "role", "content");
  if (!Array.isArray(m.content)) {
    const unmapped: Unmapped[] = [];
    out.push(message("user", contentToNative(m.content, loc, "content", unmapped), extras, unmapped));
    return;
  }
  // The run of ordinary blocks so far; a plain loop with no closure, as every user turn passes here.
  let pending: ContentBlock[] = [];
  let unmapped: Unmapped[] = [];
  const blocks = m.content;
  for (let j = 0; j < blocks.length; j++) {
    const b = blocks[j];
    const bloc = [...loc, "content", j];
    if (isObj(b) && b.type === "tool_result") {
      if (pending.length !== 0 || unmapped.length !== 0) {
        out.push(message("user", pending, extras, unmapped));
        pending = [];
        unmapped = [];
      }
      out.push(toolResultMessage(b, bloc));
    } else {
      pushBlock(b, bloc, j, pending, unmapped);
    }
  }
  if (pending.length !== 0 || unmapped.length !== 0) out.push(message("user", pending, extras, unmapped));
  if (blocks.length === 0) out.push(message("user", [], extras, []));
}

/** Request messages (and the system prompt) -> native messages. */
export function normalizeMessages(raw: unknown, system?: unknown): Message[] {
  return markOrphans(normalizeTurns(raw, system));
}

/** normalizeMessages without the orphan check: for callers that read a conversation a turn at a time. */
export function normalizeTurns(raw: unknown, system?: unknown): Message[] {
  const list = expectArray(raw, ["messages"]);
  const out: Message[] = [];
  const sys = systemMessage(system);
  if (sys) out.push(sys);
  for (let i = 0; i < list.length; i++) {
    const loc = ["messages", i];
    const m = expectObj(list[i], loc);
    if (m.role === "user") userTurn(m, loc, out);
    else if (m.role === "assistant") {
      const unmapped: Unmapped[] = [];
      out.push(message("assistant", contentToNative(m.content, loc, "content", unmapped), leftoversBut(m, "role", "content"), unmapped));
    } else fail([...loc, "role"], `unsupported role ${JSON.stringify(m.role)}; expected user or assistant`, "unsupported_role");
  }
  return out;
}

/** The body fields the messages and the model are read from; the rest are invocation parameters. */
const TAKEN: readonly string[] = ["messages", "system", "model"];

export function normalizeRequest(request: unknown, withParams = true): RequestResult {
  const body = expectObj(request, []);
  const messages = normalizeMessages(body.messages, body.system);
  return requestResult(messages, body, TAKEN, "anthropic", body.model, withParams);
}
