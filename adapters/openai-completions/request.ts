/**
 * Legacy completions request -> native messages + invocation params.
 *
 * The prompt has no role; it is what the user asked, so it becomes `user`
 * message(s):
 * - a string: one user message with one text block;
 * - a batch (string[] or number[][]): one user message per prompt, in order,
 *   each with `extras.prompt_index` (the API answers prompt i with choices
 *   i*n .. i*n+n-1, which the reply's messages name the same way);
 * - token ids (number[]): a user message with no text (the ids decode only with
 *   the model's tokenizer) and the ids in `extras.prompt_token_ids`;
 * - `suffix` (the text after the insertion point) is model input too: a text
 *   block after the prompt with `extras.suffix: true`, in each prompt's message.
 * `prompt` and `suffix` therefore leave the invocation params, as `messages`
 * does for chat; everything else (max_tokens, echo, logprobs, best_of, n, stop,
 * stream, ...) stays there.
 */
import type { RequestResult } from "../types.js";
import type { ContentBlock, Message } from "../../src/format/schema.js";
import { describe, expectObj, fail, optString, type Loc, type Obj } from "../common/guards.js";
import { requestResult } from "../common/request.js";

function tokenIds(v: unknown[], loc: Loc): number[] {
  for (let i = 0; i < v.length; i++) {
    const t = v[i];
    if (typeof t !== "number" || !Number.isSafeInteger(t) || t < 0)
      fail([...loc, i], `expected a token id (a non-negative integer), got ${typeof t === "number" ? t : describe(t)}`, "int_type");
  }
  return v as number[];
}

function userMessage(text: string | undefined, ids: number[] | undefined, suffix: string | undefined, index: number | undefined): Message {
  const content: ContentBlock[] = [];
  if (text !== undefined) content.push({ type: "text", text });
  if (suffix !== undefined) content.push({ type: "text", text: suffix, extras: { suffix: true } });
  const msg: Message = { role: "user", content };
  let extras: Obj | undefined;
  if (index !== undefined) (extras ??= {}).prompt_index = index;
  if (ids !== undefined) (extras ??= {}).prompt_token_ids = ids;
  if (extras) msg.extras = extras;
  return msg;
}

/** The prompt's messages; `suffix` goes into each. Null or absent: none (the API then completes from an empty document). */
export function promptMessages(prompt: unknown, suffix: string | undefined, loc: Loc = ["prompt"]): Message[] {
  if (prompt === undefined || prompt === null) return suffix === undefined ? [] : [userMessage(undefined, undefined, suffix, undefined)];
  if (typeof prompt === "string") return [userMessage(prompt, undefined, suffix, undefined)];
  if (!Array.isArray(prompt))
    return fail(
      loc,
      `expected a string, an array of strings, an array of token ids or an array of token-id arrays, got ${describe(prompt)}`,
      "prompt_type",
    );
  if (prompt.length === 0) return [];
  const first = prompt[0];
  if (typeof first === "number") return [userMessage(undefined, tokenIds(prompt, loc), suffix, undefined)];
  const out: Message[] = [];
  const strings = typeof first === "string";
  for (let i = 0; i < prompt.length; i++) {
    const p = prompt[i];
    if (strings) {
      if (typeof p !== "string") fail([...loc, i], `expected a string like the batch's first prompt, got ${describe(p)}`, "string_type");
      out.push(userMessage(p, undefined, suffix, i));
    } else {
      if (!Array.isArray(p))
        fail([...loc, i], `expected an array of token ids like the batch's first prompt, got ${describe(p)}`, "list_type");
      out.push(userMessage(undefined, tokenIds(p, [...loc, i]), suffix, i));
    }
  }
  return out;
}

/** How many prompts the request holds (a batch's length, else 1): the reply's choices are grouped by it. */
export function promptCount(request: unknown): number {
  if (!request || typeof request !== "object") return 1;
  const p = (request as Obj).prompt;
  return Array.isArray(p) && p.length > 0 && typeof p[0] !== "number" ? p.length : 1;
}

/** The body fields the messages and the model are read from; the rest are invocation parameters. */
const TAKEN: readonly string[] = ["prompt", "suffix", "model"];

export function normalizeRequest(request: unknown, withParams = true): RequestResult {
  const body = expectObj(request, []);
  const messages = promptMessages(body.prompt, optString(body.suffix, [], "suffix"));
  return requestResult(messages, body, TAKEN, "openai", body.model, withParams);
}
