/**
 * OpenTelemetry GenAI semantic conventions, current (current.ts) and legacy
 * (legacy.ts), as a span adapter; the GenAI log events beside a span
 * (events.ts) are read the same way.
 *
 * Current (semconv 1.37+): `gen_ai.operation.name`, `gen_ai.provider.name`,
 * `gen_ai.input.messages` / `gen_ai.output.messages` / `gen_ai.system_instructions`,
 * `gen_ai.usage.input_tokens` / `output_tokens` with the cache and reasoning
 * counts, and `gen_ai.response.time_to_first_chunk` (seconds).
 *
 * Legacy: `gen_ai.system`, `gen_ai.usage.prompt_tokens` / `completion_tokens`,
 * the indexed prompt and completion attributes, the content events.
 *
 * When a span has both (an instrumentation in transition), the current
 * attributes win and the legacy ones are not read. Messages on the span win
 * over messages in its log records, side by side. A message attribute that
 * fails to parse is an issue in the result; provider, model, usage and every
 * message that did parse are kept.
 */
import type { Issue } from "../../src/errors.js";
import type { Message } from "../../src/format/schema.js";
import { parseToolArgs } from "../common/args.js";
import { jsonOrText } from "../common/attrs.js";
import { markOrphans } from "../common/content.js";
import type { SpanAdapter, SpanLike, SpanResult } from "../spans.js";
import { CURRENT, messageList, systemMessage } from "./current.js";
import { eventMessages, isGenAiEvent } from "./events.js";
import { attempt, invocationParams, num, providerName, runType, text, usage } from "./fields.js";
import { legacyEvents, legacyIndexed } from "./legacy.js";

export { providerName };
export { eventMessages, isGenAiEvent } from "./events.js";

type Sides = { input?: Message[]; output?: Message[] };

function currentMessages(a: SpanLike["attributes"], issues: Issue[]): Sides {
  const res: Sides = {};
  const system = attempt(issues, () => systemMessage(a));
  const input = attempt(issues, () => messageList(a, "gen_ai.input.messages"));
  if (system || input) res.input = markOrphans([...(system ? [system] : []), ...(input ?? [])]);
  const output = attempt(issues, () => messageList(a, "gen_ai.output.messages"));
  if (output) res.output = markOrphans(output);
  return res;
}

function legacyMessages(span: SpanLike, anthropic: boolean, issues: Issue[]): Sides {
  const a = span.attributes;
  const res: Sides = {};
  const input = attempt(issues, () => legacyIndexed(a, "gen_ai.prompt", anthropic));
  const output = attempt(issues, () => legacyIndexed(a, "gen_ai.completion", anthropic));
  const events = attempt(issues, () => legacyEvents(span)) ?? {};
  res.input = events.input ?? input;
  res.output = events.output ?? output;
  return res;
}

/** Whether the span says it follows the current conventions (then legacy attributes are not read). */
const isCurrent = (a: SpanLike["attributes"]) => a["gen_ai.provider.name"] !== undefined || CURRENT.some((k) => a[k] !== undefined);

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
    const issues: Issue[] = [];
    const onSpan = isCurrent(a) ? currentMessages(a, issues) : legacyMessages(span, result.trace_provider === "anthropic", issues);
    let input = onSpan.input;
    let output = onSpan.output;
    const logs = span.logs?.filter(isGenAiEvent);
    if (logs?.length && (!input || !output)) {
      const fromLogs = eventMessages(logs, issues);
      input ??= fromLogs.input;
      output ??= fromLogs.output;
    }
    result.input_messages = input;
    result.output_messages = output;
    result.usage_metadata = attempt(issues, () => usage(a, span.scope));
    const params = attempt(issues, () => invocationParams(a));
    if (params && Object.keys(params).length) result.invocation_params = params;
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
    if (issues.length) result.issues = issues;
    return result;
  },
};
