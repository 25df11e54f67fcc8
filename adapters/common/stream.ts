/**
 * What every stream folder shares: each chunk's index and the first content
 * (`push`'s answer); a whole stream is a fresh accumulator fed
 * every chunk; the stream's own facts (an error event, events or blocks kept
 * whole) go on the first message's extras; and a choices stream (chat, legacy
 * completions) puts its usage and chunk-level fields on the first choice.
 */
import type { Message, UsageMetadata } from "../../src/format/schema.js";
import type { Adapter, ResponseContext, ResponseResult, StreamAccumulator } from "../types.js";
import { describe, fail, type Obj, put } from "./guards.js";

/**
 * Where an accumulator is in its stream: the index of the chunk being pushed
 * (where an error in it is reported), whether content has come yet, which
 * `push` answers true for once (the caller stamps the `new_token` event then),
 * and the events it does not know, kept whole for `extras.unmapped_events`.
 */
export class StreamProgress {
  private n = 0;
  private seenContent = false;
  private unknown?: unknown[];

  /** The index of the chunk now pushed (call once per push). */
  next(): number {
    return this.n++;
  }

  /** The chunk now pushed carried content: whether it is the first that did. */
  firstContent(): boolean {
    if (this.seenContent) return false;
    this.seenContent = true;
    return true;
  }

  keepUnknown(event: unknown): void {
    (this.unknown ??= []).push(event);
  }

  /** The events kept so far, in a list of their own (later pushes do not grow a result's), or undefined when none. */
  unknownEvents(): unknown[] | undefined {
    return this.unknown && [...this.unknown];
  }
}

/**
 * An adapter's two stream readers over one accumulator: `createStreamAccumulator`
 * for a stream seen chunk by chunk, `normalizeStream` for a whole one (`what`
 * names its chunks in the error when it is not an array).
 */
export function streamReaders(
  make: (ctx?: ResponseContext) => StreamAccumulator,
  what: string,
): Pick<Adapter, "createStreamAccumulator" | "normalizeStream"> {
  return { createStreamAccumulator: make, normalizeStream: (chunks, ctx) => foldStream(chunks, make(ctx), what) };
}

/** `chunks` folded by `acc`, a fresh accumulator; `what` names the chunks for the error when `chunks` is not an array. */
export function foldStream(chunks: readonly unknown[], acc: StreamAccumulator, what: string): ResponseResult {
  if (!Array.isArray(chunks)) fail([], `expected an array of ${what}, got ${describe(chunks)}`, "list_type");
  for (const c of chunks) acc.push(c);
  return acc.result();
}

/** `extras` laid over the first message's own (undefined values skipped; nothing set when all are). */
export function onFirstMessage(result: ResponseResult, extras: Obj): ResponseResult {
  const m = result.messages[0];
  if (!m) return result;
  let add: Obj | undefined;
  for (const k in extras) if (extras[k] !== undefined) put((add ??= {}), k, extras[k]);
  if (add) m.extras = { ...m.extras, ...add };
  return result;
}

export interface ChoicesTail {
  usage?: UsageMetadata;
  /** Chunk-level fields kept for the first message (its own extras win a clash). */
  meta?: Obj;
  model?: string;
  /** The first choice's finish reason. */
  stop?: unknown;
}

/** A choices stream's accumulated choices (keyed by their index) in index order. */
export function inIndexOrder<C>(choices: ReadonlyMap<number, C>): C[] {
  return [...choices.entries()].sort((a, b) => a[0] - b[0]).map((e) => e[1]);
}

/** A choices stream's result: one message per choice (one empty message when only usage or chunk fields came), usage and chunk fields on the first. */
export function choicesResult(messages: Message[], tail: ChoicesTail): ResponseResult {
  const meta = tail.meta && Object.keys(tail.meta).length ? tail.meta : undefined;
  if (messages.length === 0 && (tail.usage || meta)) messages.push({ role: "assistant", content: [] });
  const first = messages[0];
  if (first) {
    if (tail.usage) first.usage_metadata = tail.usage;
    if (meta) first.extras = { ...meta, ...first.extras };
  }
  const result: ResponseResult = { messages, trace_provider: "openai" };
  if (tail.model !== undefined) result.trace_model_name = tail.model;
  if (tail.usage) result.usage_metadata = tail.usage;
  if (typeof tail.stop === "string") result.stop_reason = tail.stop;
  return result;
}
