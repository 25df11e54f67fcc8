/**
 * OpenTelemetry GenAI semantic conventions, current (current.ts) and legacy
 * (legacy.ts), as a span adapter; the GenAI log events beside a span
 * (events.ts) are read the same way.
 *
 * Current (semconv 1.37+): `gen_ai.operation.name`, `gen_ai.provider.name`,
 * `gen_ai.input.messages` / `gen_ai.output.messages` / `gen_ai.system_instructions`,
 * `gen_ai.usage.input_tokens` / `output_tokens` with the cache and reasoning
 * counts, `gen_ai.response.time_to_first_chunk` (seconds), and
 * `gen_ai.response.id` as the reply's `extras.id`.
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
import type { LogRecordLike, SpanAdapter, SpanLike, SpanResult } from "../spans.js";
import { CURRENT, messageList, systemMessage } from "./current.js";
import { eventMessages, isGenAiEvent } from "./events.js";
import { attempt, invocationParams, num, providerName, runType, text, usage } from "./fields.js";
import { legacyEvents, legacyIndexed } from "./legacy.js";

export { providerName };
export { eventMessages, isGenAiEvent } from "./events.js";

type Sides = { system?: Message; input?: Message[]; output?: Message[] };

function currentMessages(a: SpanLike["attributes"], issues: Issue[]): Sides {
  return {
    system: attempt(issues, () => systemMessage(a)),
    input: attempt(issues, () => messageList(a, "gen_ai.input.messages")),
    output: attempt(issues, () => messageList(a, "gen_ai.output.messages")),
  };
}

function legacyMessages(span: SpanLike, anthropic: boolean, issues: Issue[]): Sides {
  const a = span.attributes;
  const input = attempt(issues, () => legacyIndexed(a, "gen_ai.prompt", anthropic));
  const output = attempt(issues, () => legacyIndexed(a, "gen_ai.completion", anthropic));
  const events = attempt(issues, () => legacyEvents(span)) ?? {};
  return { input: events.input ?? input, output: events.output ?? output };
}

/**
 * The span's messages, side by side completed from its log records: the
 * span's own list wins; the system instructions on the span lead the logs'
 * input unless that input already starts with a system message (the OpenAI
 * instrumentation writes the Responses API's instructions in both places).
 */
function joined(onSpan: Sides, logs: readonly LogRecordLike[] | undefined, issues: Issue[]): { input?: Message[]; output?: Message[] } {
  let input = onSpan.input;
  let output = onSpan.output;
  const genai = logs?.filter(isGenAiEvent);
  if (genai?.length && (!input || !output)) {
    const fromLogs = eventMessages(genai, issues);
    if (!input && fromLogs.input)
      input = onSpan.system && fromLogs.input[0]?.role !== "system" ? [onSpan.system, ...fromLogs.input] : fromLogs.input;
    output ??= fromLogs.output;
  }
  if (onSpan.system && input === onSpan.input) input = [onSpan.system, ...(input ?? [])];
  return { input: input && markOrphans(input), output: output && markOrphans(output) };
}

/** Whether the span says it follows the current conventions (then legacy attributes are not read). */
const isCurrent = (a: SpanLike["attributes"]) => a["gen_ai.provider.name"] !== undefined || CURRENT.some((k) => a[k] !== undefined);

export const otelGenAi: SpanAdapter = {
  name: "otel-genai",
  detect(span) {
    const a = span.attributes;
    if (a["gen_ai.operation.name"] !== undefined || a["gen_ai.system"] !== undefined || a["gen_ai.provider.name"] !== undefined)
      return true;
    for (const k in a)
      if (
        k.startsWith("gen_ai.prompt.") ||
        k.startsWith("gen_ai.completion.") ||
        k.startsWith("gen_ai.input.") ||
        k.startsWith("gen_ai.output.")
      )
        return true;
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
      result.inputs = {
        name: text(a, "gen_ai.tool.name"),
        tool_call_id: text(a, "gen_ai.tool.call.id"),
        args: typeof args === "string" ? parseToolArgs(args).args : args,
      };
      const res = a["gen_ai.tool.call.result"];
      if (res !== undefined) result.outputs = { output: typeof res === "string" ? jsonOrText(res) : res };
      return result;
    }
    if (type === "embedding") return result;
    const issues: Issue[] = [];
    const onSpan = isCurrent(a) ? currentMessages(a, issues) : legacyMessages(span, result.trace_provider === "anthropic", issues);
    const { input, output } = joined(onSpan, span.logs, issues);
    result.input_messages = input;
    result.output_messages = output;
    // The response's id, where a vendor adapter keeps it: on the reply (the wrappers' `extras.id`).
    const responseId = text(a, "gen_ai.response.id");
    const reply = output?.[0];
    if (responseId !== undefined && reply && reply.extras?.id === undefined) reply.extras = { ...reply.extras, id: responseId };
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
