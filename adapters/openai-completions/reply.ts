/**
 * One completion choice -> one assistant message; shared by responses and
 * streams so both give the same result.
 *
 * - the text is one text block;
 * - with `echo: true` the API returns the prompt followed by the completion in
 *   one string. When the request is known and the text starts with the prompt
 *   of this choice, the two are kept as two text blocks, the prompt's marked
 *   `extras.echo: true` (joined, they are the text as sent; the completion on
 *   its own is what the model generated). Otherwise the text stays whole.
 * - message extras: `finish_reason`; `choice_index` when there are several
 *   choices; `prompt_index` for a batch (choices i*n .. i*n+n-1 answer prompt i);
 *   `logprobs` (the legacy `{tokens, token_logprobs, top_logprobs, text_offset}`)
 *   as sent; any other choice field under its own name.
 */
import type { ContentBlock, Message } from "../../src/format/schema.js";
import { isObj, type Obj } from "../common/guards.js";

/** What the reply needs from its request: echo, the prompts, n. */
export interface PromptInfo {
  echo: boolean;
  /** The prompts when they are text (one for a single prompt, several for a batch). */
  prompts?: readonly unknown[];
  batch: boolean;
  n: number;
}

export function promptInfo(request: unknown): PromptInfo {
  if (!isObj(request)) return { echo: false, batch: false, n: 1 };
  const p = request.prompt;
  const batch = Array.isArray(p) && p.length > 0 && typeof p[0] !== "number";
  const n = typeof request.n === "number" && Number.isSafeInteger(request.n) && request.n > 0 ? request.n : 1;
  const info: PromptInfo = { echo: request.echo === true, batch, n };
  if (typeof p === "string") info.prompts = [p];
  else if (batch) info.prompts = p;
  return info;
}

export interface ChoiceParts {
  index?: number;
  text?: string;
  finish_reason?: unknown;
  logprobs?: unknown;
  /** Choice fields this adapter does not map, kept as sent. */
  extras?: Obj;
}

function textBlocks(text: string, prompt: unknown): ContentBlock[] {
  if (typeof prompt === "string" && prompt !== "" && text.startsWith(prompt)) {
    const out: ContentBlock[] = [{ type: "text", text: prompt, extras: { echo: true } }];
    if (text.length > prompt.length) out.push({ type: "text", text: text.slice(prompt.length) });
    return out;
  }
  return [{ type: "text", text }];
}

export function choiceMessage(c: ChoiceParts, many: boolean, info: PromptInfo): Message {
  const promptIndex = typeof c.index === "number" ? Math.floor(c.index / info.n) : 0;
  const content =
    c.text === undefined ? [] : info.echo ? textBlocks(c.text, info.prompts?.[promptIndex]) : [{ type: "text" as const, text: c.text }];
  const msg: Message = { role: "assistant", content };
  let extras = c.extras;
  if (c.finish_reason !== undefined && c.finish_reason !== null) (extras ??= {}).finish_reason = c.finish_reason;
  if (many && c.index !== undefined) (extras ??= {}).choice_index = c.index;
  if (info.batch && typeof c.index === "number") (extras ??= {}).prompt_index = promptIndex;
  if (c.logprobs !== undefined && c.logprobs !== null) (extras ??= {}).logprobs = c.logprobs;
  if (extras) msg.extras = extras;
  return msg;
}
