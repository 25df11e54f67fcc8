/** OpenAI chat-completions request body -> native messages + invocation params. */
import type { RequestResult } from "../types.js";
import type { ContentBlock, Message } from "../../src/format/schema.js";
import { describe, expectArray, expectObj, expectString, fail, leftovers, optString, type Loc, type Obj } from "../common/guards.js";
import { markOrphans, withUnmapped, type Unmapped } from "../common/content.js";
import { contentToBlocks, textBlock } from "./parts.js";
import { legacyCallId, legacyFunctionCallBlock, toolCallBlock } from "./tools.js";
import { audioBlocks, requestAudioFormat } from "./audio.js";

const K_MSG = new Set(["role", "content", "name", "tool_calls", "function_call", "refusal", "audio", "tool_call_id", "reasoning_content"]);
const K_AUDIO = new Set(["id", "data", "transcript"]);

function msgExtras(m: Obj, extra?: Obj): Obj | undefined {
  let ex = leftovers(m, K_MSG);
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

/**
 * Assistant message fields -> blocks, in the order a reader meets them:
 * reasoning, text (content, refusal), audio, then tool calls. `audioFormat` is
 * the request's `audio.format`, for the MIME type of audio bytes.
 */
export function assistantBlocks(m: Obj, loc: Loc, messageIndex: number, unmapped: Unmapped[], audioFormat?: string): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  if (typeof m.reasoning_content === "string" && m.reasoning_content !== "") {
    blocks.push({ type: "reasoning", text: m.reasoning_content });
  }
  for (const b of contentToBlocks(m.content, loc, "content", unmapped)) blocks.push(b);
  if (m.refusal !== undefined && m.refusal !== null) {
    blocks.push({ type: "text", text: expectString(m.refusal, loc, "refusal"), extras: { refusal: true } });
  }
  if (m.audio !== undefined && m.audio !== null) {
    const a = expectObj(m.audio, loc, "audio");
    const id = optString(a.id, loc, "audio", "id");
    const data = optString(a.data, loc, "audio", "data");
    const transcript = optString(a.transcript, loc, "audio", "transcript");
    if (id === undefined && data === undefined) fail([...loc, "audio", "id"], `expected a string, got ${describe(a.id)}`, "string_type");
    for (const b of audioBlocks({ id, data, transcript, rest: leftovers(a, K_AUDIO) ?? {} }, audioFormat)) blocks.push(b);
  }
  if (m.tool_calls !== undefined && m.tool_calls !== null) {
    const calls = expectArray(m.tool_calls, loc, "tool_calls");
    for (let j = 0; j < calls.length; j++) blocks.push(toolCallBlock(calls[j], [...loc, "tool_calls", j]));
  }
  if (m.function_call !== undefined && m.function_call !== null) {
    blocks.push(legacyFunctionCallBlock(m.function_call, [...loc, "function_call"], legacyCallId(messageIndex)));
  }
  return blocks;
}

/** A message's content as blocks; string content (most messages) needs no location built. */
function messageBlocks(m: Obj, loc: Loc, i: number, unmapped: Unmapped[]): ContentBlock[] {
  return typeof m.content === "string" ? [textBlock(m.content)] : contentToBlocks(m.content, [...loc, i], "content", unmapped);
}

export function normalizeMessages(raw: unknown, loc: Loc = ["messages"], audioFormat?: string): Message[] {
  const list = expectArray(raw, loc);
  const out: Message[] = [];
  // Legacy function calls awaiting their `function` reply, by function name, oldest first.
  const pendingLegacy = new Map<string, string[]>();
  for (let i = 0; i < list.length; i++) {
    const m = expectObj(list[i], loc, i);
    const role = m.role;
    const unmapped: Unmapped[] = [];
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
        out.push(finish("assistant", assistantBlocks(m, [...loc, i], i, unmapped, audioFormat), msgExtras(m), unmapped));
        if (m.function_call !== undefined && m.function_call !== null) {
          const name = (m.function_call as Obj).name;
          const key = typeof name === "string" ? name : "";
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
        out.push(msg);
        break;
      }
      case "function": {
        // Legacy reply to a function_call: point it at the oldest unanswered call of that name.
        // A call trimmed from the history leaves an orphan (markOrphans flags it).
        const name = typeof m.name === "string" ? m.name : "";
        const q = pendingLegacy.get(name);
        const id = q?.shift() ?? `call_legacy_orphan_${i}`;
        const msg = finish("tool", messageBlocks(m, loc, i, unmapped), msgExtras(m, { vendor_role: "function" }), unmapped);
        msg.tool_call_id = id;
        out.push(msg);
        break;
      }
      default:
        fail([...loc, i, "role"], `unsupported role ${JSON.stringify(role)}; expected system, developer, user, assistant, tool or function`, "unsupported_role");
    }
  }
  return markOrphans(out);
}

export function normalizeRequest(request: unknown): RequestResult {
  const body = expectObj(request, []);
  const messages = normalizeMessages(body.messages, ["messages"], requestAudioFormat(body));
  const invocation_params: Obj = {};
  for (const k in body) if (k !== "messages" && k !== "model" && body[k] !== undefined) invocation_params[k] = body[k];
  const result: RequestResult = { messages, invocation_params, trace_provider: "openai" };
  if (typeof body.model === "string") result.trace_model_name = body.model;
  return result;
}
