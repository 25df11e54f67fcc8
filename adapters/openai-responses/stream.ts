/**
 * The Responses API event stream, folded one event at a time. Events carry
 * whole items (`response.output_item.added/done`), deltas into them (text,
 * refusal, function-call arguments, reasoning summary and text), and whole
 * responses (`response.created`, `response.completed` / `incomplete` / `failed`).
 * The result is always built as a response object and read by normalizeResponse:
 * the final response when it arrived, else the items so far with their deltas
 * applied (a cancelled stream keeps its partial output).
 */
import type { ResponseResult, StreamAccumulator } from "../types.js";
import { describe, fail, isObj, type Obj } from "../common/guards.js";
import { normalizeResponse } from "./response.js";

interface ItemAcc {
  item: Obj;
  /** Set by `response.output_item.done`: the item is final, deltas no longer apply. */
  done: boolean;
  text: Map<number, string[]>;
  refusal: Map<number, string[]>;
  args: string[];
  summary: Map<number, string[]>;
  reasoning: Map<number, string[]>;
}

const FINAL = new Set(["response.completed", "response.incomplete", "response.failed"]);
/** Delta events that carry content, and the accumulator map each folds into. */
const DELTAS: Record<string, "text" | "refusal" | "args" | "summary" | "reasoning"> = {
  "response.output_text.delta": "text",
  "response.refusal.delta": "refusal",
  "response.function_call_arguments.delta": "args",
  "response.custom_tool_call_input.delta": "args",
  "response.reasoning_summary_text.delta": "summary",
  "response.reasoning_text.delta": "reasoning",
};

function append(map: Map<number, string[]>, i: number, s: string): void {
  const list = map.get(i);
  if (list) list.push(s);
  else map.set(i, [s]);
}

export class ResponsesStreamAccumulator implements StreamAccumulator {
  private readonly items = new Map<number, ItemAcc>();
  private response?: Obj;
  private final = false;
  private error?: unknown;
  private seenContent = false;
  private n = 0;

  push(event: unknown): boolean {
    const ei = this.n++;
    if (!isObj(event)) fail([ei], `expected a Responses stream event object, got ${describe(event)}`, "object_type");
    const type = event.type;
    if (typeof type !== "string") fail([ei, "type"], `expected a string, got ${describe(type)}`, "string_type");
    if (type === "error") {
      this.error = { ...event };
      return false;
    }
    if (isObj(event.response) && type.startsWith("response.") && !this.final) {
      this.response = event.response;
      this.final = FINAL.has(type);
      return false;
    }
    const oi = typeof event.output_index === "number" ? event.output_index : undefined;
    if (oi === undefined) return false;
    if (type === "response.output_item.added" || type === "response.output_item.done") {
      if (!isObj(event.item)) fail([ei, "item"], `expected an object, got ${describe(event.item)}`, "object_type");
      const acc = this.acc(oi);
      acc.item = event.item;
      acc.done = type === "response.output_item.done";
      return false;
    }
    const kind = Object.hasOwn(DELTAS, type) ? DELTAS[type] : undefined;
    if (!kind || typeof event.delta !== "string") return false; // progress events (searching, in_progress, ...) carry no content
    const acc = this.acc(oi);
    if (kind === "args") acc.args.push(event.delta);
    else {
      const idx = kind === "summary" ? event.summary_index : event.content_index;
      append(acc[kind], typeof idx === "number" ? idx : 0, event.delta);
    }
    if (event.delta === "" || this.seenContent) return false;
    this.seenContent = true;
    return true;
  }

  private acc(oi: number): ItemAcc {
    let acc = this.items.get(oi);
    if (!acc) {
      acc = { item: {}, done: false, text: new Map(), refusal: new Map(), args: [], summary: new Map(), reasoning: new Map() };
      this.items.set(oi, acc);
    }
    return acc;
  }

  /** An item still streaming: its deltas laid over the item as announced. */
  private static partial(acc: ItemAcc): Obj {
    if (acc.done) return acc.item;
    const item: Obj = { ...acc.item };
    if (acc.text.size || acc.refusal.size) {
      item.type ??= "message";
      const content = Array.isArray(item.content) ? [...item.content] : [];
      for (const [ci, parts] of acc.text) content[ci] = { ...(isObj(content[ci]) ? content[ci] : { annotations: [] }), type: "output_text", text: parts.join("") };
      for (const [ci, parts] of acc.refusal) content[ci] = { type: "refusal", refusal: parts.join("") };
      item.content = content.filter((c) => c !== undefined);
    }
    if (acc.args.length) item[item.type === "custom_tool_call" ? "input" : "arguments"] = acc.args.join("");
    for (const [key, map, partType] of [["summary", acc.summary, "summary_text"], ["content", acc.reasoning, "reasoning_text"]] as const) {
      if (!map.size) continue;
      item.type ??= "reasoning";
      const list = Array.isArray(item[key]) ? [...(item[key] as unknown[])] : [];
      for (const [i, parts] of map) list[i] = { type: partType, text: parts.join("") };
      item[key] = list.filter((c) => c !== undefined);
    }
    return item;
  }

  result(): ResponseResult {
    let body: Obj;
    if (this.final && this.response) body = this.response;
    else {
      const items = [...this.items.entries()].sort((a, b) => a[0] - b[0]).map(([, acc]) => ResponsesStreamAccumulator.partial(acc));
      body = { ...this.response, output: items };
    }
    if (this.error !== undefined) body = { ...body, error: this.error };
    return normalizeResponse(body);
  }
}

export function createStreamAccumulator(): StreamAccumulator {
  return new ResponsesStreamAccumulator();
}

export function normalizeStream(events: readonly unknown[]): ResponseResult {
  if (!Array.isArray(events)) fail([], `expected an array of events, got ${describe(events)}`, "list_type");
  const acc = new ResponsesStreamAccumulator();
  for (const e of events) acc.push(e);
  return acc.result();
}
