/**
 * The Responses API event stream, folded one event at a time. Events carry
 * whole items (`response.output_item.added/done`), changes to them (events.ts:
 * deltas, `.done` totals, parts, annotations, status) and whole responses
 * (`response.created`, `response.completed` / `incomplete` / `failed`).
 * The result is always built as a response object and read by normalizeResponse:
 * the final response when it arrived, else the items so far with their changes
 * applied (a cancelled stream keeps its partial output). An event the fold
 * does not know, or one that does not fit the item it names, is kept whole in
 * the message's `extras.unmapped_events`.
 */
import type { ResponseResult, StreamAccumulator } from "../types.js";
import { describe, fail, isObj, type Obj } from "../common/guards.js";
import { normalizeResponse } from "./response.js";
import { HANDLERS, STATELESS, type ItemSource } from "./events.js";
import { onFirstMessage, StreamProgress, streamReaders } from "../common/stream.js";

const LIFECYCLE = new Set([
  "response.created",
  "response.queued",
  "response.in_progress",
  "response.completed",
  "response.incomplete",
  "response.failed",
]);
const FINAL = new Set(["response.completed", "response.incomplete", "response.failed"]);

/** Items by output index. Items, lists and parts the events hand in are copied before the fold first changes them. */
class Items implements ItemSource {
  readonly byIndex = new Map<number, Obj>();
  private readonly owned = new WeakSet<object>();

  set(oi: number, item: Obj): void {
    const own = { ...item };
    this.owned.add(own);
    this.byIndex.set(oi, own);
  }

  item(e: Obj, type: string): Obj | undefined {
    const oi = e.output_index as number;
    let item = this.byIndex.get(oi);
    if (!item) this.set(oi, { type });
    item = this.byIndex.get(oi)!;
    // An item announced without a type takes the one its first change implies.
    item.type ??= type;
    return item.type === type ? item : undefined;
  }

  list(owner: Obj, key: string): unknown[] {
    const v = owner[key];
    if (Array.isArray(v) && this.owned.has(v)) return v;
    const own = Array.isArray(v) ? [...v] : [];
    this.owned.add(own);
    owner[key] = own;
    return own;
  }

  part(list: unknown[], i: number, blank: () => Obj): Obj | undefined {
    const p = list[i];
    const b = blank();
    if (!isObj(p)) {
      this.owned.add(b);
      return (list[i] = b);
    }
    if (p.type !== b.type) return undefined;
    if (this.owned.has(p)) return p;
    const own = { ...p };
    this.owned.add(own);
    return (list[i] = own);
  }
}

/** An item as a response carries it: part lists without the gaps a part set out of order leaves. */
function settled(item: Obj): Obj {
  let out = item;
  for (const key of ["content", "summary"]) {
    const v = item[key];
    if (Array.isArray(v) && v.includes(undefined)) out = { ...out, [key]: v.filter((p) => p !== undefined) };
  }
  return out;
}

export class ResponsesStreamAccumulator implements StreamAccumulator {
  private readonly items = new Items();
  private response?: Obj;
  private final = false;
  private error?: unknown;
  private readonly progress = new StreamProgress();

  push(event: unknown): boolean {
    const ei = this.progress.next();
    if (!isObj(event)) fail([ei], `expected a Responses stream event object, got ${describe(event)}`, "object_type");
    const type = event.type;
    if (typeof type !== "string") fail([ei, "type"], `expected a string, got ${describe(type)}`, "string_type");
    if (type === "error") {
      this.error = { ...event };
      return false;
    }
    if (LIFECYCLE.has(type) && isObj(event.response)) {
      // A response after the final one (a replay, a duplicate) does not reopen it.
      if (!this.final) {
        this.response = event.response;
        this.final = FINAL.has(type);
      }
      return false;
    }
    if (STATELESS.has(type)) return false;
    const oi = event.output_index;
    const handler = Object.hasOwn(HANDLERS, type) ? HANDLERS[type] : undefined;
    if (
      typeof oi !== "number" ||
      (handler === undefined && type !== "response.output_item.added" && type !== "response.output_item.done")
    ) {
      this.progress.keepUnknown(event);
      return false;
    }
    if (!handler) {
      if (!isObj(event.item)) fail([ei, "item"], `expected an object, got ${describe(event.item)}`, "object_type");
      this.items.set(oi, event.item);
      return false;
    }
    const content = handler(this.items, event);
    if (content === undefined) this.progress.keepUnknown(event);
    return content === true && this.progress.firstContent();
  }

  result(): ResponseResult {
    let body: Obj;
    if (this.final && this.response) body = this.response;
    else {
      const items = [...this.items.byIndex.entries()].sort((a, b) => a[0] - b[0]).map(([, item]) => settled(item));
      body = { ...this.response, output: items };
    }
    if (this.error !== undefined) body = { ...body, error: this.error };
    return onFirstMessage(normalizeResponse(body), { unmapped_events: this.progress.unknownEvents() });
  }
}

export const { createStreamAccumulator, normalizeStream } = streamReaders(() => new ResponsesStreamAccumulator(), "events");
