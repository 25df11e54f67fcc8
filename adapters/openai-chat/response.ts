/**
 * OpenAI chat.completion response -> one assistant message per choice, usage on
 * the first. SPEC §2.6's other reply shapes carry the same assistant message:
 * `{message}`, a bare `{role, content, tool_calls, ...}` and `[role, content]`.
 */
import type { ResponseContext, ResponseResult } from "../types.js";
import type { ContentBlock, Message } from "../../src/format/schema.js";
import { expectArray, expectObj, fail, isObj, type Loc, type Obj, put } from "../common/guards.js";
import { withUnmapped, type Unmapped } from "../common/content.js";
import { assistantBlocks } from "./request.js";
import { requestAudioFormat } from "./audio.js";
import { normalizeUsage } from "./usage.js";

/** The reply message fields the mapping consumes (a switch of string comparisons: every reply passes here); a bare reply also carries usage and model. */
function isReplyKey(k: string, bare: boolean): boolean {
  switch (k) {
    case "role":
    case "content":
    case "refusal":
    case "tool_calls":
    case "function_call":
    case "audio":
    case "annotations":
    case "reasoning_content":
      return true;
    case "usage":
    case "model":
      return bare;
    default:
      return false;
  }
}

function replyExtras(m: Obj, bare: boolean): Obj | undefined {
  let out: Obj | undefined;
  for (const k in m) {
    if (isReplyKey(k, bare)) continue;
    const v = m[k];
    if (v !== undefined) put((out ??= {}), k, v);
  }
  return out;
}

/** Attach the message's `annotations` (url_citation, ...) to its text blocks. */
export function attachAnnotations(blocks: ContentBlock[], annotations: unknown, loc: Loc): void {
  if (annotations === undefined || annotations === null) return;
  const list = expectArray(annotations, loc);
  if (list.length === 0) return;
  const anns = list.map((a, i) => expectObj(a, loc, i));
  const text = blocks.find((b) => b.type === "text" && !(b.extras && (b.extras.refusal || b.extras.audio_transcript)));
  if (text && text.type === "text") text.annotations = anns;
  else blocks.push({ type: "text", text: "", annotations: anns });
}

/** One reply message (role assistant) -> the native message; `extras` are the envelope's leftovers. */
function replyMessage(m: Obj, loc: Loc, bare: boolean, audioFormat: string | undefined): Message {
  if (m.role !== undefined && m.role !== null && m.role !== "assistant")
    fail([...loc, "role"], `a reply message has role "assistant", got ${JSON.stringify(m.role)}`, "unsupported_role");
  const unmapped: Unmapped[] = [];
  const content = assistantBlocks(m, loc, undefined, 0, unmapped, audioFormat);
  // Nearly every reply has no annotations (or []): no location is built for them.
  if (m.annotations !== undefined && m.annotations !== null && !(Array.isArray(m.annotations) && m.annotations.length === 0))
    attachAnnotations(content, m.annotations, [...loc, "annotations"]);
  const msg: Message = { role: "assistant", content };
  const extras = withUnmapped(replyExtras(m, bare), unmapped);
  if (extras) msg.extras = extras;
  return msg;
}

export function choiceToMessage(choice: unknown, loc: Loc, many: boolean, audioFormat?: string): Message {
  const c = expectObj(choice, loc);
  const msg = replyMessage(expectObj(c.message, loc, "message"), [...loc, "message"], false, audioFormat);
  // Built in place (msg.extras is this call's own object): every reply passes here.
  let extras = msg.extras;
  for (const k in c)
    if (k !== "message" && k !== "index" && k !== "finish_reason" && k !== "logprobs" && c[k] !== undefined) put((extras ??= {}), k, c[k]);
  if (c.finish_reason !== undefined && c.finish_reason !== null) (extras ??= {}).finish_reason = c.finish_reason;
  if (many && c.index !== undefined) (extras ??= {}).choice_index = c.index;
  if (c.logprobs !== undefined && c.logprobs !== null) (extras ??= {}).logprobs = c.logprobs;
  if (extras) msg.extras = extras;
  return msg;
}

/**
 * `put` for an envelope member, the members every chat.completion carries stored
 * by name: a named store is cached per object shape, where a store under a
 * computed key takes the engine's generic keyed path (every reply passes here).
 */
function putMember(o: Obj, k: string, v: unknown): void {
  switch (k) {
    case "id":
      o.id = v;
      return;
    case "object":
      o.object = v;
      return;
    case "created":
      o.created = v;
      return;
    case "system_fingerprint":
      o.system_fingerprint = v;
      return;
    case "service_tier":
      o.service_tier = v;
      return;
    default:
      put(o, k, v);
  }
}

/**
 * The envelope's members (all of `r` but `skip`, `usage` and `model`) laid under
 * the first message's `extras` (extras win), in place; a fresh object when the
 * message has none. Read straight from `r`: every reply passes here.
 */
function underEnvelope(r: Obj, skip: string, extras: Obj | undefined): Obj | undefined {
  const had = extras !== undefined;
  for (const k in r) {
    if (k === skip || k === "usage" || k === "model") continue;
    const v = r[k];
    if (v === undefined) continue;
    if (extras === undefined) extras = {};
    else if (had && Object.hasOwn(extras, k)) continue;
    putMember(extras, k, v);
  }
  return extras;
}

export function normalizeResponse(response: unknown, ctx?: ResponseContext): ResponseResult {
  const audioFormat = requestAudioFormat(ctx?.request);
  if (Array.isArray(response)) {
    // SPEC §2.6: [role, content].
    if (response.length !== 2) fail([], `a [role, content] reply has two elements, got ${response.length}`, "tuple_length");
    return { messages: [replyMessage({ role: response[0], content: response[1] }, [], false, audioFormat)], trace_provider: "openai" };
  }
  const r = expectObj(response, []);
  let messages: Message[];
  // The first message's extras with the envelope under them, set after its usage: a message without
  // extras of its own gets them after usage_metadata (key order is part of the output).
  let extras: Obj | undefined;
  let stop: unknown;
  if ("choices" in r || !("message" in r || "role" in r || "content" in r)) {
    const choices = expectArray(r.choices, ["choices"]);
    const many = choices.length > 1;
    messages = [];
    for (let i = 0; i < choices.length; i++) messages.push(choiceToMessage(choices[i], ["choices", i], many, audioFormat));
    extras = underEnvelope(r, "choices", messages[0]?.extras);
    stop = isObj(choices[0]) ? choices[0].finish_reason : undefined;
  } else if ("message" in r) {
    messages = [replyMessage(expectObj(r.message, [], "message"), ["message"], false, audioFormat)];
    extras = underEnvelope(r, "message", messages[0]!.extras);
  } else {
    messages = [replyMessage(r, [], true, audioFormat)];
  }
  const usage = normalizeUsage(r.usage, ["usage"]);
  const first = messages[0];
  if (first) {
    if (usage) first.usage_metadata = usage;
    if (extras) first.extras = extras;
  }
  const result: ResponseResult = { messages, trace_provider: "openai" };
  if (typeof r.model === "string") result.trace_model_name = r.model;
  if (usage) result.usage_metadata = usage;
  if (typeof stop === "string") result.stop_reason = stop;
  return result;
}
