/**
 * Responses API response (`object: "response"`) -> one assistant message whose
 * blocks follow the `output` items in order; usage on it. Top-level fields
 * other than output/usage/model (id, status, the echoed request parameters,
 * previous_response_id, ...) go into the message's extras when not null.
 */
import type { ResponseResult } from "../types.js";
import type { Message } from "../../src/format/schema.js";
import { expectArray, expectObj, isObj, type Obj, put } from "../common/guards.js";
import { withUnmapped, type Unmapped } from "../common/content.js";
import { assistantItemBlocks } from "./items.js";
import { normalizeUsage } from "./usage.js";

const K_RESPONSE = new Set(["output", "usage", "model", "object", "output_text"]);

export function normalizeResponse(response: unknown): ResponseResult {
  const r = expectObj(response, []);
  const output = r.output === undefined || r.output === null ? [] : expectArray(r.output, ["output"]);
  const msg: Message = { role: "assistant", content: [] };
  const unmapped: Unmapped[] = [];
  for (let i = 0; i < output.length; i++) {
    const loc = ["output", i];
    const item = expectObj(output[i], loc);
    const blocks = assistantItemBlocks(item, loc, unmapped);
    if (blocks) for (const b of blocks) msg.content.push(b);
    else unmapped.push({ index: i, part: item });
  }
  let extras: Obj | undefined;
  for (const k in r) if (!K_RESPONSE.has(k) && r[k] !== undefined && r[k] !== null) put((extras ??= {}), k, r[k]);
  extras = withUnmapped(extras, unmapped);
  if (extras) msg.extras = extras;
  const usage = normalizeUsage(r.usage, ["usage"]);
  if (usage) msg.usage_metadata = usage;
  const result: ResponseResult = { messages: [msg], trace_provider: "openai" };
  if (typeof r.model === "string") result.trace_model_name = r.model;
  if (usage) result.usage_metadata = usage;
  // An incomplete response says why (max_output_tokens, content_filter); otherwise its status is the stop reason.
  const reason = isObj(r.incomplete_details) && typeof r.incomplete_details.reason === "string" ? r.incomplete_details.reason : undefined;
  const stop = reason ?? (typeof r.status === "string" ? r.status : undefined);
  if (stop !== undefined) result.stop_reason = stop;
  return result;
}
