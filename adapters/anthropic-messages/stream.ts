/**
 * Folding Messages stream events into the same result as a response.
 *
 * message_delta usage is CUMULATIVE: each field it carries replaces the value
 * from message_start (or an earlier delta); it is never added. JSON, text and
 * thinking deltas are collected as pieces and joined once in result(), so a
 * push costs a few property reads (it runs on every chunk of a wrapped stream).
 * An `error` event mid-stream is kept on the message (`extras.stream_error`)
 * with the partial output; it does not throw. An event or delta type this
 * adapter does not know is kept whole in `extras.unmapped_events`.
 */
import type { ResponseResult, StreamAccumulator } from "../types.js";
import { describe, fail, isObj, type Obj, put, putAll } from "../common/guards.js";
import { normalizeResponse } from "./response.js";
import { onFirstMessage, StreamProgress, streamReaders } from "../common/stream.js";

interface BlockAcc {
  start: Obj;
  text?: string[];
  json?: string[];
  thinking?: string[];
  signature?: string[];
  citations?: unknown[];
}

/** A delta's piece of a block's text, JSON or thinking, kept for result() to join; whether it was content (not empty). */
function addPiece(acc: BlockAcc, key: "text" | "json" | "thinking", piece: unknown): boolean {
  if (typeof piece !== "string") return false;
  (acc[key] ??= []).push(piece);
  return piece !== "";
}

export class AnthropicStreamAccumulator implements StreamAccumulator {
  private message: Obj = {};
  private usage: Obj = {};
  private readonly blocks: BlockAcc[] = [];
  private delta: Obj = {};
  private error?: unknown;
  private readonly progress = new StreamProgress();

  push(event: unknown): boolean {
    const ei = this.progress.next();
    if (!isObj(event)) fail([ei], `expected a stream event object, got ${describe(event)}`, "object_type");
    let content = false;
    switch (event.type) {
      case "message_start": {
        const m = event.message;
        // The start carries the message (id, model, usage); without it the reply is not a reply.
        if (!isObj(m)) fail([ei, "message"], `expected an object, got ${describe(m)}`, "object_type");
        // A copy: the SDK's stream helper keeps this object as its snapshot and changes it as events come.
        this.message = { ...m };
        if (isObj(m.usage)) this.usage = { ...m.usage };
        if (Array.isArray(m.content)) for (const b of m.content) if (isObj(b)) this.blocks.push({ start: b });
        break;
      }
      case "content_block_start": {
        const b = event.content_block;
        if (!isObj(b)) fail([ei, "content_block"], `expected an object, got ${describe(b)}`, "object_type");
        const index = typeof event.index === "number" ? event.index : this.blocks.length;
        this.blocks[index] = { start: b };
        // An empty text/thinking start is a placeholder; any other block (a tool name, a server result) is output.
        content =
          b.type === "text"
            ? typeof b.text === "string" && b.text !== ""
            : b.type === "thinking"
              ? typeof b.thinking === "string" && b.thinking !== ""
              : true;
        break;
      }
      case "content_block_delta": {
        const d = event.delta;
        if (!isObj(d)) fail([ei, "delta"], `expected an object, got ${describe(d)}`, "object_type");
        const index = typeof event.index === "number" ? event.index : this.blocks.length - 1;
        const acc = (this.blocks[index] ??= {
          start: { type: d.type === "input_json_delta" ? "tool_use" : d.type === "thinking_delta" ? "thinking" : "text" },
        });
        switch (d.type) {
          case "text_delta":
            content = addPiece(acc, "text", d.text);
            break;
          case "input_json_delta":
            content = addPiece(acc, "json", d.partial_json);
            break;
          case "thinking_delta":
            content = addPiece(acc, "thinking", d.thinking);
            break;
          case "signature_delta":
            if (typeof d.signature === "string") (acc.signature ??= []).push(d.signature);
            break;
          case "citations_delta":
            if (d.citation !== undefined) (acc.citations ??= []).push(d.citation);
            break;
          default:
            this.progress.keepUnknown(event);
        }
        break;
      }
      case "message_delta": {
        if (isObj(event.delta)) putAll(this.delta, event.delta);
        // Cumulative: replace field by field, never add.
        if (isObj(event.usage))
          for (const k in event.usage) if (event.usage[k] !== null && event.usage[k] !== undefined) put(this.usage, k, event.usage[k]);
        break;
      }
      case "error":
        this.error = event.error ?? event;
        break;
      case "message_stop":
      case "content_block_stop":
      case "ping":
        break;
      default:
        this.progress.keepUnknown(event);
    }
    return content && this.progress.firstContent();
  }

  private block(acc: BlockAcc): Obj {
    const b: Obj = { ...acc.start };
    if (acc.text) b.text = (typeof b.text === "string" ? b.text : "") + acc.text.join("");
    if (acc.thinking) b.thinking = (typeof b.thinking === "string" ? b.thinking : "") + acc.thinking.join("");
    if (acc.signature) b.signature = (typeof b.signature === "string" ? b.signature : "") + acc.signature.join("");
    if (acc.citations) b.citations = [...(Array.isArray(b.citations) ? b.citations : []), ...acc.citations];
    // Tool input arrives as JSON text; the start block's `{}` is a placeholder. "" means no input: {}.
    if (acc.json) b.input = acc.json.join("");
    return b;
  }

  result(): ResponseResult {
    const msg: Obj = { ...this.message, ...this.delta, role: "assistant", content: this.blocks.filter(Boolean).map((a) => this.block(a)) };
    if (Object.keys(this.usage).length) msg.usage = this.usage;
    delete msg.type;
    return onFirstMessage(normalizeResponse(msg), { stream_error: this.error, unmapped_events: this.progress.unknownEvents() });
  }
}

export const { createStreamAccumulator, normalizeStream } = streamReaders(() => new AnthropicStreamAccumulator(), "stream events");
