/**
 * OpenInference (Arize) span conventions as a span adapter.
 *
 * `openinference.span.kind` says what the span is (LLM, CHAIN, AGENT, TOOL,
 * RETRIEVER, EMBEDDING, RERANKER, GUARDRAIL, EVALUATOR, PROMPT). LLM spans
 * carry messages as indexed attributes:
 *   llm.input_messages.{i}.message.role / content / name / tool_call_id
 *   llm.input_messages.{i}.message.contents.{j}.message_content.type / text / image.image.url
 *   llm.input_messages.{i}.message.tool_calls.{k}.tool_call.id / function.name / function.arguments
 * (and llm.output_messages the same), usage as llm.token_count.prompt /
 * completion / total with prompt_details.cache_read / cache_write / audio and
 * completion_details.reasoning / audio, the model as llm.model_name, the
 * provider as llm.provider or llm.system, and parameters as the JSON text
 * llm.invocation_parameters plus llm.tools.{i}.tool.json_schema, and the
 * reply's llm.finish_reason as the reply's `extras.finish_reason`. Other kinds
 * keep input.value / output.value (parsed when their mime type is JSON);
 * retrievers also list retrieval.documents.
 *
 * OpenInference's Anthropic instrumentation records a `tool_use` block as a
 * content part (its call beside the type) and again in message.tool_calls, and
 * a tool_result as `message.tool_call_id` + `message.content` on the user turn;
 * base64 images by media type only, and the system prompt only in input.value.
 */
import type { ContentBlock, Message, UsageMetadata } from "../../src/format/schema.js";
import { parseToolArgs } from "../common/args.js";
import { parseDataUrl } from "../common/dataurl.js";
import { jsonOrText } from "../common/attrs.js";
import { unflatten } from "../common/flat.js";
import { fail, isObj, type Obj, checkedUsage } from "../common/guards.js";
import { withExtras } from "../common/extras.js";
import { markOrphans, withUnmapped, type Unmapped } from "../common/content.js";
import { contentToNative } from "../anthropic-messages/blocks.js";
import { normalizeTurns } from "../anthropic-messages/request.js";
import { providerName } from "../otel-genai/index.js";
import type { Attributes, SpanAdapter, SpanResult, SpanRunType } from "../spans.js";

const KINDS: Record<string, SpanRunType> = {
  LLM: "llm",
  CHAIN: "chain",
  AGENT: "chain",
  TOOL: "tool",
  RETRIEVER: "retriever",
  RERANKER: "retriever",
  EMBEDDING: "embedding",
  GUARDRAIL: "chain",
  EVALUATOR: "chain",
  PROMPT: "prompt",
};
const ROLES = new Set(["system", "user", "assistant", "tool"]);

const num = (a: Attributes, k: string): number | undefined => (typeof a[k] === "number" ? (a[k] as number) : undefined);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const compact = <T>(v: unknown): T[] => (Array.isArray(v) ? (v.filter((x) => x !== undefined && x !== null) as T[]) : []);

function imageBlock(url: string): ContentBlock {
  const d = parseDataUrl(url);
  return d ? { type: "image", base64: d.base64, mime_type: d.mime_type } : { type: "image", url };
}

function toolCall(call: Obj): ContentBlock {
  const fn = isObj(call.function) ? call.function : {};
  const { args, extras } = parseToolArgs(fn.arguments);
  const block: ContentBlock = { type: "tool_call", name: str(fn.name) ?? "", args };
  if (typeof call.id === "string") block.id = call.id;
  if (extras) block.extras = extras;
  return block;
}

/** Text parts: chat's `text`, and the Responses API's `input_text` / `output_text` as the instrumentation names them. */
const TEXT_TYPES = new Set(["text", "input_text", "output_text"]);

interface Read {
  blocks: ContentBlock[];
  unmapped: Unmapped[];
}

/**
 * `message.contents`: text, image, reasoning, a refusal (a text block marked
 * `extras.refusal`, as OpenAI's own refusal part maps) and (OpenInference's Anthropic
 * instrumentation) `tool_use` parts, whose call is recorded beside the type in
 * the same slot and again in `message.tool_calls`. Anything else is kept whole
 * in `extras.unmapped_content` (DESIGN), as is an image whose data the
 * instrumentation left out (base64 images are recorded by media type only).
 */
function contents(msg: Obj): Read {
  const out: Read = { blocks: [], unmapped: [] };
  // A streamed reply that only called tools is recorded with content "": no words, as when it is not streamed.
  const callsOnly = msg.content === "" && compact(msg.tool_calls).length > 0;
  if (typeof msg.content === "string" && !callsOnly) out.blocks.push({ type: "text", text: msg.content });
  const list = Array.isArray(msg.contents) ? msg.contents : [];
  const seen = new Set<string>();
  list.forEach((c, j) => {
    if (c === undefined || c === null) return;
    const mc = isObj(c) && isObj(c.message_content) ? c.message_content : undefined;
    const type = mc?.type;
    if (mc && (TEXT_TYPES.has(type as string) || (type === undefined && typeof mc.text === "string")))
      out.blocks.push({ type: "text", text: String(mc.text ?? "") });
    else if (mc && type === "refusal" && typeof mc.text === "string")
      out.blocks.push({ type: "text", text: mc.text, extras: { refusal: true } });
    else if (
      mc &&
      (type === "image" || type === "input_image") &&
      isObj(mc.image) &&
      isObj(mc.image.image) &&
      typeof mc.image.image.url === "string"
    )
      out.blocks.push(imageBlock(mc.image.image.url));
    else if (mc && type === "reasoning") {
      const extras: Obj = {};
      if (typeof mc.signature === "string") extras.signature = mc.signature;
      if (mc.data !== undefined) Object.assign(extras, { redacted: true, data: mc.data });
      out.blocks.push(
        Object.keys(extras).length
          ? { type: "reasoning", text: str(mc.text) ?? "", extras }
          : { type: "reasoning", text: str(mc.text) ?? "" },
      );
    } else if (isObj(c) && type === "tool_use" && isObj(c.tool_call)) {
      const block = toolCall(c.tool_call);
      if (block.type === "tool_call" && block.id !== undefined) seen.add(block.id);
      out.blocks.push(block);
    } else out.unmapped.push({ index: j, part: c });
  });
  for (const tc of compact<Obj>(msg.tool_calls)) {
    const block = toolCall(isObj(tc.tool_call) ? tc.tool_call : {});
    if (block.type === "tool_call" && block.id !== undefined && seen.has(block.id)) continue; // already read from its content slot
    out.blocks.push(block);
  }
  if (typeof msg.function_call_name === "string") {
    const block = toolCall({ function: { name: msg.function_call_name, arguments: msg.function_call_arguments_json } });
    block.extras = { ...block.extras, legacy_function_call: true };
    out.blocks.push(block);
  }
  return out;
}

/**
 * A tool result's recorded content: text, or (Anthropic) the JSON text of the
 * tool_result's blocks, which the Anthropic block mapping reads.
 */
function toolResultContent(v: unknown, anthropic: boolean, unmapped: Unmapped[]): ContentBlock[] {
  if (typeof v !== "string") return [];
  if (anthropic && v.trimStart().startsWith("[")) {
    const parsed = jsonOrText(v);
    if (Array.isArray(parsed)) {
      try {
        return contentToNative(parsed, [], "content", unmapped);
      } catch {
        // Not Anthropic blocks after all: the text as it is.
      }
    }
  }
  return [{ type: "text", text: v }];
}

function messages(a: Attributes, prefix: "llm.input_messages" | "llm.output_messages", anthropic: boolean): Message[] | undefined {
  const list = unflatten(a, prefix);
  if (!list) return undefined;
  const out: Message[] = [];
  list.forEach((entry, i) => {
    const at = `${prefix}.${i}.message`;
    const msg =
      isObj(entry) && isObj(entry.message) ? entry.message : fail([`${prefix}.${i}`], "expected message.* attributes", "object_type");
    const rawRole = str(msg.role) ?? (prefix === "llm.output_messages" ? "assistant" : undefined);
    if (!rawRole) fail([`${at}.role`], "expected a role", "string_type");
    const role = ROLES.has(rawRole) ? (rawRole as Message["role"]) : rawRole === "developer" ? "system" : "user";
    const extras: Obj = {};
    if (role !== rawRole) extras.vendor_role = rawRole;
    if (typeof msg.name === "string") extras.name = msg.name;
    const toolCallId = str(msg.tool_call_id);
    if (toolCallId !== undefined && role !== "assistant") {
      // A tool result: role `tool` (OpenAI), or a `user` turn holding a tool_result
      // (Anthropic), whose other parts follow it as the user's own message.
      const unmapped: Unmapped[] = [];
      const tool: Message = { role: "tool", content: toolResultContent(msg.content, anthropic, unmapped), tool_call_id: toolCallId };
      const ex = withUnmapped(role === "tool" ? extras : { ...extras, vendor_role: rawRole }, unmapped);
      if (ex && Object.keys(ex).length) tool.extras = ex;
      out.push(tool);
      if (role !== "tool") {
        const rest = contents({ ...msg, content: undefined });
        if (rest.blocks.length || rest.unmapped.length)
          out.push(withExtras({ role, content: rest.blocks }, withUnmapped(undefined, rest.unmapped), "replace-nonempty"));
      }
      return;
    }
    const read = contents(msg);
    out.push(withExtras({ role, content: read.blocks }, withUnmapped(extras, read.unmapped), "replace-nonempty"));
  });
  return markOrphans(out);
}

/**
 * Anthropic's system prompt is a request field, not a message, so the indexed
 * messages never hold it; the instrumentation records the whole request as
 * `input.value` (JSON), and a system prompt is never dropped (DESIGN).
 */
function anthropicSystem(a: Attributes): Message[] | undefined {
  const body =
    a["input.mime_type"] === "application/json" && typeof a["input.value"] === "string" ? jsonOrText(a["input.value"]) : undefined;
  if (!isObj(body) || body.system === undefined || body.system === null) return undefined;
  try {
    return normalizeTurns([], body.system);
  } catch {
    return undefined; // not an Anthropic system prompt: nothing to add
  }
}

function usage(a: Attributes): UsageMetadata | undefined {
  const input = num(a, "llm.token_count.prompt");
  const output = num(a, "llm.token_count.completion");
  if (input === undefined && output === undefined) return undefined;
  const u: UsageMetadata = {
    input_tokens: input ?? 0,
    output_tokens: output ?? 0,
    total_tokens: num(a, "llm.token_count.total") ?? (input ?? 0) + (output ?? 0),
  };
  const inD: Record<string, number> = {};
  const outD: Record<string, number> = {};
  for (const [k, name] of [
    ["cache_read", "cache_read"],
    ["cache_write", "cache_creation"],
    ["audio", "audio"],
  ] as const) {
    const v = num(a, `llm.token_count.prompt_details.${k}`);
    if (v) inD[name] = v;
  }
  for (const k of ["reasoning", "audio"] as const) {
    const v = num(a, `llm.token_count.completion_details.${k}`);
    if (v) outD[k] = v;
  }
  if (Object.keys(inD).length) u.input_token_details = inD;
  if (Object.keys(outD).length) u.output_token_details = outD;
  return checkedUsage(u, ["llm.token_count"]);
}

function value(a: Attributes, which: "input" | "output"): unknown {
  const v = a[`${which}.value`];
  return typeof v === "string" && a[`${which}.mime_type`] === "application/json" ? jsonOrText(v) : v;
}

function params(a: Attributes): Record<string, unknown> | undefined {
  let out: Record<string, unknown> = {};
  const raw = a["llm.invocation_parameters"];
  if (typeof raw === "string") {
    try {
      const p: unknown = JSON.parse(raw);
      if (isObj(p)) out = { ...p };
    } catch {
      out.invocation_parameters = raw;
    }
  }
  delete out.model;
  delete out.messages;
  const tools = unflatten(a, "llm.tools");
  if (tools) {
    out.tools = tools.map((t) => {
      const schema = isObj(t) && isObj(t.tool) ? t.tool.json_schema : undefined;
      return typeof schema === "string" ? jsonOrText(schema) : schema;
    });
  }
  return Object.keys(out).length ? out : undefined;
}

export const openInference: SpanAdapter = {
  name: "openinference",
  detect: (span) => typeof span.attributes["openinference.span.kind"] === "string",
  read(span) {
    const a = span.attributes;
    const kind = String(a["openinference.span.kind"]).toUpperCase();
    const result: SpanResult = { convention: "openinference", run_type: KINDS[kind] ?? "chain" };
    result.trace_provider = providerName(str(a["llm.provider"]) ?? str(a["llm.system"]));
    result.trace_model_name = str(a["llm.model_name"]) ?? str(a["embedding.model_name"]);
    const p = params(a);
    if (p) result.invocation_params = p;
    if (result.run_type === "llm") {
      const anthropic = result.trace_provider === "anthropic";
      result.input_messages = messages(a, "llm.input_messages", anthropic);
      result.output_messages = messages(a, "llm.output_messages", anthropic);
      if (anthropic && result.input_messages) {
        const system = anthropicSystem(a);
        if (system && !result.input_messages.some((m) => m.role === "system")) result.input_messages.unshift(...system);
      }
      // The reply's finish reason, where the other conventions keep it: on the (first) reply message.
      const finish = str(a["llm.finish_reason"]);
      const reply = result.output_messages?.[0];
      if (finish !== undefined && reply && reply.extras?.finish_reason === undefined)
        reply.extras = { ...reply.extras, finish_reason: finish };
      result.usage_metadata = usage(a);
      const first = span.events.find((e) => e.name === "First Token Stream Event" || e.name === "first_token");
      if (first) result.time_to_first_token_ms = first.offsetMs;
      // No indexed messages (an instrumentation that only records input.value): keep the raw values.
      if (!result.input_messages && a["input.value"] !== undefined) result.inputs = { input: value(a, "input") };
      return result;
    }
    const input = value(a, "input");
    const output = value(a, "output");
    result.inputs = input !== undefined ? { input } : {};
    if (kind === "TOOL" && typeof a["tool.name"] === "string") result.inputs.name = a["tool.name"];
    if (output !== undefined) result.outputs = { output };
    const docs = unflatten(a, "retrieval.documents");
    if (docs) result.outputs = { ...result.outputs, documents: docs.map((d) => (isObj(d) && isObj(d.document) ? d.document : d)) };
    return result;
  },
};
