/** Anthropic `message` response -> the assistant message with usage_metadata. */
import type { ResponseResult } from "../types.js";
import type { Message } from "../../src/format/schema.js";
import { expectObj, fail, leftovers, type Obj } from "../common/guards.js";
import { contentToNative } from "./blocks.js";
import { normalizeUsage } from "./usage.js";

const K_RESPONSE = new Set(["role", "content", "model", "usage", "type"]);

export function normalizeResponse(response: unknown): ResponseResult {
  const r = expectObj(response, []);
  if (r.role !== undefined && r.role !== "assistant") fail(["role"], `a response message has role "assistant", got ${JSON.stringify(r.role)}`, "unsupported_role");
  const content = r.content === undefined || r.content === null ? [] : contentToNative(r.content, ["content"]);
  const msg: Message = { role: "assistant", content };
  const usage = normalizeUsage(r.usage, ["usage"]);
  if (usage) msg.usage_metadata = usage;
  const extras: Obj | undefined = leftovers(r, K_RESPONSE);
  if (extras) msg.extras = extras;
  const result: ResponseResult = { messages: [msg], trace_provider: "anthropic" };
  if (typeof r.model === "string") result.trace_model_name = r.model;
  if (usage) result.usage_metadata = usage;
  if (typeof r.stop_reason === "string") result.stop_reason = r.stop_reason;
  return result;
}
