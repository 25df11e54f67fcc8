/**
 * OpenTelemetry GenAI semantic conventions, current and legacy, as a span adapter.
 *
 * Current (semconv 1.37+): `gen_ai.operation.name`, `gen_ai.provider.name`,
 * `gen_ai.input.messages` / `gen_ai.output.messages` / `gen_ai.system_instructions`
 * (JSON: messages of typed parts, see parts.ts), `gen_ai.usage.input_tokens` /
 * `output_tokens` with the cache and reasoning counts, and
 * `gen_ai.response.time_to_first_chunk` (seconds).
 *
 * Legacy: `gen_ai.system`, `gen_ai.usage.prompt_tokens` / `completion_tokens`,
 * the indexed `gen_ai.prompt.{i}.*` / `gen_ai.completion.{i}.*` attributes that
 * OpenLLMetry emits (tool calls included), and the `gen_ai.content.prompt` /
 * `gen_ai.content.completion` events carrying the messages as JSON.
 *
 * When a span has both (an instrumentation in transition), the current
 * attributes win and the legacy ones are not read.
 */
import type { ContentBlock, Message, UsageMetadata } from "../../src/format/schema.js";
import { parseToolArgs } from "../common/args.js";
import { parseDataUrl } from "../common/dataurl.js";
import { attrJson, jsonOrText } from "../common/attrs.js";
import { fail, isObj, type Loc, type Obj, checkedUsage } from "../common/guards.js";
import type { Attributes, SpanAdapter, SpanLike, SpanResult, SpanRunType } from "../spans.js";
import { readParts } from "./parts.js";
import { markOrphans } from "../common/content.js";
import { normalizeTurns } from "../anthropic-messages/request.js";
import { NormalizeError } from "../../src/errors.js";

const ROLES = new Set(["system", "user", "assistant", "tool"]);

const num = (attrs: Attributes, ...keys: string[]): number | undefined => {
  for (const k of keys) {
    const v = attrs[k];
    if (typeof v === "number" && Number.isFinite(v)) return v;
    if (typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v))) return Number(v);
  }
  return undefined;
};
const text = (attrs: Attributes, ...keys: string[]): string | undefined => {
  for (const k of keys) if (typeof attrs[k] === "string" && attrs[k] !== "") return attrs[k];
  return undefined;
};

/** The role at `loc` (plus `key` when given: the location is built only for an error). */
function role(raw: unknown, loc: Loc, key?: string): { role: Message["role"]; vendor?: string } {
  if (typeof raw !== "string") fail(key === undefined ? loc : [...loc, key], "expected a role", "string_type");
  if (ROLES.has(raw)) return { role: raw as Message["role"] };
  if (raw === "developer") return { role: "system", vendor: raw };
  // An unknown role keeps its name; its content is still the user's side of the turn.
  return { role: "user", vendor: raw };
}

/**
 * One OTel message -> native messages, pushed onto `out`. Tool responses
 * become their own `tool` messages, in the order of the parts (a user turn
 * that answers a call and then asks more is the tool message, then the
 * user's); the message's own extras go on its first native message.
 *
 * Pushed onto the caller's list, with the parts' blocks kept as they are when
 * the message answers no call (the usual case), and extras made only when
 * there are some: a list per message, a copy of its blocks and `flatMap`
 * over the output cost ~1 µs of the ~12 µs of reading a tool-using span
 * (readSpan 0.92x on benchmarks/otel.ts's agent spans, 3 runs).
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

function currentMessages(attrs: Attributes): { input?: Message[]; output?: Message[] } {
  const res: { input?: Message[]; output?: Message[] } = {};
  const system = attrJson(attrs, "gen_ai.system_instructions");
  const input = attrJson(attrs, "gen_ai.input.messages");
  const output = attrJson(attrs, "gen_ai.output.messages");
  if (system !== undefined || input !== undefined) {
    res.input = [];
    if (system !== undefined) {
      const parts = readParts(system, ["gen_ai.system_instructions"]);
      const m: Message = { role: "system", content: parts.blocks };
      if (parts.unknown.length) m.extras = { unmapped_content: parts.unknown };
      res.input.push(m);
    }
    if (input !== undefined) {
      if (!Array.isArray(input)) fail(["gen_ai.input.messages"], "expected an array of messages", "list_type");
      for (let i = 0; i < input.length; i++) fromOtelMessage(input[i], ["gen_ai.input.messages", i], res.input);
    }
    markOrphans(res.input);
  }
  if (output !== undefined) {
    if (!Array.isArray(output)) fail(["gen_ai.output.messages"], "expected an array of messages", "list_type");
    const out: Message[] = [];
    for (let i = 0; i < output.length; i++) fromOtelMessage(output[i], ["gen_ai.output.messages", i], out);
    res.output = markOrphans(out);
  }
  return res;
}

// ---- legacy ------------------------------------------------------------------------------

/** Legacy `content`: a string, or (OpenLLMetry, multimodal) the vendor's parts as JSON text. */
function legacyContent(v: unknown): ContentBlock[] {
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
    else if (isObj(p) && typeof p.text === "string" && (p.type === "text" || p.type === undefined || p.type === "input_text" || p.type === "output_text")) blocks.push({ type: "text", text: p.text });
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

function legacyToolCalls(fields: Map<string, unknown>): ContentBlock[] {
  const calls = new Map<number, Obj>();
  for (const [k, v] of fields) {
    const m = /^tool_calls\.(\d+)\.(id|name|arguments)$/.exec(k);
    if (!m) continue;
    const i = Number(m[1]);
    const c = calls.get(i) ?? {};
    c[m[2]!] = v;
    calls.set(i, c);
  }
  if (fields.has("function_call.name")) calls.set(-1, { name: fields.get("function_call.name"), arguments: fields.get("function_call.arguments") });
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

function legacyIndexed(attrs: Attributes, prefix: "gen_ai.prompt" | "gen_ai.completion", anthropic: boolean): Message[] | undefined {
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
function legacyEvents(span: SpanLike): { input?: Message[]; output?: Message[] } {
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
      const msg: Message = { role: r.role, content: [...legacyContent(m.content), ...legacyToolCalls(new Map(Object.entries(flatToolCalls(m))))] };
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

// ---- shared ------------------------------------------------------------------------------

/**
 * Emitters whose input count is Anthropic's own `input_tokens`, the uncached
 * part only (and their total that plus output): OpenLLMetry's JS Anthropic
 * instrumentation. Semconv, and the Anthropic SDK's own telemetry, count cache
 * reads and writes in, as DESIGN's Anthropic usage does.
 */
const UNCACHED_INPUT_SCOPES = new Set(["@traceloop/instrumentation-anthropic"]);

function usage(attrs: Attributes, scope: string | undefined): UsageMetadata | undefined {
  let input = num(attrs, "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens");
  const output = num(attrs, "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens");
  if (input === undefined && output === undefined) return undefined;
  const cacheRead = num(attrs, "gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens");
  const cacheCreation = num(attrs, "gen_ai.usage.cache_creation.input_tokens", "gen_ai.usage.cache_write.input_tokens", "gen_ai.usage.cache_creation_input_tokens");
  const uncached = scope !== undefined && UNCACHED_INPUT_SCOPES.has(scope) && input !== undefined;
  if (uncached) input = input! + (cacheRead ?? 0) + (cacheCreation ?? 0);
  // The emitter's own total left the cache out too: recount it.
  const total = uncached ? undefined : num(attrs, "gen_ai.usage.total_tokens", "llm.usage.total_tokens");
  const u: UsageMetadata = { input_tokens: input ?? 0, output_tokens: output ?? 0, total_tokens: total ?? (input ?? 0) + (output ?? 0) };
  const reasoning = num(attrs, "gen_ai.usage.reasoning.output_tokens", "gen_ai.usage.reasoning_tokens");
  if (cacheRead !== undefined || cacheCreation !== undefined) u.input_token_details = { ...(cacheRead !== undefined ? { cache_read: cacheRead } : {}), ...(cacheCreation !== undefined ? { cache_creation: cacheCreation } : {}) };
  if (reasoning !== undefined) u.output_token_details = { reasoning };
  return checkedUsage(u, ["gen_ai.usage"]);
}

/** Provider names as the rest of tracepipe spells them (`openai`, `anthropic`, ...). */
export function providerName(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  const p = raw.trim().toLowerCase();
  if (p === "az.ai.openai" || p === "azure.ai.openai" || p === "azure_openai" || p === "azure") return "azure_openai";
  if (p === "aws.bedrock") return "bedrock";
  if (p === "gcp.vertex_ai" || p === "gcp.gen_ai" || p === "gcp.gemini") return "google";
  return p;
}

const PARAMS: Record<string, string> = {
  "gen_ai.request.temperature": "temperature",
  "gen_ai.request.max_tokens": "max_tokens",
  "gen_ai.request.top_p": "top_p",
  "gen_ai.request.top_k": "top_k",
  "gen_ai.request.frequency_penalty": "frequency_penalty",
  "gen_ai.request.presence_penalty": "presence_penalty",
  "gen_ai.request.stop_sequences": "stop",
  "gen_ai.request.seed": "seed",
  "gen_ai.request.choice.count": "n",
  "gen_ai.request.encoding_formats": "encoding_formats",
  "gen_ai.output.type": "output_type",
  "llm.is_streaming": "stream",
};

/** PARAMS as pairs, made once: every LLM span reads them. */
const PARAM_PAIRS = Object.entries(PARAMS);

function invocationParams(attrs: Attributes): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, name] of PARAM_PAIRS) if (attrs[k] !== undefined && attrs[k] !== null) out[name] = attrs[k];
  const tools = attrs["gen_ai.tool.definitions"];
  if (tools !== undefined) out.tools = typeof tools === "string" ? attrJson(attrs, "gen_ai.tool.definitions") : tools;
  return out;
}

/** Operations that are one model call; everything else named (agents, steps, workflows) is a chain. */
const LLM_OPS = new Set(["chat", "text_completion", "generate_content", "completion", "responses"]);

function runType(attrs: Attributes): SpanRunType {
  const op = text(attrs, "gen_ai.operation.name") ?? text(attrs, "llm.request.type");
  if (op === undefined || LLM_OPS.has(op)) return "llm"; // legacy spans name no operation: they are model calls
  if (op === "embeddings" || op === "embedding") return "embedding";
  if (op === "execute_tool") return "tool";
  return "chain"; // invoke_agent, create_agent, agent_step (AI SDK v7), invoke_workflow, ...
}

const CURRENT = ["gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions", "gen_ai.provider.name"];

export const otelGenAi: SpanAdapter = {
  name: "otel-genai",
  detect(span) {
    const a = span.attributes;
    if (a["gen_ai.operation.name"] !== undefined || a["gen_ai.system"] !== undefined || a["gen_ai.provider.name"] !== undefined) return true;
    for (const k in a) if (k.startsWith("gen_ai.prompt.") || k.startsWith("gen_ai.completion.") || k.startsWith("gen_ai.input.") || k.startsWith("gen_ai.output.")) return true;
    return span.events.some((e) => e.name === "gen_ai.content.prompt" || e.name === "gen_ai.content.completion");
  },
  read(span) {
    const a = span.attributes;
    const type = runType(a);
    const result: SpanResult = { convention: "otel-genai", run_type: type };
    result.trace_provider = providerName(text(a, "gen_ai.provider.name", "gen_ai.system"));
    result.trace_model_name = text(a, "gen_ai.response.model", "gen_ai.request.model");
    if (type === "tool") {
      const args = a["gen_ai.tool.call.arguments"];
      result.inputs = { name: text(a, "gen_ai.tool.name"), tool_call_id: text(a, "gen_ai.tool.call.id"), args: typeof args === "string" ? parseToolArgs(args).args : args };
      const res = a["gen_ai.tool.call.result"];
      if (res !== undefined) result.outputs = { output: typeof res === "string" ? jsonOrText(res) : res };
      return result;
    }
    if (type === "embedding") return result;
    const anthropic = result.trace_provider === "anthropic";
    const current = CURRENT.some((k) => a[k] !== undefined) ? currentMessages(a) : {};
    const legacy: { input?: Message[]; output?: Message[] } = current.input || current.output ? {} : { input: legacyIndexed(a, "gen_ai.prompt", anthropic), output: legacyIndexed(a, "gen_ai.completion", anthropic), ...dropUndefined(legacyEvents(span)) };
    result.input_messages = current.input ?? legacy.input;
    result.output_messages = current.output ?? legacy.output;
    result.usage_metadata = usage(a, span.scope);
    const params = invocationParams(a);
    if (Object.keys(params).length) result.invocation_params = params;
    if (type === "chain") {
      // An agent span (invoke_agent) may carry the whole conversation and the summed usage.
      if (result.input_messages) result.inputs = { messages: result.input_messages };
      if (result.output_messages) result.outputs = { messages: result.output_messages };
      delete result.input_messages;
      delete result.output_messages;
    }
    // Seconds: the span attribute of semconv, or the metric's name that the AI SDK v7 also sets on its spans.
    const ttft = num(a, "gen_ai.response.time_to_first_chunk", "gen_ai.client.operation.time_to_first_chunk");
    if (ttft !== undefined && ttft >= 0) result.time_to_first_token_ms = ttft * 1000;
    return result;
  },
};

function dropUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

