/**
 * One handler per Responses stream event type that changes an output item:
 * the deltas and their `.done` totals, added and finished parts, streamed
 * annotations and the progress events that move an item's status. Together
 * they fold every event openai-node's `ResponseAccumulator` folds, so a stream
 * cut after any event holds what that accumulator would hold. A handler
 * answers `true` when the event carried content (the first token), `false`
 * when it was folded, and `undefined` when the event does not fit (a field of
 * the wrong type, an item of another type): the stream keeps such events whole.
 */
import { isObj, type Obj } from "../common/guards.js";

/** The items being built, by output index; values handed out are the fold's own copies, safe to change. */
export interface ItemSource {
  /** The item at the event's `output_index`, made when absent (typed `type`); undefined when it holds another type. */
  item(e: Obj, type: string): Obj | undefined;
  /** `owner[key]` as an array the fold owns. */
  list(owner: Obj, key: string): unknown[];
  /** `list[i]` as an object the fold owns, made from `blank` when absent; undefined when it is not of `blank`'s type. */
  part(list: unknown[], i: number, blank: () => Obj): Obj | undefined;
}

export type Handler = (f: ItemSource, e: Obj) => boolean | undefined;

const index = (v: unknown): number => (typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : 0);
const text = (v: unknown): string => (typeof v === "string" ? v : "");

/** A text field of a part in one of an item's part lists (`content[content_index].text`, `summary[summary_index].text`, ...). */
function partText(itemType: string, listKey: string, indexKey: string, blank: () => Obj, field: string, done?: string): Handler {
  return (f, e) => {
    const v = done ? e[done] : e.delta;
    if (typeof v !== "string") return undefined;
    const item = f.item(e, itemType);
    const part = item && f.part(f.list(item, listKey), index(e[indexKey]), blank);
    if (!part) return undefined;
    part[field] = done ? v : text(part[field]) + v;
    return !done && v !== "";
  };
}

/** A text field of the item itself (`arguments`, `input`, `code`). */
function itemText(itemType: string, field: string, done?: string): Handler {
  return (f, e) => {
    const v = done ? e[done] : e.delta;
    if (typeof v !== "string") return undefined;
    const item = f.item(e, itemType);
    if (!item) return undefined;
    item[field] = done ? v : text(item[field]) + v;
    return !done && v !== "";
  };
}

/** A whole part, added or finished, at its index in the item's list. */
function wholePart(listKey: string, indexKey: string): Handler {
  return (f, e) => {
    const p = e.part;
    if (!isObj(p)) return undefined;
    // A reasoning_text part belongs to a reasoning item; every other content part to a message.
    const itemType = listKey === "summary" || p.type === "reasoning_text" ? "reasoning" : "message";
    const item = f.item(e, itemType);
    if (!item) return undefined;
    f.list(item, listKey)[index(e[indexKey])] = { ...p };
    return false;
  };
}

/** A progress event (`response.web_search_call.searching`, ...): the item's status. */
function status(itemType: string, value: string): Handler {
  return (f, e) => {
    const item = f.item(e, itemType);
    if (!item) return undefined;
    item.status = value;
    return false;
  };
}

const outputText = (): Obj => ({ type: "output_text", text: "", annotations: [] });
const refusal = (): Obj => ({ type: "refusal", refusal: "" });
const reasoningText = (): Obj => ({ type: "reasoning_text", text: "" });
const summaryText = (): Obj => ({ type: "summary_text", text: "" });

const annotation: Handler = (f, e) => {
  if (!isObj(e.annotation)) return undefined;
  const item = f.item(e, "message");
  const part = item && f.part(f.list(item, "content"), index(e.content_index), outputText);
  if (!part) return undefined;
  const list = f.list(part, "annotations");
  if (typeof e.annotation_index === "number" && Number.isSafeInteger(e.annotation_index) && e.annotation_index >= 0)
    list[e.annotation_index] = e.annotation;
  else list.push(e.annotation);
  return false;
};

export const HANDLERS: Readonly<Record<string, Handler>> = {
  "response.content_part.added": wholePart("content", "content_index"),
  "response.content_part.done": wholePart("content", "content_index"),
  "response.output_text.delta": partText("message", "content", "content_index", outputText, "text"),
  "response.output_text.done": partText("message", "content", "content_index", outputText, "text", "text"),
  "response.output_text.annotation.added": annotation,
  "response.refusal.delta": partText("message", "content", "content_index", refusal, "refusal"),
  "response.refusal.done": partText("message", "content", "content_index", refusal, "refusal", "refusal"),
  "response.reasoning_text.delta": partText("reasoning", "content", "content_index", reasoningText, "text"),
  "response.reasoning_text.done": partText("reasoning", "content", "content_index", reasoningText, "text", "text"),
  "response.reasoning_summary_part.added": wholePart("summary", "summary_index"),
  "response.reasoning_summary_part.done": wholePart("summary", "summary_index"),
  "response.reasoning_summary_text.delta": partText("reasoning", "summary", "summary_index", summaryText, "text"),
  "response.reasoning_summary_text.done": partText("reasoning", "summary", "summary_index", summaryText, "text", "text"),
  "response.function_call_arguments.delta": itemText("function_call", "arguments"),
  "response.function_call_arguments.done": itemText("function_call", "arguments", "arguments"),
  "response.custom_tool_call_input.delta": itemText("custom_tool_call", "input"),
  "response.custom_tool_call_input.done": itemText("custom_tool_call", "input", "input"),
  "response.mcp_call_arguments.delta": itemText("mcp_call", "arguments"),
  "response.mcp_call_arguments.done": itemText("mcp_call", "arguments", "arguments"),
  "response.code_interpreter_call_code.delta": itemText("code_interpreter_call", "code"),
  "response.code_interpreter_call_code.done": itemText("code_interpreter_call", "code", "code"),
};

const PROGRESS: Record<string, readonly string[]> = {
  code_interpreter_call: ["in_progress", "interpreting", "completed"],
  file_search_call: ["in_progress", "searching", "completed"],
  web_search_call: ["in_progress", "searching", "completed"],
  image_generation_call: ["in_progress", "generating", "completed"],
  mcp_call: ["in_progress", "completed", "failed"],
};
for (const [itemType, values] of Object.entries(PROGRESS))
  for (const v of values) (HANDLERS as Record<string, Handler>)[`response.${itemType}.${v}`] = status(itemType, v);

/**
 * Events the accumulator knows and folds into nothing: audio (not part of a
 * response object), preview images the finished item supersedes, MCP tool
 * listing progress, keep-alives.
 */
export const STATELESS: ReadonlySet<string> = new Set([
  "response.audio.delta",
  "response.audio.done",
  "response.audio.transcript.delta",
  "response.audio.transcript.done",
  "response.image_generation_call.partial_image",
  "response.mcp_list_tools.in_progress",
  "response.mcp_list_tools.completed",
  "response.mcp_list_tools.failed",
  "keepalive",
]);
