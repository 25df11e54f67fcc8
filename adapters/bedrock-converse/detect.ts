/**
 * Structural recognition of Bedrock Converse payloads. Never throws.
 *
 * A request has `modelId` or another Converse-only key, or messages whose
 * blocks are type-less union objects (`{text}`, `{toolUse}`); common/markers.ts
 * holds that test so the OpenAI and Anthropic adapters stand back from the same
 * payloads. A response has `output.message`; stream events are one-member
 * union objects (`{messageStart}`, `{contentBlockDelta}`, ...).
 */
import { isObj } from "../common/guards.js";
import { detector, streamOf, type Recognisers } from "../common/detect.js";
import { isConverseRequest } from "../common/markers.js";
import { STREAM_EVENTS, STREAM_EXCEPTIONS } from "./stream.js";

export function isRequest(v: unknown): boolean {
  if (!isObj(v) || !isConverseRequest(v)) return false;
  // `modelId` alone (a prompt-management call) is a request; messages, when present, are a list.
  return v.messages === undefined || Array.isArray(v.messages);
}

export function isResponse(v: unknown): boolean {
  return (
    isObj(v) &&
    isObj(v.output) &&
    !Array.isArray(v.output) &&
    isObj(v.output.message) &&
    Array.isArray(v.output.message.content) &&
    !("object" in v)
  );
}

function isEvent(v: unknown): boolean {
  if (!isObj(v)) return false;
  let member = false;
  for (const k in v) {
    if (STREAM_EVENTS.has(k) || STREAM_EXCEPTIONS.has(k)) member = true;
    else if (k !== "$unknown") return false;
  }
  return member;
}

export const isStream = streamOf((e) => (isEvent(e) ? "own" : "other"));

export const recognisers: Recognisers = { isRequest, isResponse, isStream, pairFirst: "request" };
export const detect = detector(recognisers);
