/**
 * Folding chat.completion.chunk objects into the same result as a response.
 * Built for the wrapper's hot path (it runs on every chunk): deltas are appended to
 * string arrays and tool arguments are parsed once, in result().
 *
 * Streams keep what non-streams keep: fields this adapter does not know land in
 * the same extras as on a response. Chunk- and choice-level ones are per-chunk
 * metadata, so the last value wins (as openai-node's accumulator does); in a
 * delta or a tool-call fragment they are increments, so strings and arrays are
 * appended and other values replace.
 */
import type { ResponseContext, ResponseResult, StreamAccumulator } from "../types.js";
import type { ContentBlock, Message } from "../../src/format/schema.js";
import { parseToolArgs } from "../common/args.js";
import { describe, fail, isObj, type Obj, put } from "../common/guards.js";
import { normalizeUsage } from "./usage.js";
import { audioBlocks, requestAudioFormat } from "./audio.js";
import { attachAnnotations } from "./response.js";
import { choicesResult, inIndexOrder, StreamProgress, streamReaders } from "../common/stream.js";

interface ToolAcc {
  id?: string;
  type?: string;
  name?: string;
  args: string[];
  customInput?: string[];
  extras?: Obj;
}

interface ChoiceAcc {
  index: number;
  text: string[];
  refusal: string[];
  reasoning: string[];
  tools: Map<number, ToolAcc>;
  fn?: { name?: string; args: string[] };
  audio?: { id?: string; data: string[]; transcript: string[]; rest: Obj };
  finish_reason?: string;
  logprobs?: unknown[];
  annotations?: unknown[];
  /** Unknown delta fields (folded) and unknown choice fields (last wins). */
  extras?: Obj;
}

/**
 * The keys this adapter reads at each level, as switches rather than Sets: every key of
 * every chunk is looked up, and on a chunk's few keys a switch costs a fraction of Set.has.
 */
type Known = (k: string) => boolean;
const K_CHUNK: Known = (k) => {
  switch (k) {
    case "choices":
    case "usage":
    case "model":
    case "object":
      return true;
    default:
      return false;
  }
};
const K_CHOICE: Known = (k) => {
  switch (k) {
    case "index":
    case "delta":
    case "finish_reason":
    case "logprobs":
      return true;
    default:
      return false;
  }
};
const K_DELTA: Known = (k) => {
  switch (k) {
    case "role":
    case "content":
    case "refusal":
    case "reasoning_content":
    case "tool_calls":
    case "function_call":
    case "audio":
    case "annotations":
      return true;
    default:
      return false;
  }
};
const K_TOOL: Known = (k) => k === "index" || k === "id" || k === "type" || k === "function" || k === "custom";
const K_FN: Known = (k) => k === "name" || k === "arguments";
const K_AUDIO: Known = (k) => k === "id" || k === "data" || k === "transcript";

/**
 * Whether a choice, a delta, a tool-call fragment or its function has a key this adapter does not
 * read (most have none, and foldUnknown is then skipped). One loop per level: each calls its own
 * `Known` directly, which the compiler inlines; a `Known` passed in is a call it cannot.
 */
function choiceHasUnknown(o: Obj): boolean {
  for (const k in o) if (!K_CHOICE(k)) return true;
  return false;
}
function deltaHasUnknown(o: Obj): boolean {
  for (const k in o) if (!K_DELTA(k)) return true;
  return false;
}
function toolHasUnknown(o: Obj): boolean {
  for (const k in o) if (!K_TOOL(k)) return true;
  return false;
}
function fnHasUnknown(o: Obj): boolean {
  for (const k in o) if (!K_FN(k)) return true;
  return false;
}

/**
 * An increment: strings and arrays append, a null never erases, anything else
 * replaces. An array is copied when first seen, so later pieces are pushed onto
 * this accumulator's own copy (linear over a long stream, the chunk untouched).
 */
function fold(target: Obj, k: string, v: unknown): void {
  const prev = target[k];
  if (v === undefined || (v === null && prev !== undefined)) return;
  if (typeof v === "string" && typeof prev === "string") put(target, k, prev + v);
  else if (Array.isArray(v) && Array.isArray(prev)) for (const x of v) prev.push(x);
  else put(target, k, Array.isArray(v) ? [...v] : v);
}

/**
 * A chunk's unknown top-level keys (`id`, `created`, `system_fingerprint`, ...) on `target` by
 * foldUnknown's rule for fields whose last value wins (a null only where nothing was), for a
 * fraction of its cost: a stream's chunks share one key order, so each key is kept by its position
 * in it. A key's first value goes on the target as it comes (which fixes the key's place there),
 * later ones are kept in an array by position and put when the target is read or the key order
 * changes: per chunk an array store per key rather than a keyed store on an object.
 */
class ChunkFields {
  private readonly keys: string[] = [];
  /** Per position: the key is one this adapter does not read. */
  private readonly unknown: boolean[] = [];
  /** Per position: the value the target is to hold (undefined: nothing put yet in this key order). */
  private readonly vals: unknown[] = [];

  constructor(private readonly target: Obj) {}

  push(src: Obj): void {
    const { keys, unknown, vals } = this;
    let i = 0;
    for (const k in src) {
      if (keys[i] !== k) this.rekey(i, k);
      if (unknown[i]) {
        const v = src[k];
        if (v !== undefined) {
          if (vals[i] === undefined) this.first(i, k, v);
          else if (v !== null) vals[i] = v;
        }
      }
      i++;
    }
    if (i !== keys.length) this.rekey(i);
  }

  /** The target as foldUnknown would have left it after the chunks pushed so far. */
  read(): Obj {
    const { keys, vals, target } = this;
    for (let i = 0; i < keys.length; i++) {
      const v = vals[i];
      if (v !== undefined && v !== null) put(target, keys[i]!, v);
    }
    return target;
  }

  private first(i: number, k: string, v: unknown): void {
    const { target } = this;
    if (v !== null || target[k] === undefined) {
      put(target, k, v);
      this.vals[i] = v;
    }
  }

  /** Another key order from position `at`: what was kept goes on the target, and `k` (when given) is kept at `at`. */
  private rekey(at: number, k?: string): void {
    const { keys, unknown, vals } = this;
    if (at < keys.length) {
      this.read();
      keys.length = unknown.length = vals.length = at;
    }
    if (k === undefined) return;
    keys.push(k);
    unknown.push(!K_CHUNK(k));
    vals.push(undefined);
  }
}

/** Unknown keys of `src` folded into `target` (created on demand); returns the target. */
function foldUnknown(src: Obj, known: Known, target: Obj | undefined, increments: boolean): Obj | undefined {
  for (const k in src) {
    if (known(k)) continue;
    const v = src[k];
    if (v === undefined) continue;
    target ??= {};
    if (increments) fold(target, k, v);
    else if (v !== null || target[k] === undefined) put(target, k, v);
  }
  return target;
}

export class OpenAIStreamAccumulator implements StreamAccumulator {
  private readonly choices = new Map<number, ChoiceAcc>();
  private last?: ChoiceAcc;
  private model?: string;
  private usage?: unknown;
  private readonly meta = new ChunkFields({});
  private readonly progress = new StreamProgress();
  private readonly audioFormat?: string;

  constructor(ctx?: ResponseContext) {
    this.audioFormat = requestAudioFormat(ctx?.request);
  }

  push(chunk: unknown): boolean {
    const ci = this.progress.next();
    if (!isObj(chunk)) fail([ci], `expected a chat.completion.chunk object, got ${describe(chunk)}`, "object_type");
    if (typeof chunk.model === "string") this.model = chunk.model;
    if (chunk.usage !== undefined && chunk.usage !== null) this.usage = chunk.usage;
    this.meta.push(chunk);
    const choices = chunk.choices;
    if (choices === undefined || choices === null) return false; // e.g. a usage-only or keep-alive chunk
    if (!Array.isArray(choices)) fail([ci, "choices"], `expected an array, got ${describe(choices)}`, "list_type");
    let first = false;
    for (let i = 0; i < choices.length; i++) {
      if (this.fold(choices[i], ci, i) && this.progress.firstContent()) first = true;
    }
    return first;
  }

  /** Returns true when the delta carried content. */
  private fold(choice: unknown, ci: number, i: number): boolean {
    if (!isObj(choice)) fail([ci, "choices", i], `expected an object, got ${describe(choice)}`, "object_type");
    const index = typeof choice.index === "number" ? choice.index : 0;
    // Most streams have one choice: the last one folded is tried before the map.
    let acc = this.last?.index === index ? this.last : this.choices.get(index);
    if (!acc) {
      acc = { index, text: [], refusal: [], reasoning: [], tools: new Map() };
      this.choices.set(index, acc);
    }
    this.last = acc;
    if (typeof choice.finish_reason === "string") acc.finish_reason = choice.finish_reason;
    if (isObj(choice.logprobs) && Array.isArray(choice.logprobs.content)) (acc.logprobs ??= []).push(...choice.logprobs.content);
    if (choiceHasUnknown(choice)) acc.extras = foldUnknown(choice, K_CHOICE, acc.extras, false);
    const d = choice.delta;
    if (!isObj(d)) return false;
    if (deltaHasUnknown(d)) acc.extras = foldUnknown(d, K_DELTA, acc.extras, true);
    if (Array.isArray(d.annotations)) (acc.annotations ??= []).push(...d.annotations);
    let content = false;
    if (typeof d.content === "string" && d.content !== "") {
      acc.text.push(d.content);
      content = true;
    }
    if (typeof d.refusal === "string" && d.refusal !== "") {
      acc.refusal.push(d.refusal);
      content = true;
    }
    if (typeof d.reasoning_content === "string" && d.reasoning_content !== "") {
      acc.reasoning.push(d.reasoning_content);
      content = true;
    }
    if (Array.isArray(d.tool_calls)) {
      for (const tc of d.tool_calls) {
        if (!isObj(tc)) continue;
        // Fragments are keyed by `index`: id and name come first, argument pieces follow.
        const ti = typeof tc.index === "number" ? tc.index : acc.tools.size;
        let t = acc.tools.get(ti);
        if (!t) {
          t = { args: [] };
          acc.tools.set(ti, t);
        }
        if (typeof tc.id === "string") t.id = tc.id;
        if (typeof tc.type === "string") t.type = tc.type;
        if (toolHasUnknown(tc)) t.extras = foldUnknown(tc, K_TOOL, t.extras, true);
        const fn = tc.function;
        if (isObj(fn)) {
          if (typeof fn.name === "string" && fn.name) t.name = fn.name;
          if (typeof fn.arguments === "string") t.args.push(fn.arguments);
          if (fnHasUnknown(fn)) t.extras = foldUnknown(fn, K_FN, t.extras, true);
        }
        const cu = tc.custom;
        if (isObj(cu)) {
          t.type = "custom";
          if (typeof cu.name === "string" && cu.name) t.name = cu.name;
          if (typeof cu.input === "string") (t.customInput ??= []).push(cu.input);
        }
        content = true;
      }
    }
    if (isObj(d.function_call)) {
      const f = (acc.fn ??= { args: [] });
      if (typeof d.function_call.name === "string") f.name = d.function_call.name;
      if (typeof d.function_call.arguments === "string") f.args.push(d.function_call.arguments);
      content = true;
    }
    if (isObj(d.audio)) {
      const a = (acc.audio ??= { data: [], transcript: [], rest: {} });
      if (typeof d.audio.id === "string") a.id = d.audio.id;
      if (typeof d.audio.data === "string") a.data.push(d.audio.data);
      if (typeof d.audio.transcript === "string") a.transcript.push(d.audio.transcript);
      foldUnknown(d.audio, K_AUDIO, a.rest, false);
      content = true;
    }
    return content;
  }

  private message(acc: ChoiceAcc, many: boolean): Message {
    const content: ContentBlock[] = [];
    if (acc.reasoning.length) content.push({ type: "reasoning", text: acc.reasoning.join("") });
    if (acc.text.length) content.push({ type: "text", text: acc.text.join("") });
    if (acc.refusal.length) content.push({ type: "text", text: acc.refusal.join(""), extras: { refusal: true } });
    if (acc.audio) {
      const a = acc.audio;
      const reply = {
        id: a.id,
        data: a.data.length ? a.data.join("") : undefined,
        transcript: a.transcript.length ? a.transcript.join("") : undefined,
        rest: a.rest,
      };
      for (const b of audioBlocks(reply, this.audioFormat)) content.push(b);
    }
    const tools = [...acc.tools.entries()].sort((a, b) => a[0] - b[0]);
    for (const [, t] of tools) {
      if (t.type === "custom") {
        const block: ContentBlock = { type: "tool_call", args: {}, extras: { tool_type: "custom", input: (t.customInput ?? []).join("") } };
        if (t.name !== undefined) block.name = t.name;
        if (t.id !== undefined) block.id = t.id;
        if (t.extras) block.extras = { ...t.extras, ...block.extras };
        content.push(block);
        continue;
      }
      const parsed = parseToolArgs(t.args.join(""));
      const block: ContentBlock = { type: "tool_call", args: parsed.args };
      if (t.name !== undefined) block.name = t.name;
      if (t.id !== undefined) block.id = t.id;
      if (parsed.extras || t.extras) block.extras = { ...t.extras, ...parsed.extras };
      content.push(block);
    }
    if (acc.fn) {
      const parsed = parseToolArgs(acc.fn.args.join(""));
      const block: ContentBlock = {
        type: "tool_call",
        id: "call_legacy_0",
        args: parsed.args,
        extras: { ...parsed.extras, legacy_function_call: true },
      };
      if (acc.fn.name !== undefined) block.name = acc.fn.name;
      content.push(block);
    }
    if (acc.annotations) attachAnnotations(content, acc.annotations, ["annotations"]);
    const msg: Message = { role: "assistant", content };
    const extras: Obj = { ...acc.extras };
    if (acc.finish_reason !== undefined) extras.finish_reason = acc.finish_reason;
    if (many) extras.choice_index = acc.index;
    if (acc.logprobs) extras.logprobs = { content: acc.logprobs };
    if (Object.keys(extras).length) msg.extras = extras;
    return msg;
  }

  result(): ResponseResult {
    const accs = inIndexOrder(this.choices);
    const messages = accs.map((a) => this.message(a, accs.length > 1));
    const usage = normalizeUsage(this.usage, ["usage"]);
    return choicesResult(messages, { usage, meta: this.meta.read(), model: this.model, stop: accs[0]?.finish_reason });
  }
}

export const { createStreamAccumulator, normalizeStream } = streamReaders((ctx) => new OpenAIStreamAccumulator(ctx), "chunks");
