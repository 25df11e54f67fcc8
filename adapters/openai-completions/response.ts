/**
 * Legacy `text_completion` response -> one assistant message per choice (see
 * reply.ts), usage on the first, as openai-chat maps it. The response's own
 * fields other than choices, usage and model (id, object, created,
 * system_fingerprint, ...) go into the first message's extras, as for chat.
 */
import type { ResponseContext, ResponseResult } from "../types.js";
import type { Message } from "../../src/format/schema.js";
import { expectArray, expectObj, isObj, leftovers, optString } from "../common/guards.js";
import { normalizeUsage } from "../openai-chat/usage.js";
import { choiceMessage, promptInfo } from "./reply.js";

const K_RESPONSE = new Set(["choices", "usage", "model"]);
const K_CHOICE = new Set(["text", "index", "finish_reason", "logprobs"]);

export function normalizeResponse(response: unknown, ctx?: ResponseContext): ResponseResult {
  const r = expectObj(response, []);
  const choices = expectArray(r.choices, ["choices"]);
  const info = promptInfo(ctx?.request);
  const many = choices.length > 1;
  const messages: Message[] = [];
  for (let i = 0; i < choices.length; i++) {
    const c = expectObj(choices[i], ["choices", i]);
    const text = optString(c.text, ["choices", i], "text");
    messages.push(
      choiceMessage(
        {
          index: typeof c.index === "number" ? c.index : i,
          text,
          finish_reason: c.finish_reason,
          logprobs: c.logprobs,
          extras: leftovers(c, K_CHOICE),
        },
        many,
        info,
      ),
    );
  }
  const usage = normalizeUsage(r.usage, ["usage"]);
  const top = leftovers(r, K_RESPONSE);
  // No choices but usage or ids: one empty reply keeps them (nothing sent is dropped).
  if (messages.length === 0 && (usage || top)) messages.push({ role: "assistant", content: [] });
  const first = messages[0];
  if (first) {
    if (usage) first.usage_metadata = usage;
    if (top) first.extras = { ...top, ...first.extras };
  }
  const result: ResponseResult = { messages, trace_provider: "openai" };
  if (typeof r.model === "string") result.trace_model_name = r.model;
  if (usage) result.usage_metadata = usage;
  const stop = isObj(choices[0]) ? choices[0].finish_reason : undefined;
  if (typeof stop === "string") result.stop_reason = stop;
  return result;
}
