/**
 * GenAI log events -> native messages. The official instrumentations emit a
 * call's content as log records beside its span, not on it:
 *
 * | event                                   | native                                           |
 * |-----------------------------------------|--------------------------------------------------|
 * | `gen_ai.system.message` `{content}`     | system message                                   |
 * | `gen_ai.user.message` `{content}`       | user message                                     |
 * | `gen_ai.assistant.message` `{content?, tool_calls?}` | assistant message with tool calls   |
 * | `gen_ai.tool.message` `{id, content}`   | tool message, `tool_call_id` = id                |
 * | `gen_ai.choice` `{index, finish_reason, message}` | an output assistant message, by index  |
 * | `gen_ai.client.inference.operation.details` | `gen_ai.input.messages` / `gen_ai.output.messages` / `gen_ai.system_instructions` attributes, read as on a span |
 *
 * `content` is text, or a list of parts (`{type: "text", text}`; others are
 * kept in `extras.unmapped_content`). A record whose body fails to read is an
 * issue; the others still make their messages.
 */
import type { ContentBlock, Message } from "../../src/format/schema.js";
import type { Issue } from "../../src/errors.js";
import { parseToolArgs } from "../common/args.js";
import { markOrphans } from "../common/content.js";
import { fail, isObj, type Loc, type Obj } from "../common/guards.js";
import type { LogRecordLike } from "../spans.js";
import { messageList, systemMessage } from "./current.js";
import { attempt } from "./fields.js";

export const DETAILS = "gen_ai.client.inference.operation.details";
const ROLE_EVENTS: Record<string, Message["role"]> = {
  "gen_ai.system.message": "system",
  "gen_ai.user.message": "user",
  "gen_ai.assistant.message": "assistant",
  "gen_ai.tool.message": "tool",
};

/** Whether a record is one of the GenAI events read here. */
export function isGenAiEvent(r: LogRecordLike): boolean {
  return r.eventName in ROLE_EVENTS || r.eventName === "gen_ai.choice" || r.eventName === DETAILS;
}

export interface EventMessages {
  input?: Message[];
  output?: Message[];
  /** Whether any record carried content (text, tool arguments, messages): the instrumentation may be set not to capture it. */
  captured: boolean;
}

function content(v: unknown, loc: Loc): { blocks: ContentBlock[]; unknown: { index: number; part: unknown }[] } {
  if (v === undefined || v === null) return { blocks: [], unknown: [] };
  if (typeof v === "string") return { blocks: [{ type: "text", text: v }], unknown: [] };
  if (!Array.isArray(v)) fail(loc, "expected text or a list of parts", "string_type");
  const blocks: ContentBlock[] = [];
  const unknown: { index: number; part: unknown }[] = [];
  v.forEach((p, i) => {
    if (typeof p === "string") blocks.push({ type: "text", text: p });
    else if (isObj(p) && p.type === "text" && typeof (p.text ?? p.content) === "string")
      blocks.push({ type: "text", text: (p.text ?? p.content) as string });
    else unknown.push({ index: i, part: p });
  });
  return { blocks, unknown };
}

/** `tool_calls` as the OpenAI API writes them (`{id, function: {name, arguments}}`). */
function toolCalls(v: unknown, loc: Loc): ContentBlock[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) fail(loc, "expected a list of tool calls", "list_type");
  return v.map((c, i) => {
    if (!isObj(c)) fail([...loc, i], "expected a tool call object", "object_type");
    const fn = isObj(c.function) ? c.function : c;
    const { args, extras } = parseToolArgs(fn.arguments);
    const block: ContentBlock = { type: "tool_call", name: typeof fn.name === "string" ? fn.name : "", args };
    if (typeof c.id === "string") block.id = c.id;
    if (extras) block.extras = extras;
    return block;
  });
}

function hasContent(body: Obj): boolean {
  if (body.content !== undefined && body.content !== null && body.content !== "") return true;
  return Array.isArray(body.tool_calls) && body.tool_calls.some((c) => isObj(c) && isObj(c.function) && c.function.arguments !== undefined);
}

function message(r: Message["role"], body: Obj, loc: Loc): Message {
  const c = content(body.content, [...loc, "content"]);
  const m: Message = { role: r, content: [...c.blocks, ...toolCalls(body.tool_calls, [...loc, "tool_calls"])] };
  if (r === "tool" && typeof body.id === "string") m.tool_call_id = body.id;
  if (c.unknown.length) m.extras = { unmapped_content: c.unknown };
  return m;
}

/**
 * A streamed Responses call is recorded one output item per record, each an
 * assistant message of its own: they are one reply, so consecutive assistant
 * messages are joined (content in order, the last one's finish reason).
 */
function appendOutput(output: Message[], m: Message): void {
  const last = output[output.length - 1];
  if (!last || last.role !== "assistant" || m.role !== "assistant") {
    output.push(m);
    return;
  }
  last.content.push(...m.content);
  if (m.extras) last.extras = { ...last.extras, ...m.extras };
}

/**
 * The messages a span's log records carry, in the order they were emitted
 * (choices by their index). Issues (records that failed to read) are pushed
 * onto `issues`, located by the record's place among `logs`.
 */
export function eventMessages(logs: readonly LogRecordLike[], issues: Issue[]): EventMessages {
  const input: Message[] = [];
  const choices: { index: number; message: Message }[] = [];
  const output: Message[] = [];
  let captured = false;
  let any = false;
  logs.forEach((rec, i) => {
    const loc: Loc = ["logs", i, rec.eventName];
    attempt(issues, () => {
      if (rec.eventName === DETAILS) {
        const a = rec.attributes;
        const system = systemMessage(a);
        const ins = messageList(a, "gen_ai.input.messages");
        const outs = messageList(a, "gen_ai.output.messages");
        if (system) input.push(system);
        if (ins) input.push(...ins);
        if (outs) for (const m of outs) appendOutput(output, m);
        any ||= !!(system || ins || outs);
        captured ||= !!(system || ins?.some((m) => m.content.length) || outs?.some((m) => m.content.length));
        return;
      }
      const body = rec.body ?? {};
      if (!isObj(body)) fail([...loc, "body"], "expected an object", "object_type");
      const r = ROLE_EVENTS[rec.eventName];
      if (r) {
        any = true;
        captured ||= hasContent(body);
        input.push(message(r, body, [...loc, "body"]));
      } else if (rec.eventName === "gen_ai.choice") {
        any = true;
        const msg = isObj(body.message) ? body.message : {};
        captured ||= hasContent(msg);
        const m = message("assistant", msg, [...loc, "body", "message"]);
        if (typeof body.finish_reason === "string") m.extras = { ...m.extras, finish_reason: body.finish_reason };
        choices.push({ index: typeof body.index === "number" ? body.index : choices.length, message: m });
      }
    });
  });
  const res: EventMessages = { captured };
  // Records without content (capture off) say who spoke, not what: no messages rather than empty ones.
  if (!any || !captured) return res;
  if (input.length) res.input = markOrphans(input);
  choices.sort((a, b) => a.index - b.index);
  for (const c of choices) output.push(c.message);
  if (output.length) res.output = markOrphans(output);
  return res;
}
