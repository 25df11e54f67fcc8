/**
 * Folding legacy completion chunks (each a `text_completion` object whose
 * choices carry a piece of `text`) into the same result as a response. Text
 * pieces are appended to arrays and joined once, in result(). A chunk's
 * `logprobs` hold the arrays for its piece, so they are concatenated key by key.
 * Unknown chunk and choice fields are per-chunk metadata: the last value wins,
 * as in the chat stream.
 */
import type { ResponseContext, ResponseResult, StreamAccumulator } from "../types.js";
import type { Message } from "../../src/format/schema.js";
import { describe, fail, isObj, type Obj, put } from "../common/guards.js";
import { normalizeUsage } from "../openai-chat/usage.js";
import { choiceMessage, promptInfo, type PromptInfo } from "./reply.js";
import { choicesResult, inIndexOrder, StreamProgress, streamReaders } from "../common/stream.js";

interface ChoiceAcc {
  index: number;
  text: string[];
  finish_reason?: unknown;
  logprobs?: Obj;
  extras?: Obj;
}

const K_CHUNK = new Set(["choices", "usage", "model"]);
const K_CHOICE = new Set(["text", "index", "finish_reason", "logprobs"]);

function lastWins(src: Obj, known: ReadonlySet<string>, target: Obj | undefined): Obj | undefined {
  for (const k in src) {
    if (known.has(k)) continue;
    const v = src[k];
    if (v === undefined || (v === null && target?.[k] !== undefined)) continue;
    put((target ??= {}), k, v);
  }
  return target;
}

/** Arrays append (copied on first sight, so the chunk is never changed); other values replace. */
function foldLogprobs(acc: Obj | undefined, lp: Obj): Obj {
  const out = acc ?? {};
  for (const k in lp) {
    const v = lp[k];
    const prev = out[k];
    if (Array.isArray(v) && Array.isArray(prev)) for (const x of v) prev.push(x);
    else if (v !== undefined) put(out, k, Array.isArray(v) ? [...v] : v);
  }
  return out;
}

export class CompletionsStreamAccumulator implements StreamAccumulator {
  private readonly choices = new Map<number, ChoiceAcc>();
  private model?: string;
  private usage?: unknown;
  private meta?: Obj;
  private readonly progress = new StreamProgress();
  private readonly info: PromptInfo;

  constructor(ctx?: ResponseContext) {
    this.info = promptInfo(ctx?.request);
  }

  push(chunk: unknown): boolean {
    const ci = this.progress.next();
    if (!isObj(chunk)) fail([ci], `expected a text_completion chunk object, got ${describe(chunk)}`, "object_type");
    if (typeof chunk.model === "string") this.model = chunk.model;
    if (chunk.usage !== undefined && chunk.usage !== null) this.usage = chunk.usage;
    this.meta = lastWins(chunk, K_CHUNK, this.meta);
    const choices = chunk.choices;
    if (choices === undefined || choices === null) return false;
    if (!Array.isArray(choices)) fail([ci, "choices"], `expected an array, got ${describe(choices)}`, "list_type");
    let first = false;
    for (let i = 0; i < choices.length; i++) {
      const c = choices[i];
      if (!isObj(c)) fail([ci, "choices", i], `expected an object, got ${describe(c)}`, "object_type");
      const index = typeof c.index === "number" ? c.index : 0;
      let acc = this.choices.get(index);
      if (!acc) {
        acc = { index, text: [] };
        this.choices.set(index, acc);
      }
      if (c.finish_reason !== undefined && c.finish_reason !== null) acc.finish_reason = c.finish_reason;
      if (isObj(c.logprobs)) acc.logprobs = foldLogprobs(acc.logprobs, c.logprobs);
      acc.extras = lastWins(c, K_CHOICE, acc.extras);
      const text = c.text;
      if (typeof text === "string" && text !== "") {
        acc.text.push(text);
        if (this.progress.firstContent()) first = true;
      } else if (text !== undefined && text !== null && typeof text !== "string") {
        fail([ci, "choices", i, "text"], `expected a string, got ${describe(text)}`, "string_type");
      }
    }
    return first;
  }

  result(): ResponseResult {
    const accs = inIndexOrder(this.choices);
    const many = accs.length > 1;
    const messages: Message[] = accs.map((a) =>
      choiceMessage(
        {
          index: a.index,
          text: a.text.join(""),
          finish_reason: a.finish_reason,
          logprobs: a.logprobs,
          extras: a.extras && { ...a.extras },
        },
        many,
        this.info,
      ),
    );
    const usage = normalizeUsage(this.usage, ["usage"]);
    return choicesResult(messages, { usage, meta: this.meta, model: this.model, stop: accs[0]?.finish_reason });
  }
}

export const { createStreamAccumulator, normalizeStream } = streamReaders((ctx) => new CompletionsStreamAccumulator(ctx), "chunks");
