/**
 * Converse response -> the assistant message with usage_metadata.
 *
 * `{output: {message: {role, content}}, stopReason, usage, metrics,
 * additionalModelResponseFields, trace, performanceConfig, serviceTier}`: the
 * message's blocks are read as in a request; every other field (the SDK's
 * `$metadata` with the request id included) is kept in the message's extras.
 * A Converse response names no model, except that a prompt router says which
 * model it chose (`trace.promptRouter.invokedModelId`): that is the response's
 * model. A bare Converse message `{role: "assistant", content}` is read too.
 */
import type { ResponseResult } from "../types.js";
import type { Message } from "../../src/format/schema.js";
import { expectObj, fail, isObj, leftoversBut, type Loc, type Obj } from "../common/guards.js";
import { withUnmapped } from "../common/content.js";
import { assignOwned, copyOf } from "../common/extras.js";
import { convertContent, type Sink } from "./blocks.js";
import { normalizeUsage } from "./usage.js";

export function normalizeResponse(response: unknown): ResponseResult {
  const r = expectObj(response, []);
  let m: Obj | undefined;
  let loc: Loc;
  let extras: Obj | undefined;
  // The message's extras are gathered in one object of this call's own (no spreads: every response passes here).
  if ("output" in r) {
    const output = expectObj(r.output, [], "output");
    extras = copyOf(leftoversBut(r, "output", "usage"));
    if (isObj(output.message)) {
      m = output.message;
      loc = ["output", "message"];
      extras = assignOwned(extras, leftoversBut(output, "message"));
    } else {
      // An output member this adapter does not know ({$unknown: [...]}, or a later one): kept whole.
      loc = ["output"];
      (extras ??= {}).output = output;
    }
  } else {
    m = r;
    loc = [];
  }
  const sink: Sink = { blocks: [], unmapped: [] };
  if (m) {
    if (m.role !== undefined && m.role !== "assistant")
      fail([...loc, "role"], `a response message has role "assistant", got ${JSON.stringify(m.role)}`, "unsupported_role");
    if (m.content !== undefined && m.content !== null) convertContent(m.content, [...loc, "content"], sink);
    extras = assignOwned(extras, m === r ? leftoversBut(m, "role", "content", "usage") : leftoversBut(m, "role", "content"));
  }
  const msg: Message = { role: "assistant", content: sink.blocks };
  const usage = normalizeUsage(r.usage, ["usage"]);
  if (usage) msg.usage_metadata = usage;
  const ex = withUnmapped(extras, sink.unmapped);
  if (ex && Object.keys(ex).length) msg.extras = ex;
  const result: ResponseResult = { messages: [msg], trace_provider: "bedrock" };
  const routed = isObj(r.trace) && isObj(r.trace.promptRouter) ? r.trace.promptRouter.invokedModelId : undefined;
  if (typeof routed === "string") result.trace_model_name = routed;
  if (usage) result.usage_metadata = usage;
  if (typeof r.stopReason === "string") result.stop_reason = r.stopReason;
  return result;
}
