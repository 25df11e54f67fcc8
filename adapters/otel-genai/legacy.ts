/**
 * The legacy GenAI conventions: `gen_ai.system`, the indexed
 * `gen_ai.prompt.{i}.*` / `gen_ai.completion.{i}.*` attributes that
 * OpenLLMetry emits (tool calls included), and the `gen_ai.content.prompt` /
 * `gen_ai.content.completion` span events carrying the messages as JSON.
 */
import type { ContentBlock, Message } from "../../src/format/schema.js";
import { NormalizeError } from "../../src/errors.js";
import { normalizeTurns } from "../anthropic-messages/request.js";
import { parseToolArgs } from "../common/args.js";
import { attrJson, jsonOrText } from "../common/attrs.js";
import { markOrphans } from "../common/content.js";
import { parseDataUrl } from "../common/dataurl.js";
import { fail, isObj, type Obj } from "../common/guards.js";
import type { Attributes, SpanLike } from "../spans.js";
import { role } from "./fields.js";

/** Legacy `content`: a string, or (OpenLLMetry, multimodal) the vendor's parts as JSON text. */
export function legacyContent(v: unknown): ContentBlock[] {
  if (v === undefined || v === null) return [];
  let parts: unknown = v;
  if (typeof v === "string") {
    const t = v.trimStart();
    if (!t.startsWith("[")) return [{ type: "text", text: v }];
    try {
      parts = JSON.parse(v);
    } catch {
      return [{ type: "text", text: v }];
    }
  }
  if (!Array.isArray(parts)) return [{ type: "text", text: typeof v === "string" ? v : JSON.stringify(v) }];
  const blocks: ContentBlock[] = [];
  for (const p of parts) {
    if (typeof p === "string") blocks.push({ type: "text", text: p });
    else if (
      isObj(p) &&
      typeof p.text === "string" &&
      (p.type === "text" || p.type === undefined || p.type === "input_text" || p.type === "output_text")
    )
      blocks.push({ type: "text", text: p.text });
    else if (isObj(p) && p.type === "image_url") {
      const url = isObj(p.image_url) ? p.image_url.url : p.image_url;
      const d = typeof url === "string" ? parseDataUrl(url) : undefined;
      if (d) blocks.push({ type: "image", base64: d.base64, mime_type: d.mime_type });
      else if (typeof url === "string") blocks.push({ type: "image", url });
    } else blocks.push({ type: "text", text: JSON.stringify(p), extras: { otel_part: p } });
  }
  return blocks;
}

function indexed(attrs: Attributes, prefix: string): Map<number, Map<string, unknown>> {
  const out = new Map<number, Map<string, unknown>>();
  const re = new RegExp(`^${prefix.replace(/\./g, "\\.")}\\.(\\d+)\\.(.+)$`);
  for (const k in attrs) {
    const m = re.exec(k);
    if (!m) continue;
    const i = Number(m[1]);
    let fields = out.get(i);
    if (!fields) out.set(i, (fields = new Map()));
    fields.set(m[2]!, attrs[k]);
  }
  return new Map([...out.entries()].sort((a, b) => a[0] - b[0]));
}

export function legacyToolCalls(fields: Map<string, unknown>): ContentBlock[] {
  const calls = new Map<number, Obj>();
  for (const [k, v] of fields) {
    const m = /^tool_calls\.(\d+)\.(id|name|arguments)$/.exec(k);
    if (!m) continue;
    const i = Number(m[1]);
    const c = calls.get(i) ?? {};
    c[m[2]!] = v;
    calls.set(i, c);
  }
  if (fields.has("function_call.name"))
    calls.set(-1, { name: fields.get("function_call.name"), arguments: fields.get("function_call.arguments") });
  return [...calls.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([, c]) => {
      const { args, extras } = parseToolArgs(c.arguments);
      const block: ContentBlock = { type: "tool_call", name: typeof c.name === "string" ? c.name : "", args };
      if (typeof c.id === "string") block.id = c.id;
      if (extras) block.extras = extras;
      return block;
    });
}

/**
 * OpenLLMetry's Anthropic spans record a turn's content as the JSON text of its
 * Anthropic blocks; the Anthropic block mapping reads them (tool_use -> tool_call,
 * tool_result -> `tool` messages). Undefined when the content is not such a list.
 */
function anthropicTurn(r: Message["role"], content: unknown): Message[] | undefined {
  if (typeof content !== "string" || !content.trimStart().startsWith("[")) return undefined;
  const blocks = jsonOrText(content);
  if (!Array.isArray(blocks)) return undefined;
  try {
    if (r === "system") return normalizeTurns([], blocks);
    if (r === "user" || r === "assistant") return normalizeTurns([{ role: r, content: blocks }]);
  } catch (err) {
    if (!(err instanceof NormalizeError)) throw err;
    // Not Anthropic blocks after all: read as generic parts below.
  }
  return undefined;
}

export function legacyIndexed(attrs: Attributes, prefix: "gen_ai.prompt" | "gen_ai.completion", anthropic: boolean): Message[] | undefined {
  const entries = indexed(attrs, prefix);
  if (entries.size === 0) return undefined;
  const out: Message[] = [];
  for (const [i, f] of entries) {
    const r = role(f.get("role") ?? (prefix === "gen_ai.completion" ? "assistant" : undefined), [`${prefix}.${i}.role`]);
    const turn = anthropic && !r.vendor ? anthropicTurn(r.role, f.get("content")) : undefined;
    if (turn) {
      const finish = f.get("finish_reason");
      if (typeof finish === "string" && turn[0]) turn[0].extras = { ...turn[0].extras, finish_reason: finish };
      out.push(...turn);
      continue;
    }
    const content = [...legacyContent(f.get("content")), ...legacyToolCalls(f)];
    const m: Message = { role: r.role, content };
    if (r.role === "tool" && typeof f.get("tool_call_id") === "string") m.tool_call_id = f.get("tool_call_id") as string;
    const extras: Obj = {};
    if (r.vendor) extras.vendor_role = r.vendor;
    if (typeof f.get("finish_reason") === "string") extras.finish_reason = f.get("finish_reason");
    if (Object.keys(extras).length) m.extras = extras;
    out.push(m);
  }
  return markOrphans(out);
}

/** `gen_ai.content.prompt` / `gen_ai.content.completion` events: `[{role, content}]` as JSON. */
export function legacyEvents(span: SpanLike): { input?: Message[]; output?: Message[] } {
  const res: { input?: Message[]; output?: Message[] } = {};
  for (const [event, attr, side] of [
    ["gen_ai.content.prompt", "gen_ai.prompt", "input"],
    ["gen_ai.content.completion", "gen_ai.completion", "output"],
  ] as const) {
    const e = span.events.find((x) => x.name === event);
    if (!e) continue;
    const list = attrJson(e.attributes, attr);
    if (!Array.isArray(list)) fail([`events[${event}]`, attr], "expected a JSON array of messages", "list_type");
    res[side] = list.map((m, i) => {
      if (!isObj(m)) fail([`events[${event}]`, attr, i], "expected a message object", "object_type");
      const r = role(m.role ?? (side === "output" ? "assistant" : undefined), [`events[${event}]`, attr, i, "role"]);
      const msg: Message = {
        role: r.role,
        content: [...legacyContent(m.content), ...legacyToolCalls(new Map(Object.entries(flatToolCalls(m))))],
      };
      if (r.role === "tool" && typeof m.tool_call_id === "string") msg.tool_call_id = m.tool_call_id;
      if (r.vendor) msg.extras = { vendor_role: r.vendor };
      return msg;
    });
  }
  if (res.input) markOrphans(res.input);
  if (res.output) markOrphans(res.output);
  return res;
}

/** `{tool_calls: [{id, function: {name, arguments}}]}` -> the flat keys legacyToolCalls reads. */
function flatToolCalls(m: Obj): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!Array.isArray(m.tool_calls)) return out;
  m.tool_calls.forEach((c, i) => {
    if (!isObj(c)) return;
    const fn = isObj(c.function) ? c.function : c;
    out[`tool_calls.${i}.id`] = c.id;
    out[`tool_calls.${i}.name`] = fn.name;
    out[`tool_calls.${i}.arguments`] = fn.arguments;
  });
  return out;
}
