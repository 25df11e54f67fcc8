/**
 * The Vercel AI SDK's telemetry spans (`experimental_telemetry`) as a span adapter.
 *
 * Spans named by `ai.operationId`:
 *   ai.generateText.doGenerate, ai.streamText.doStream,
 *   ai.generateObject.doGenerate, ai.streamObject.doStream   -> llm runs (one per model call)
 *   ai.generateText, ai.streamText, ai.generateObject, ai.streamObject -> chain runs around them
 *   ai.toolCall -> tool runs;  ai.embed(.doEmbed), ai.embedMany(.doEmbed) -> embedding runs
 *
 * `ai.prompt.messages` is the provider-level prompt as JSON, in two shapes:
 *   v4: tool-call `{toolCallId, toolName, args}`, tool-result `{result}`, image `{image, mimeType}`,
 *       file `{data, mimeType}`;
 *   v5+: tool-call `{input}`, tool-result `{output: {type: text|json|error-text|error-json|content, value}}`,
 *       file `{data, mediaType}` (images are files with an image media type).
 * The response: `ai.response.text`, `ai.response.reasoning(Text)`, `ai.response.toolCalls`
 * (JSON), `ai.response.object`, `ai.response.id` (the reply's `extras.id`); usage as
 * `ai.usage.promptTokens` / `completionTokens` (v4) or `inputTokens` / `outputTokens`
 * (v5+) with cached-input and reasoning counts; time to
 * first token from `ai.response.msToFirstChunk` or the `ai.stream.firstChunk` event.
 *
 * The SDK also writes a few `gen_ai.*` attributes on the same spans; this adapter is
 * asked before the GenAI one so those spans are read with their full AI SDK detail.
 * Spans without `ai.operationId` (the v7 SDK's GenAI-convention spans) are left to
 * the GenAI adapter.
 */
import type { ContentBlock, Message, UsageMetadata } from "../../src/format/schema.js";
import { parseToolArgs } from "../common/args.js";
import { parseDataUrl } from "../common/dataurl.js";
import { attrJson, jsonOrText } from "../common/attrs.js";
import { fail, isObj, type Obj, checkedUsage, put } from "../common/guards.js";
import { markOrphans, withUnmapped, type Unmapped } from "../common/content.js";
import { sniffMime } from "../common/mime.js";
import { providerName } from "../otel-genai/index.js";
import type { Attributes, SpanAdapter, SpanResult } from "../spans.js";

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const num = (a: Attributes, ...keys: string[]): number | undefined => {
  for (const k of keys) if (typeof a[k] === "number") return a[k] as number;
  return undefined;
};

const kindOf = (mime: string | undefined, fallback: "image" | "file") =>
  mime?.startsWith("image/")
    ? "image"
    : mime?.startsWith("audio/")
      ? "audio"
      : mime?.startsWith("video/")
        ? "video"
        : mime
          ? "file"
          : fallback;

/** An image or file part; `fallback` is the kind when no media type says otherwise (v4 image parts). */
function media(data: unknown, givenMime: string | undefined, loc: string, fallback: "image" | "file" = "file"): ContentBlock {
  const d = typeof data === "string" ? parseDataUrl(data) : undefined;
  const mime = givenMime ?? d?.mime_type;
  const type = kindOf(mime, fallback);
  if (typeof data !== "string") {
    // Bytes serialized by JSON.stringify: {"0": 137, "1": 80, ...}
    if (isObj(data)) {
      const base64 = Buffer.from(Object.values(data).map((n) => (typeof n === "number" ? n : 0))).toString("base64");
      return { type, base64, mime_type: mime ?? sniffMime(base64) };
    }
    return fail([loc], "expected a URL, base64 text or bytes", "string_type");
  }
  if (d) return { type, base64: d.base64, mime_type: mime ?? d.mime_type };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(data)) return { type, url: data, ...(mime ? { mime_type: mime } : {}) };
  // validate needs a mime_type with base64: the bytes' header names it when the SDK did not.
  return { type, base64: data, mime_type: mime ?? sniffMime(data) };
}

function toolOutput(p: Obj): { content: ContentBlock[]; isError: boolean } {
  if ("result" in p)
    return {
      content: p.result === undefined ? [] : [{ type: "text", text: typeof p.result === "string" ? p.result : JSON.stringify(p.result) }],
      isError: p.isError === true,
    };
  const o = p.output;
  if (isObj(o) && typeof o.type === "string") {
    const isError = o.type.startsWith("error");
    if (o.type === "text" || o.type === "error-text") return { content: [{ type: "text", text: String(o.value ?? "") }], isError };
    if (o.type === "content" && Array.isArray(o.value)) {
      return {
        content: o.value.map((c: unknown) =>
          isObj(c) && c.type === "text"
            ? { type: "text" as const, text: String(c.text ?? "") }
            : isObj(c) && c.type === "media"
              ? media(c.data, str(c.mediaType), "output")
              : { type: "text" as const, text: JSON.stringify(c) },
        ),
        isError,
      };
    }
    return { content: [{ type: "text", text: JSON.stringify(o.value) }], isError };
  }
  return { content: o === undefined ? [] : [{ type: "text", text: typeof o === "string" ? o : JSON.stringify(o) }], isError: false };
}

function parts(content: unknown, loc: string): { blocks: ContentBlock[]; results: Message[]; unmapped: Unmapped[] } {
  if (typeof content === "string") return { blocks: [{ type: "text", text: content }], results: [], unmapped: [] };
  if (!Array.isArray(content)) fail([loc], "expected a string or an array of parts", "list_type");
  const blocks: ContentBlock[] = [];
  const results: Message[] = [];
  const unmapped: Unmapped[] = [];
  content.forEach((p, i) => {
    const at = `${loc}[${i}]`;
    if (!isObj(p)) fail([at], "expected a part object", "object_type");
    switch (p.type) {
      case "text":
        blocks.push({ type: "text", text: String(p.text ?? "") });
        break;
      case "reasoning":
      case "redacted-reasoning":
        blocks.push({
          type: "reasoning",
          text: String(p.text ?? p.data ?? ""),
          ...(p.type === "redacted-reasoning" ? { extras: { redacted: true } } : {}),
        });
        break;
      case "image":
        blocks.push(media(p.image, str(p.mediaType) ?? str(p.mimeType), `${at}.image`, "image"));
        break;
      case "file":
        blocks.push(media(p.data, str(p.mediaType) ?? str(p.mimeType), `${at}.data`));
        break;
      case "tool-call": {
        const { args, extras } = parseToolArgs("input" in p ? p.input : p.args);
        blocks.push({ type: "tool_call", id: str(p.toolCallId), name: str(p.toolName) ?? "", args, ...(extras ? { extras } : {}) });
        break;
      }
      case "tool-result": {
        const { content: c, isError } = toolOutput(p);
        const m: Message = { role: "tool", content: c, ...(typeof p.toolCallId === "string" ? { tool_call_id: p.toolCallId } : {}) };
        const extras: Obj = {};
        if (typeof p.toolName === "string") extras.name = p.toolName;
        if (isError) extras.is_error = true;
        if (Object.keys(extras).length) m.extras = extras;
        results.push(m);
        break;
      }
      default:
        // DESIGN: a part type the adapter does not know is kept whole, in order.
        unmapped.push({ index: i, part: p });
    }
  });
  return { blocks, results, unmapped };
}

function promptMessages(a: Attributes): Message[] | undefined {
  const list = attrJson(a, "ai.prompt.messages");
  if (list === undefined) return undefined;
  if (!Array.isArray(list)) fail(["ai.prompt.messages"], "expected an array of messages", "list_type");
  const out: Message[] = [];
  list.forEach((m, i) => {
    const loc = `ai.prompt.messages[${i}]`;
    if (!isObj(m) || typeof m.role !== "string") fail([loc, "role"], "expected a message with a role", "string_type");
    const { blocks, results, unmapped } = parts(m.content, `${loc}.content`);
    if (m.role === "tool") {
      // A tool turn is its results; parts of unknown types ride on the first one.
      if (unmapped.length) {
        const first = results[0] ?? { role: "tool", content: [] };
        first.extras = withUnmapped(first.extras, unmapped);
        if (!results.length) results.push(first);
      }
      out.push(...results);
    } else {
      const role = m.role === "system" || m.role === "user" || m.role === "assistant" ? m.role : "user";
      const extras = withUnmapped(role !== m.role ? { vendor_role: m.role } : undefined, unmapped);
      out.push({ role, content: blocks, ...(extras ? { extras } : {}) });
      out.push(...results);
    }
  });
  return markOrphans(out);
}

function responseMessage(a: Attributes): Message[] | undefined {
  const content: ContentBlock[] = [];
  const reasoning = str(a["ai.response.reasoningText"]) ?? str(a["ai.response.reasoning"]);
  if (reasoning) content.push({ type: "reasoning", text: reasoning });
  const text = str(a["ai.response.text"]);
  if (text) content.push({ type: "text", text });
  const object = a["ai.response.object"];
  if (typeof object === "string") content.push({ type: "text", text: object, extras: { structured_output: true } });
  const calls = attrJson(a, "ai.response.toolCalls");
  if (calls !== undefined) {
    if (!Array.isArray(calls)) fail(["ai.response.toolCalls"], "expected an array of tool calls", "list_type");
    for (const c of calls) {
      if (!isObj(c)) continue;
      const { args, extras } = parseToolArgs("input" in c ? c.input : c.args);
      content.push({ type: "tool_call", id: str(c.toolCallId), name: str(c.toolName) ?? "", args, ...(extras ? { extras } : {}) });
    }
  }
  const finish = str(a["ai.response.finishReason"]);
  if (content.length === 0 && !finish) return undefined;
  const extras: Record<string, unknown> = {};
  if (finish) extras.finish_reason = finish;
  // The response's id, where a vendor adapter keeps it (the wrappers' `extras.id`).
  const id = str(a["ai.response.id"]);
  if (id) extras.id = id;
  return [{ role: "assistant", content, ...(Object.keys(extras).length ? { extras } : {}) }];
}

function usage(a: Attributes): UsageMetadata | undefined {
  const input = num(a, "ai.usage.inputTokens", "ai.usage.promptTokens");
  const output = num(a, "ai.usage.outputTokens", "ai.usage.completionTokens");
  if (input === undefined && output === undefined) return undefined;
  const u: UsageMetadata = {
    input_tokens: input ?? 0,
    output_tokens: output ?? 0,
    total_tokens: num(a, "ai.usage.totalTokens") ?? (input ?? 0) + (output ?? 0),
  };
  const cacheRead = num(a, "ai.usage.inputTokenDetails.cacheReadTokens", "ai.usage.cachedInputTokens");
  const cacheWrite = num(a, "ai.usage.inputTokenDetails.cacheWriteTokens");
  const reasoning = num(a, "ai.usage.outputTokenDetails.reasoningTokens", "ai.usage.reasoningTokens");
  if (cacheRead || cacheWrite)
    u.input_token_details = { ...(cacheRead ? { cache_read: cacheRead } : {}), ...(cacheWrite ? { cache_creation: cacheWrite } : {}) };
  if (reasoning) u.output_token_details = { reasoning };
  return checkedUsage(u, ["ai.usage"]);
}

function params(a: Attributes): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  for (const k in a) if (k.startsWith("ai.settings.") && a[k] !== undefined) put(out, k.slice("ai.settings.".length), a[k]);
  const tools = a["ai.prompt.tools"];
  if (Array.isArray(tools)) out.tools = tools.map((t) => (typeof t === "string" ? jsonOrText(t) : t));
  if (typeof a["ai.prompt.toolChoice"] === "string") out.tool_choice = jsonOrText(a["ai.prompt.toolChoice"]);
  return Object.keys(out).length ? out : undefined;
}

const MODEL_CALL = /^ai\.(generateText|streamText|generateObject|streamObject)\.do(Generate|Stream)$/;

export const vercelAi: SpanAdapter = {
  name: "vercel-ai",
  detect: (span) => typeof span.attributes["ai.operationId"] === "string" && String(span.attributes["ai.operationId"]).startsWith("ai."),
  read(span) {
    const a = span.attributes;
    const op = String(a["ai.operationId"]);
    const result: SpanResult = { convention: "vercel-ai", run_type: "chain" };
    // `openai.chat`, `anthropic.messages`: the part before the dot is the vendor.
    result.trace_provider = providerName(str(a["ai.model.provider"])?.split(".")[0]);
    result.trace_model_name = str(a["ai.response.model"]) ?? str(a["ai.model.id"]);
    const p = params(a);
    if (p) result.invocation_params = p;
    if (MODEL_CALL.test(op)) {
      result.run_type = "llm";
      result.input_messages = promptMessages(a);
      result.output_messages = responseMessage(a);
      result.usage_metadata = usage(a);
      const first = span.events.find((e) => e.name === "ai.stream.firstChunk");
      const ms =
        num(a, "ai.response.msToFirstChunk") ??
        (first ? (num(first.attributes, "ai.response.msToFirstChunk") ?? first.offsetMs) : undefined);
      if (ms !== undefined) result.time_to_first_token_ms = ms;
      return result;
    }
    if (op === "ai.toolCall") {
      result.run_type = "tool";
      result.inputs = {
        name: str(a["ai.toolCall.name"]),
        tool_call_id: str(a["ai.toolCall.id"]),
        args: jsonOrText(String(a["ai.toolCall.input"] ?? a["ai.toolCall.args"] ?? "{}")),
      };
      const out = a["ai.toolCall.output"] ?? a["ai.toolCall.result"];
      if (out !== undefined) result.outputs = { output: typeof out === "string" ? jsonOrText(out) : out };
      return result;
    }
    if (op.startsWith("ai.embed")) {
      result.run_type = "embedding";
      result.inputs = { values: a["ai.values"] ?? a["ai.value"] };
      return result;
    }
    const prompt = a["ai.prompt"];
    result.inputs = typeof prompt === "string" ? (isObj(jsonOrText(prompt)) ? (jsonOrText(prompt) as Obj) : { prompt }) : {};
    const outputs: Obj = {};
    if (typeof a["ai.response.text"] === "string") outputs.text = a["ai.response.text"];
    if (typeof a["ai.response.object"] === "string") outputs.object = jsonOrText(a["ai.response.object"]);
    if (Object.keys(outputs).length) result.outputs = outputs;
    const u = usage(a);
    if (u) result.usage_metadata = u;
    return result;
  },
};
