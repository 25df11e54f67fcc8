/**
 * The current GenAI conventions (semconv 1.37+): `gen_ai.input.messages`,
 * `gen_ai.output.messages` and `gen_ai.system_instructions` hold messages of
 * typed parts (parts.ts), as JSON text on spans or as structured values on
 * log records. Each of the three is read on its own, so one that fails to
 * parse costs only itself (the reader records the issue).
 */
import type { Message } from "../../src/format/schema.js";
import { attrJson } from "../common/attrs.js";
import { markOrphans } from "../common/content.js";
import { fail, isObj, type Loc, type Obj } from "../common/guards.js";
import { role } from "./fields.js";
import { readParts } from "./parts.js";

export const CURRENT = ["gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions"];

/**
 * One OTel message -> native messages, pushed onto `out`. Tool responses
 * become their own `tool` messages, in the order of the parts (a user turn
 * that answers a call and then asks more is the tool message, then the
 * user's); the message's own extras go on its first native message.
 *
 * Pushed onto the caller's list, with the parts' blocks kept as they are when
 * the message answers no call (the usual case), and extras made only when
 * there are some: a list per message, a copy of its blocks and a `flatMap`
 * over the output were a visible share of reading a tool-using span.
 */
function fromOtelMessage(m: unknown, loc: Loc, out: Message[]): void {
  if (!isObj(m)) fail(loc, "expected a message object", "object_type");
  const r = role(m.role, loc, "role");
  const parts = readParts(m.parts, loc, "parts");
  const first = out.length;
  const blocks = parts.blocks;
  if (parts.toolResults.length === 0) out.push({ role: r.role, content: blocks });
  else {
    let from = 0;
    for (const t of parts.toolResults) {
      if (t.after > from) out.push({ role: r.role, content: blocks.slice(from, t.after) });
      from = t.after;
      const tool: Message = { role: "tool", content: t.content };
      if (t.id) tool.tool_call_id = t.id;
      out.push(tool);
    }
    if (blocks.length > from) out.push({ role: r.role, content: blocks.slice(from) });
  }
  let extras: Obj | undefined;
  if (r.vendor) (extras ??= {}).vendor_role = r.vendor;
  if (typeof m.name === "string") (extras ??= {}).name = m.name;
  if (typeof m.finish_reason === "string") (extras ??= {}).finish_reason = m.finish_reason;
  if (parts.unknown.length) (extras ??= {}).unmapped_content = parts.unknown;
  if (extras) out[first]!.extras = extras;
}

/**
 * `gen_ai.system_instructions`: a list of parts, or (the official OpenAI
 * instrumentation, for the Responses API's `instructions`) plain text, which
 * is one text part.
 */
export function systemMessage(attrs: Readonly<Record<string, unknown>>): Message | undefined {
  const raw = attrs["gen_ai.system_instructions"];
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw === "string" && !/^\s*[[{]/.test(raw)) return { role: "system", content: [{ type: "text", text: raw }] };
  const system = attrJson(attrs, "gen_ai.system_instructions");
  const parts = readParts(typeof system === "string" ? [{ type: "text", content: system }] : system, ["gen_ai.system_instructions"]);
  const m: Message = { role: "system", content: parts.blocks };
  if (parts.unknown.length) m.extras = { unmapped_content: parts.unknown };
  return m;
}

/** `gen_ai.input.messages` or `gen_ai.output.messages` (`key`) as native messages; undefined when absent. */
export function messageList(
  attrs: Readonly<Record<string, unknown>>,
  key: "gen_ai.input.messages" | "gen_ai.output.messages",
): Message[] | undefined {
  const list = attrJson(attrs, key);
  if (list === undefined) return undefined;
  if (!Array.isArray(list)) fail([key], "expected an array of messages", "list_type");
  const out: Message[] = [];
  for (let i = 0; i < list.length; i++) fromOtelMessage(list[i], [key, i], out);
  return out;
}

export { markOrphans };
export type { Loc, Obj };
