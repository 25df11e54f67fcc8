/**
 * ConverseStream events, folded one at a time, as the SDK yields them: union
 * objects with one member each, `{messageStart}`, `{contentBlockStart}`,
 * `{contentBlockDelta}`, `{contentBlockStop}`, `{messageStop}`, `{metadata}`,
 * or an exception (`{throttlingException: {message}}`, ...).
 *
 * The fold rebuilds a Converse response (blocks by `contentBlockIndex`, text and
 * tool-input JSON collected as pieces and joined once in result(), so a push
 * costs a few property reads) and reads it with normalizeResponse, so a stream
 * and a response of the same reply normalize alike. An exception event is kept
 * on the message (`extras.stream_error`) with the partial output; it does not
 * throw. Events this adapter does not know are kept in `extras.unmapped_events`;
 * so are the members of `contentBlockDelta.delta` it does not know (Bedrock
 * models both as open unions and adds members), as their event with only those
 * members. A block whose `contentBlockStart.start` names only members it does
 * not know is kept in `extras.unmapped_content` as `{index: contentBlockIndex, part: start}`.
 */
import type { ResponseResult, StreamAccumulator } from "../types.js";
import { describe, fail, isObj, type Obj, put, putAll } from "../common/guards.js";
import { normalizeResponse } from "./response.js";
import { toBase64 } from "./media.js";
import type { Unmapped } from "../common/content.js";
import { onFirstMessage, StreamProgress, streamReaders } from "../common/stream.js";

export const STREAM_EVENTS: ReadonlySet<string> = new Set([
  "messageStart",
  "contentBlockStart",
  "contentBlockDelta",
  "contentBlockStop",
  "messageStop",
  "metadata",
]);
const START_MEMBERS: ReadonlySet<string> = new Set(["toolUse", "toolResult", "image"]);
const DELTA_MEMBERS: ReadonlySet<string> = new Set(["text", "toolUse", "reasoningContent", "citation", "toolResult", "image"]);

/** The members of a union object not in `known`, or undefined when there are none. */
function unknownMembers(v: Obj, known: ReadonlySet<string>): Obj | undefined {
  let out: Obj | undefined;
  for (const k in v) if (!known.has(k) && v[k] !== undefined) put((out ??= {}), k, v[k]);
  return out;
}

export const STREAM_EXCEPTIONS: ReadonlySet<string> = new Set([
  "internalServerException",
  "modelStreamErrorException",
  "validationException",
  "throttlingException",
  "serviceUnavailableException",
]);

interface BlockAcc {
  /** What contentBlockStart said (`{toolUse: {toolUseId, name}}`, `{toolResult: {...}}`, `{image: {format}}`). */
  start?: Obj;
  text?: string[];
  toolInput?: string[];
  reasoning?: string[];
  signature?: string[];
  redacted?: string[];
  citations?: Obj[];
  toolResult?: Obj[];
  image?: Obj;
  /** Members of `start` this adapter does not know. */
  unknownStart?: Obj;
}

export class ConverseStreamAccumulator implements StreamAccumulator {
  private role?: unknown;
  private readonly blocks: BlockAcc[] = [];
  private stop: Obj = {};
  private meta: Obj = {};
  private errors?: Obj[];
  private readonly progress = new StreamProgress();

  push(event: unknown): boolean {
    const ei = this.progress.next();
    if (!isObj(event)) fail([ei], `expected a ConverseStream event object, got ${describe(event)}`, "object_type");
    let content = false;
    let known = false;
    for (const key in event) {
      const v = event[key];
      if (v === undefined) continue;
      if (STREAM_EXCEPTIONS.has(key)) {
        (this.errors ??= []).push({ [key]: v });
        known = true;
        continue;
      }
      if (!STREAM_EVENTS.has(key)) continue;
      known = true;
      if (!isObj(v)) fail([ei, key], `expected an object, got ${describe(v)}`, "object_type");
      switch (key) {
        case "messageStart":
          this.role = v.role;
          break;
        case "contentBlockStart": {
          const acc = this.block(v.contentBlockIndex);
          if (isObj(v.start)) {
            acc.start = v.start;
            const unknown = unknownMembers(v.start, START_MEMBERS);
            if (unknown) acc.unknownStart = { ...acc.unknownStart, ...unknown };
            // A tool's name (or a server tool's result) is output the caller sees: the first token.
            content = true;
          }
          break;
        }
        case "contentBlockDelta":
          if (isObj(v.delta)) {
            const unknown = unknownMembers(v.delta, DELTA_MEMBERS);
            const folded = this.delta(this.block(v.contentBlockIndex), v.delta, ei);
            // A known member of the wrong shape is kept too: the whole event, since no member of it was read.
            if (folded === undefined) this.progress.keepUnknown(event);
            else if (unknown) this.progress.keepUnknown({ contentBlockDelta: { ...v, delta: unknown } });
            if (folded) content = true;
          }
          break;
        case "messageStop":
          putAll(this.stop, v);
          break;
        case "metadata":
          putAll(this.meta, v);
          break;
        // contentBlockStop: nothing to fold.
      }
    }
    if (!known) this.progress.keepUnknown(event);
    return content && this.progress.firstContent();
  }

  private block(index: unknown): BlockAcc {
    const i = typeof index === "number" && Number.isSafeInteger(index) && index >= 0 ? index : Math.max(0, this.blocks.length - 1);
    return (this.blocks[i] ??= {});
  }

  /** One delta into its block; true when it carried content, undefined when no member of it could be read. */
  private delta(acc: BlockAcc, d: Obj, ei: number): boolean | undefined {
    if (typeof d.text === "string") {
      (acc.text ??= []).push(d.text);
      return d.text !== "";
    }
    if (isObj(d.toolUse)) {
      const input = d.toolUse.input;
      if (typeof input === "string") {
        (acc.toolInput ??= []).push(input);
        return input !== "";
      }
      return undefined;
    }
    if (isObj(d.reasoningContent)) {
      const r = d.reasoningContent;
      if (typeof r.text === "string") {
        (acc.reasoning ??= []).push(r.text);
        return r.text !== "";
      }
      if (typeof r.signature === "string") (acc.signature ??= []).push(r.signature);
      else if (r.redactedContent !== undefined && r.redactedContent !== null)
        (acc.redacted ??= []).push(toBase64(r.redactedContent, [ei, "contentBlockDelta", "delta", "reasoningContent", "redactedContent"]));
      else return undefined;
      return false;
    }
    if (isObj(d.citation)) {
      (acc.citations ??= []).push(d.citation);
      return false;
    }
    if (Array.isArray(d.toolResult)) {
      for (const part of d.toolResult) if (isObj(part)) (acc.toolResult ??= []).push(part);
      return d.toolResult.length > 0;
    }
    if (isObj(d.image)) {
      acc.image = { ...acc.image, ...d.image };
      return true;
    }
    return undefined;
  }

  /** A folded block as the Converse block a response would have carried; undefined when nothing known was folded. */
  private static knownBlock(acc: BlockAcc): Obj | undefined {
    const start = acc.start ?? {};
    if (isObj(start.toolUse)) {
      // Tool input arrives as JSON text; "" (no deltas) means no input, which parseToolArgs reads as {}.
      return { toolUse: { ...start.toolUse, input: acc.toolInput ? acc.toolInput.join("") : "" } };
    }
    if (isObj(start.toolResult)) {
      return { toolResult: { ...start.toolResult, content: acc.toolResult ?? [] } };
    }
    if (isObj(start.image) || acc.image) return { image: { ...(isObj(start.image) ? start.image : undefined), ...acc.image } };
    if (acc.reasoning || acc.signature || acc.redacted) {
      if (acc.redacted && !acc.reasoning) return { reasoningContent: { redactedContent: acc.redacted.join("") } };
      const rt: Obj = { text: (acc.reasoning ?? []).join("") };
      if (acc.signature) rt.signature = acc.signature.join("");
      const out: Obj = { reasoningContent: { reasoningText: rt } };
      if (acc.redacted) out.redacted_content = acc.redacted.join("");
      return out;
    }
    const text = (acc.text ?? []).join("");
    if (acc.citations) return { citationsContent: { content: [{ text }], citations: acc.citations } };
    if (acc.text) return { text };
    return undefined;
  }

  result(): ResponseResult {
    const content: Obj[] = [];
    let unknown = this.progress.unknownEvents();
    let unmappedBlocks: Unmapped[] | undefined;
    for (let i = 0; i < this.blocks.length; i++) {
      const acc = this.blocks[i];
      if (!acc) continue;
      const known = ConverseStreamAccumulator.knownBlock(acc);
      if (known) content.push(known);
      if (!acc.unknownStart) continue;
      // A block of a kind this adapter does not know is kept whole, at its index; beside a block that was read, its start event with only those members.
      if (known) unknown = [...(unknown ?? []), { contentBlockStart: { contentBlockIndex: i, start: acc.unknownStart } }];
      else (unmappedBlocks ??= []).push({ index: i, part: acc.unknownStart });
    }
    const message: Obj = { role: this.role ?? "assistant", content };
    const body: Obj = { output: { message }, ...this.stop, ...this.meta };
    const result = normalizeResponse(body);
    const replyUnmapped = result.messages[0]!.extras?.unmapped_content as Unmapped[] | undefined;
    return onFirstMessage(result, {
      stream_error: this.errors && (this.errors.length === 1 ? this.errors[0] : this.errors),
      unmapped_content: unmappedBlocks && [...(replyUnmapped ?? []), ...unmappedBlocks],
      unmapped_events: unknown,
    });
  }
}

export const { createStreamAccumulator, normalizeStream } = streamReaders(() => new ConverseStreamAccumulator(), "ConverseStream events");
