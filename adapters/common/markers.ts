/**
 * Structural markers that tell OpenAI chat-completions payloads from Anthropic
 * Messages payloads. Both adapters' `detect` use the same evidence so they can
 * never both claim one payload: each claims only when its own markers are
 * present and the other's are absent. A payload with neither (a bare
 * `{messages:[{role:"user",content:"hi"}]}` with an unknown model) is left
 * unclaimed, and `normalize` reports it instead of guessing.
 */
import { isObj, type Obj } from "./guards.js";

export interface Evidence {
  openai: boolean;
  anthropic: boolean;
}

/** A request body's evidence, and whether it is chat-shaped at all (messages of role-bearing objects). */
interface RequestEvidence extends Evidence {
  chat: boolean;
}

const OPENAI_REQUEST_KEYS = new Set([
  "max_completion_tokens",
  "n",
  "response_format",
  "frequency_penalty",
  "presence_penalty",
  "logprobs",
  "top_logprobs",
  "seed",
  "stream_options",
  "modalities",
  "audio",
  "reasoning_effort",
  "parallel_tool_calls",
  "store",
  "logit_bias",
  "prediction",
  "web_search_options",
  "functions",
  "function_call",
  "verbosity",
  "prompt_cache_key",
  "safety_identifier",
]);
const ANTHROPIC_REQUEST_KEYS = new Set([
  "system",
  "stop_sequences",
  "top_k",
  "thinking",
  "anthropic_version",
  "container",
  "mcp_servers",
  "context_management",
]);
/** Roles only OpenAI's chat format has. Comparisons, not a set lookup: detection asks this of every message of every record. */
function isOpenAIRole(r: unknown): boolean {
  return r === "system" || r === "developer" || r === "tool" || r === "function";
}
const OPENAI_PARTS = new Set(["image_url", "input_audio", "refusal"]);
const ANTHROPIC_BLOCKS = new Set([
  "tool_use",
  "tool_result",
  "document",
  "thinking",
  "redacted_thinking",
  "server_tool_use",
  "search_result",
  "container_upload",
  "mcp_tool_use",
  "mcp_tool_result",
]);

/** Model-name hints: a vendor's own model families. */
export function modelHint(model: unknown): Evidence {
  if (typeof model !== "string") return { openai: false, anthropic: false };
  const m = model.toLowerCase();
  return {
    anthropic: m.startsWith("claude") || m.startsWith("anthropic."),
    openai: /^(gpt-|o[1-9]|chatgpt|text-davinci|davinci|babbage|codex)/.test(m),
  };
}

function blockEvidence(block: unknown, ev: Evidence): void {
  if (!isObj(block)) return;
  const t = block.type;
  if (typeof t !== "string") return;
  if (OPENAI_PARTS.has(t)) ev.openai = true;
  else if (t === "file" && isObj(block.file)) ev.openai = true;
  else if (ANTHROPIC_BLOCKS.has(t) || t.endsWith("_tool_result")) ev.anthropic = true;
  else if (t === "image" && isObj(block.source)) ev.anthropic = true;
  else if (t === "text" && Array.isArray(block.citations)) ev.anthropic = true;
}

/** Message fields only OpenAI's chat format has (a switch of string comparisons, asked of every message key). */
function isOpenAIMessageKey(k: string): boolean {
  switch (k) {
    case "tool_calls":
    case "function_call":
    case "refusal":
    case "audio":
    case "tool_call_id":
    case "name":
    case "reasoning_content":
      return true;
    default:
      return false;
  }
}

// Detection runs on every record: one pass over the message's own keys (usually
// just role and content) instead of probing each marker key with `in`.
function messageEvidence(msg: unknown, ev: Evidence): void {
  if (!isObj(msg)) return;
  for (const k in msg) {
    if (k === "content") {
      const content = msg.content;
      if (Array.isArray(content)) for (let i = 0; i < content.length; i++) blockEvidence(content[i], ev);
      else if (content === null) ev.openai = true; // Anthropic content is never null
    } else if (k === "role") {
      if (isOpenAIRole(msg.role)) ev.openai = true;
    } else if (isOpenAIMessageKey(k)) ev.openai = true;
  }
}

/** Evidence from one message alone: a reply in one of SPEC §2.6's shapes (see reply.ts). */
export function replyEvidence(msg: Obj): Evidence {
  const ev: Evidence = { openai: false, anthropic: false };
  messageEvidence(msg, ev);
  return ev;
}

function toolsEvidence(tools: unknown, ev: Evidence): void {
  if (!Array.isArray(tools)) return;
  for (const t of tools) {
    if (!isObj(t)) continue;
    if (isObj(t.function) || t.type === "function" || t.type === "custom") ev.openai = true;
    else if ("input_schema" in t || (typeof t.type === "string" && /_\d{8}$/.test(t.type))) ev.anthropic = true;
  }
}

// Both vendor adapters ask about the same body during one auto-detection. Inside
// `detectionScope` the scan is done once (one slot: a record holds one request
// body); outside it every call scans afresh, so nothing is remembered across
// payloads (no stale answers, no retained memory).
let scope: { body?: Obj; ev?: RequestEvidence; convBody?: Obj; conv?: boolean } | undefined;

export function detectionScope<T>(fn: () => T): T {
  const outer = scope;
  scope = {};
  try {
    return fn();
  } finally {
    scope = outer;
  }
}

/** Evidence from a request body `{model, messages, ...}`. */
export function requestEvidence(body: Obj): RequestEvidence {
  if (!scope) return scanRequest(body);
  if (scope.body !== body || !scope.ev) {
    scope.body = body;
    scope.ev = scanRequest(body);
  }
  return scope.ev;
}

function scanRequest(body: Obj): RequestEvidence {
  const ev: RequestEvidence = { openai: false, anthropic: false, chat: false };
  for (const k in body) {
    if (OPENAI_REQUEST_KEYS.has(k)) ev.openai = true;
    else if (ANTHROPIC_REQUEST_KEYS.has(k)) ev.anthropic = true;
  }
  if (typeof body.tool_choice === "string") ev.openai = true;
  else if (
    isObj(body.tool_choice) &&
    (body.tool_choice.type === "auto" || body.tool_choice.type === "any" || body.tool_choice.type === "tool")
  )
    ev.anthropic = true;
  toolsEvidence(body.tools, ev);
  const msgs = body.messages;
  if (Array.isArray(msgs)) {
    // One pass: the markers, and (over the first 64) that every message is a role-bearing object.
    let chat = true;
    for (let i = 0; i < msgs.length; i++) {
      const m = msgs[i];
      if (i < 64 && !(isObj(m) && typeof m.role === "string")) chat = false;
      messageEvidence(m, ev);
    }
    ev.chat = chat;
  }
  if (!ev.openai && !ev.anthropic) {
    const hint = modelHint(body.model);
    ev.openai = hint.openai;
    ev.anthropic = hint.anthropic;
  }
  return ev;
}

/** True for an object that looks like a chat request at all: a `messages` array of role-bearing objects. */
export function looksLikeChatRequest(body: unknown): body is Obj {
  return isObj(body) && Array.isArray(body.messages) && !isConverseRequest(body) && requestEvidence(body).chat;
}

// Bedrock Converse requests are chat-shaped too (`messages` of role-bearing
// objects, a `system` list), but name the model `modelId` and write each
// content block as a union object without `type` (`{text}`, `{toolUse}`, ...).
// Either marker rules the OpenAI and Anthropic readings out, so the Converse
// adapter's claim is never contested.
/** The members a Converse content block (message or system) may have; a block has exactly one. */
export const CONVERSE_BLOCK_KEYS: ReadonlySet<string> = new Set([
  "text",
  "image",
  "document",
  "video",
  "audio",
  "toolUse",
  "toolResult",
  "guardContent",
  "cachePoint",
  "reasoningContent",
  "citationsContent",
  "searchResult",
  "toolAddition",
  "toolRemoval",
  "$unknown",
]);

/** A Converse content block: an object without `type` holding one of the union's members. */
export function isConverseBlock(b: unknown): boolean {
  if (!isObj(b) || "type" in b) return false;
  for (const k in b) if (CONVERSE_BLOCK_KEYS.has(k)) return true;
  return false;
}

/**
 * Converse request evidence: its own keys (`modelId`, `inferenceConfig`,
 * `toolConfig`, `additionalModelRequestFields`, `additionalModelResponseFieldPaths`,
 * `guardrailConfig`, `promptVariables`, `requestMetadata`), or (over the first
 * 8 messages) a type-less union block. Three adapters ask this of the same body
 * during one auto-detection: inside `detectionScope` it is answered once.
 */
export function isConverseRequest(body: Obj): boolean {
  if (!scope) return scanConverse(body);
  if (scope.convBody !== body || scope.conv === undefined) {
    scope.convBody = body;
    scope.conv = scanConverse(body);
  }
  return scope.conv;
}

function scanConverse(body: Obj): boolean {
  // Written out as named `in` tests, each with its own inline cache, not a loop of generic keyed ones.
  if (
    "modelId" in body ||
    "inferenceConfig" in body ||
    "toolConfig" in body ||
    "additionalModelRequestFields" in body ||
    "additionalModelResponseFieldPaths" in body ||
    "guardrailConfig" in body ||
    "promptVariables" in body ||
    "requestMetadata" in body
  )
    return true;
  const msgs = body.messages;
  if (!Array.isArray(msgs)) return false;
  const n = Math.min(msgs.length, 8);
  for (let i = 0; i < n; i++) {
    const m = msgs[i];
    if (isObj(m) && Array.isArray(m.content) && m.content.length > 0 && isConverseBlock(m.content[0])) return true;
  }
  return false;
}
