/**
 * Gemini GenerateContentResponse -> one assistant message per candidate.
 * Candidate fields (`finishReason`, `safetyRatings`, `citationMetadata`,
 * `groundingMetadata`, `index`, logprobs, ...) go to that message's extras;
 * response fields (`responseId`, `promptFeedback`, ...) to the first message's,
 * with `usage_metadata`. `modelVersion` is the model. A response without
 * candidates (a blocked prompt) is one empty assistant message carrying
 * `promptFeedback`, so the block reason and the usage are not lost.
 */
import type { ResponseResult } from "../types.js";
import type { ContentBlock, Message } from "../../src/format/schema.js";
import { expectArray, expectObj, isObj, leftoversBut } from "../common/guards.js";
import { withUnmapped, type Unmapped } from "../common/content.js";
import { layOver } from "../common/extras.js";
import { CallIds, partToNative } from "./parts.js";
import { modelName } from "./request.js";
import { normalizeUsage } from "./usage.js";
import { readEitherSpelling, RESPONSE, RESPONSE_SCAN } from "./spelling.js";

function candidateMessage(raw: unknown, i: number): Message {
  const cand = isObj(raw) ? raw : expectObj(raw, ["candidates", i]);
  const ids = new CallIds(`c${i}_`);
  const content: ContentBlock[] = [];
  let unmapped: Unmapped[] | undefined;
  let extras = leftoversBut(cand, "content");
  if (cand.content !== undefined && cand.content !== null) {
    const c = isObj(cand.content) ? cand.content : expectObj(cand.content, ["candidates", i], "content");
    const parts = c.parts === undefined || c.parts === null ? [] : expectArray(c.parts, ["candidates", i, "content"], "parts");
    // One location for the candidate's parts, not one per part.
    const at = parts.length > 0 ? ["candidates", i, "content", "parts"] : [];
    for (let pi = 0; pi < parts.length; pi++) {
      // A function response is the caller's, never the model's output: kept whole, not invented into a reply.
      if (partToNative(parts[pi], at, pi, -1, pi, ids, content) !== true) (unmapped ??= []).push({ index: pi, part: parts[pi] });
    }
    extras = layOver(extras, leftoversBut(c, "role", "parts"));
    if (c.role !== undefined && c.role !== null && c.role !== "model") extras = { ...extras, vendor_role: c.role };
  }
  const msg: Message = { role: "assistant", content };
  const ex = withUnmapped(extras, unmapped);
  if (ex) msg.extras = ex;
  return msg;
}

/** A response in either JSON spelling (spelling.ts). */
export function normalizeResponse(response: unknown): ResponseResult {
  return readEitherSpelling(response, RESPONSE, RESPONSE_SCAN, readResponse);
}

/** A response in lowerCamelCase. */
export function readResponse(response: unknown): ResponseResult {
  const r = expectObj(response, []);
  const cands = r.candidates === undefined || r.candidates === null ? [] : expectArray(r.candidates, ["candidates"]);
  const messages = cands.map((c, i) => candidateMessage(c, i));
  if (messages.length === 0) messages.push({ role: "assistant", content: [] });
  const first = messages[0]!;
  // The response's fields first, the candidate's after (they win a clash): built in `top`, this call's own object.
  const top = leftoversBut(r, "candidates", "usageMetadata", "modelVersion");
  if (top) first.extras = layOver(top, first.extras);
  const usage = normalizeUsage(r.usageMetadata, ["usageMetadata"]);
  if (usage) first.usage_metadata = usage;
  const result: ResponseResult = { messages, trace_provider: "google" };
  const model = modelName(r.modelVersion);
  if (model !== undefined) result.trace_model_name = model;
  if (usage) result.usage_metadata = usage;
  const c0 = cands[0];
  const stop =
    isObj(c0) && typeof c0.finishReason === "string"
      ? c0.finishReason
      : isObj(r.promptFeedback) && typeof r.promptFeedback.blockReason === "string"
        ? r.promptFeedback.blockReason
        : undefined;
  if (stop !== undefined) result.stop_reason = stop;
  return result;
}
