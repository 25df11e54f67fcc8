/**
 * The `outputs` of a LangChain llm run (an `LLMResult`) -> native messages:
 * `generations` is a list (one per prompt) of candidate lists; each candidate
 * is a `ChatGeneration` holding the AI message, or a completion model's
 * `Generation` holding only `text`. `llm_output` (JS: `llmOutput`) beside it
 * may name the model and report usage. The model and provider come from the
 * message's `response_metadata` (`model_name` or `model`, `model_provider`),
 * else the generation's info, else the message's `additional_kwargs.model`,
 * else `llm_output`.
 */
import type { Message } from "../../src/format/schema.js";
import type { ResponseResult } from "../types.js";
import { expectArray, expectObj, isObj, leftovers, type Loc, type Obj } from "../common/guards.js";
import { markOrphans } from "../common/content.js";
import { newConversation, toNative } from "./messages.js";
import { readRecord } from "./records.js";
import { llmOutputUsage } from "./usage.js";

const K_GENERATION = new Set(["text", "message", "generation_info", "generationInfo", "type"]);
const K_RESULT = new Set(["generations", "llm_output", "llmOutput", "type", "run"]);

function str(...vs: unknown[]): string | undefined {
  for (const v of vs) if (typeof v === "string" && v !== "") return v;
  return undefined;
}

interface Read {
  message: Message;
  model?: string;
  provider?: string;
  stop?: string;
}

function isGenerationLike(r: Obj): boolean {
  return ("text" in r || "message" in r) && !("lc" in r) && !("data" in r) && !("content" in r);
}

/**
 * What a message's `response_metadata` says of the model, provider and stop.
 * A streamed ChatAnthropic message names the model that answered only in
 * `additional_kwargs` (its message_start fields), so that is the last place read.
 */
function fromMetadata(message: Message, meta: Obj | undefined, info: Obj | undefined, kwargs?: Obj): Read {
  return {
    message,
    model: str(meta?.model_name, meta?.model, info?.model_name, info?.model, kwargs?.model),
    provider: str(meta?.model_provider),
    stop: str(info?.finish_reason, meta?.finish_reason, meta?.stop_reason),
  };
}

/** A lone message record as the reply. */
function messageRead(r: Obj): Read {
  const rec = readRecord(r, []);
  return fromMetadata(
    toNative(rec, [], newConversation()),
    isObj(rec.fields.response_metadata) ? rec.fields.response_metadata : undefined,
    undefined,
    isObj(rec.fields.additional_kwargs) ? rec.fields.additional_kwargs : undefined,
  );
}

/** One generation -> an assistant message, with what it says of the model. */
export function generationToNative(g: unknown, loc: Loc): Read {
  const gen = expectObj(g, loc);
  const info = isObj(gen.generation_info) ? gen.generation_info : isObj(gen.generationInfo) ? gen.generationInfo : undefined;
  let message: Message;
  let meta: Obj | undefined;
  let kwargs: Obj | undefined;
  if (gen.message !== undefined && gen.message !== null) {
    const rec = readRecord(gen.message, [...loc, "message"]);
    message = toNative(rec, [...loc, "message"], newConversation());
    meta = isObj(rec.fields.response_metadata) ? rec.fields.response_metadata : undefined;
    kwargs = isObj(rec.fields.additional_kwargs) ? rec.fields.additional_kwargs : undefined;
  } else {
    const text = typeof gen.text === "string" ? gen.text : undefined;
    message = { role: "assistant", content: text ? [{ type: "text", text }] : [] };
  }
  const extras: Obj = { ...leftovers(gen, K_GENERATION) };
  if (info && Object.keys(info).length) extras.generation_info = info;
  if (Object.keys(extras).length) message.extras = { ...message.extras, ...extras };
  return fromMetadata(message, meta, info, kwargs);
}

export function normalizeResponse(response: unknown): ResponseResult {
  const r = expectObj(response, []);
  // A lone generation, or a lone AI message, is a reply of one candidate.
  if (!("generations" in r)) return fromReads([isGenerationLike(r) ? generationToNative(r, []) : messageRead(r)], undefined, []);
  const gens = expectArray(r.generations, ["generations"]);
  const nested = gens.length > 0 && gens.every(Array.isArray);
  const reads: Read[] = [];
  for (let b = 0; b < gens.length; b++) {
    const list = nested ? (gens[b] as unknown[]) : [gens[b]];
    for (let j = 0; j < list.length; j++) {
      const read = generationToNative(list[j], nested ? ["generations", b, j] : ["generations", b]);
      if (nested && gens.length > 1) read.message.extras = { ...read.message.extras, batch_index: b };
      reads.push(read);
    }
  }
  const llmOutput = isObj(r.llm_output) ? r.llm_output : isObj(r.llmOutput) ? r.llmOutput : undefined;
  const key = isObj(r.llm_output) ? "llm_output" : "llmOutput";
  const result = fromReads(reads, llmOutput, [key]);
  const first = result.messages[0];
  if (first) {
    const extras: Obj = { ...leftovers(r, K_RESULT) };
    if (llmOutput && Object.keys(llmOutput).length) extras[key] = llmOutput;
    if (r.run !== undefined && r.run !== null) extras.run = r.run;
    if (Object.keys(extras).length) first.extras = { ...first.extras, ...extras };
  }
  return result;
}

function fromReads(reads: Read[], llmOutput: Obj | undefined, loc: Loc): ResponseResult {
  // A reply is nearly always the AI message; whatever else a generation holds still never fails validate.
  const messages = markOrphans(reads.map((r) => r.message));
  const result: ResponseResult = { messages };
  const first = reads[0];
  const model = first?.model ?? str(llmOutput?.model_name, llmOutput?.model);
  if (model) result.trace_model_name = model;
  if (first?.provider) result.trace_provider = first.provider;
  if (first?.stop) result.stop_reason = first.stop;
  const usage = messages[0]?.usage_metadata ?? (llmOutput ? llmOutputUsage(llmOutput, loc) : undefined);
  if (usage) {
    result.usage_metadata = usage;
    if (messages[0] && !messages[0].usage_metadata) messages[0].usage_metadata = usage;
  }
  return result;
}
