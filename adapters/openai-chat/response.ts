/** OpenAI chat.completion response -> one assistant message per choice, usage on the first. */
import type { ResponseResult } from "../types.js";
import type { ContentBlock, Message } from "../../src/format/schema.js";
import { expectArray, expectObj, leftovers, type Loc, type Obj } from "../common/guards.js";
import { assistantBlocks } from "./request.js";
import { normalizeUsage } from "./usage.js";

const K_RESPONSE = new Set(["choices", "usage", "model"]);
const K_CHOICE = new Set(["message", "index", "finish_reason", "logprobs"]);
const K_RESP_MSG = new Set(["role", "content", "refusal", "tool_calls", "function_call", "audio", "annotations", "reasoning_content"]);

/** Attach the message's `annotations` (url_citation, ...) to its text blocks. */
function attachAnnotations(blocks: ContentBlock[], annotations: unknown, loc: Loc): void {
  if (annotations === undefined || annotations === null) return;
  const list = expectArray(annotations, loc);
  if (list.length === 0) return;
  const anns = list.map((a, i) => expectObj(a, loc, i));
  const text = blocks.find((b) => b.type === "text" && !(b.extras && b.extras.refusal));
  if (text && text.type === "text") text.annotations = anns;
  else blocks.push({ type: "text", text: "", annotations: anns });
}

export function choiceToMessage(choice: unknown, loc: Loc, many: boolean): Message {
  const c = expectObj(choice, loc);
  const m = expectObj(c.message, loc, "message");
  const content = assistantBlocks(m, [...loc, "message"], 0);
  attachAnnotations(content, m.annotations, [...loc, "message", "annotations"]);
  const msg: Message = { role: "assistant", content };
  let extras: Obj | undefined = { ...leftovers(m, K_RESP_MSG), ...leftovers(c, K_CHOICE) };
  if (c.finish_reason !== undefined && c.finish_reason !== null) extras.finish_reason = c.finish_reason;
  if (many && c.index !== undefined) extras.choice_index = c.index;
  if (c.logprobs !== undefined && c.logprobs !== null) extras.logprobs = c.logprobs;
  if (Object.keys(extras).length === 0) extras = undefined;
  if (extras) msg.extras = extras;
  return msg;
}

export function normalizeResponse(response: unknown): ResponseResult {
  const r = expectObj(response, []);
  const choices = expectArray(r.choices, ["choices"]);
  const many = choices.length > 1;
  const messages = choices.map((c, i) => choiceToMessage(c, ["choices", i], many));
  const usage = normalizeUsage(r.usage, ["usage"]);
  const first = messages[0];
  const top = leftovers(r, K_RESPONSE);
  if (first) {
    if (usage) first.usage_metadata = usage;
    if (top) first.extras = { ...top, ...first.extras };
  }
  const result: ResponseResult = { messages, trace_provider: "openai" };
  if (typeof r.model === "string") result.trace_model_name = r.model;
  if (usage) result.usage_metadata = usage;
  const fr = (choices[0] as Obj | undefined)?.finish_reason;
  if (typeof fr === "string") result.stop_reason = fr;
  return result;
}
