/**
 * Anthropic `message` response -> the assistant message with usage_metadata.
 * SPEC §2.6's other reply shapes carry the same message: `{message}`,
 * `{choices:[{message}]}` and `[role, content]` (content a string or blocks).
 */
import type { ResponseResult } from "../types.js";
import type { Message } from "../../src/format/schema.js";
import { expectArray, expectObj, fail, leftovers, leftoversBut, type Obj, type Loc } from "../common/guards.js";
import { withUnmapped, type Unmapped } from "../common/content.js";
import { contentToNative } from "./blocks.js";
import { normalizeUsage } from "./usage.js";

const K_ENVELOPE = new Set(["message", "choices", "model", "usage"]);
const K_CHOICE = new Set(["message"]);

/** The envelope of a reply in a SPEC shape -> the message object inside it and where it is. */
function unwrap(response: unknown): { m: Obj; loc: Loc; envelope?: Obj; choice?: Obj } {
  if (Array.isArray(response)) {
    if (response.length !== 2) fail([], `a [role, content] reply has two elements, got ${response.length}`, "tuple_length");
    return { m: { role: response[0], content: response[1] }, loc: [] };
  }
  const r = expectObj(response, []);
  if ("choices" in r) {
    const choices = expectArray(r.choices, ["choices"]);
    if (choices.length !== 1) fail(["choices"], `an Anthropic reply has one message, got ${choices.length} choices`, "choices_length");
    const c = expectObj(choices[0], ["choices", 0]);
    return { m: expectObj(c.message, ["choices", 0], "message"), loc: ["choices", 0, "message"], envelope: r, choice: c };
  }
  if ("message" in r && !("content" in r)) return { m: expectObj(r.message, [], "message"), loc: ["message"], envelope: r };
  return { m: r, loc: [] };
}

export function normalizeResponse(response: unknown): ResponseResult {
  const { m: r, loc, envelope, choice } = unwrap(response);
  if (r.role !== undefined && r.role !== "assistant")
    fail([...loc, "role"], `a response message has role "assistant", got ${JSON.stringify(r.role)}`, "unsupported_role");
  const unmapped: Unmapped[] = [];
  const content = r.content === undefined || r.content === null ? [] : contentToNative(r.content, loc, "content", unmapped);
  const msg: Message = { role: "assistant", content };
  const top = envelope ?? r;
  const usage = normalizeUsage(top.usage ?? r.usage, top.usage !== undefined ? ["usage"] : [...loc, "usage"]);
  if (usage) msg.usage_metadata = usage;
  let extras = leftoversBut(r, "role", "content", "model", "usage", "type");
  if (envelope) extras = { ...leftovers(envelope, K_ENVELOPE), ...(choice ? leftovers(choice, K_CHOICE) : undefined), ...extras };
  extras = withUnmapped(extras, unmapped);
  if (extras && Object.keys(extras).length) msg.extras = extras;
  const result: ResponseResult = { messages: [msg], trace_provider: "anthropic" };
  const model = typeof top.model === "string" ? top.model : r.model;
  if (typeof model === "string") result.trace_model_name = model;
  if (usage) result.usage_metadata = usage;
  if (typeof r.stop_reason === "string") result.stop_reason = r.stop_reason;
  return result;
}
