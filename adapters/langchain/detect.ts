/**
 * Structural recognition of LangChain payloads. Never throws. Evidence is what
 * only LangChain writes: message records (constructor records, `{type, data}`
 * dicts, `{type: "human" | "ai" | ..., content}` dicts), `messages` as a list of
 * conversations, `prompts` as a list of strings, and `generations`. A flat
 * list of `{role, content}` messages is everyone's and is left to the others.
 */
import type { PayloadKind } from "../types.js";
import { isObj, type Obj } from "../common/guards.js";
import { isConstructorMessage, isDictMessage, isLangChainMessage, isTypedMessage } from "./records.js";

/** Detection runs on every record: a few elements tell. */
const PROBE = 16;

function isPlainMessage(v: unknown): boolean {
  return isObj(v) && typeof v.role === "string" && "content" in v;
}

function anyMessage(v: unknown): boolean {
  return isPlainMessage(v) || isLangChainMessage(v);
}

function every(list: unknown[], test: (v: unknown) => boolean): boolean {
  const n = Math.min(list.length, PROBE);
  for (let i = 0; i < n; i++) if (!test(list[i])) return false;
  return true;
}

/** A conversation with at least one LangChain-written message, all of them messages (of the first few). */
function isConversation(list: unknown[]): boolean {
  let langchain = false;
  const n = Math.min(list.length, PROBE);
  for (let i = 0; i < n; i++) {
    const m = list[i];
    if (isLangChainMessage(m)) langchain = true;
    else if (!isPlainMessage(m)) return false;
  }
  return langchain;
}

/** A batch of conversations: a list of lists of messages (any writing), as the tracer sends `inputs.messages`. */
function isBatch(list: unknown[]): boolean {
  return list.length > 0 && every(list, (c) => Array.isArray(c) && every(c, anyMessage));
}

function isRequest(v: unknown): v is Obj {
  if (!isObj(v)) return false;
  if (Array.isArray(v.messages)) return isBatch(v.messages) || isConversation(v.messages);
  return Array.isArray(v.prompts) && !("prompt" in v) && every(v.prompts, (p) => typeof p === "string");
}

/** An AI message record (any writing), or a generation holding one. */
function isAiRecord(v: unknown): boolean {
  if (!isObj(v)) return false;
  if (isConstructorMessage(v)) {
    const cls = (v.id as unknown[])[(v.id as unknown[]).length - 1];
    return cls === "AIMessage" || cls === "AIMessageChunk";
  }
  if (isDictMessage(v) || isTypedMessage(v)) return (v as Obj).type === "ai" || (v as Obj).type === "AIMessageChunk";
  return false;
}

function isGeneration(v: unknown): boolean {
  return isObj(v) && (isAiRecord(v.message) || (typeof v.text === "string" && (v.type === "Generation" || v.type === "GenerationChunk")));
}

function isResponse(v: unknown): boolean {
  if (!isObj(v)) return false;
  if (Array.isArray(v.generations)) return every(v.generations, (g) => (Array.isArray(g) ? every(g, isObj) : isObj(g)));
  return isAiRecord(v) || isGeneration(v);
}

function isStream(list: unknown[]): boolean {
  return (
    list.length > 0 &&
    every(list, (c) => isGeneration(c) || isAiRecord(c)) &&
    every(list, (c) => isChunk(isObj(c) && "message" in c ? c.message : c))
  );
}

function isChunk(v: unknown): boolean {
  if (!isObj(v)) return false;
  if (isConstructorMessage(v)) return String((v.id as unknown[])[(v.id as unknown[]).length - 1]).endsWith("Chunk");
  return (v as Obj).type === "AIMessageChunk";
}

/** What a pair's response side must be for the pair to be LangChain's (whatever the request). */
export function isResponseSide(v: unknown): boolean {
  return isResponse(v) || (Array.isArray(v) && isStream(v));
}

export function detect(payload: unknown): PayloadKind | null {
  try {
    if (Array.isArray(payload)) {
      if (isStream(payload)) return "stream";
      return isConversation(payload) || (isBatch(payload) && payload.some((c) => (c as unknown[]).some(isLangChainMessage)))
        ? "request"
        : null;
    }
    if (!isObj(payload)) return null;
    if ("request" in payload || "response" in payload) {
      const { request, response } = payload;
      const hasReq = request !== undefined && request !== null;
      const hasRes = response !== undefined && response !== null;
      if (!hasReq && !hasRes) return null;
      if (hasReq && !isRequest(request)) return null;
      if (hasRes && !isResponseSide(response)) return null;
      return "pair";
    }
    if (isRequest(payload)) return "request";
    return isResponse(payload) ? "response" : null;
  } catch {
    return null;
  }
}
