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

/**
 * Which vendor a request body's key is only one's: OpenAI's chat parameters or
 * Anthropic's. A switch of string comparisons (for-in keys are interned, as the
 * literals are): detection asks it of every key of every request.
 */
function requestKeyVendor(k: string): keyof Evidence | undefined {
  switch (k) {
    case "max_completion_tokens":
    case "n":
    case "response_format":
    case "frequency_penalty":
    case "presence_penalty":
    case "logprobs":
    case "top_logprobs":
    case "seed":
    case "stream_options":
    case "modalities":
    case "audio":
    case "reasoning_effort":
    case "parallel_tool_calls":
    case "store":
    case "logit_bias":
    case "prediction":
    case "web_search_options":
    case "functions":
    case "function_call":
    case "verbosity":
    case "prompt_cache_key":
    case "safety_identifier":
      return "openai";
    case "system":
    case "stop_sequences":
    case "top_k":
    case "thinking":
    case "anthropic_version":
    case "container":
    case "mcp_servers":
    case "context_management":
      return "anthropic";
    default:
      return undefined;
  }
}
/** Roles only OpenAI's chat format has. Comparisons, not a set lookup: detection asks this of every message of every record. */
function isOpenAIRole(r: unknown): boolean {
  return r === "system" || r === "developer" || r === "tool" || r === "function";
}

/** Model-name hints: a vendor's own model families. */
export function modelHint(model: unknown): Evidence {
  if (typeof model !== "string") return { openai: false, anthropic: false };
  const m = model.toLowerCase();
  return {
    anthropic: m.startsWith("claude") || m.startsWith("anthropic."),
    openai: /^(gpt-|o[1-9]|chatgpt|text-davinci|davinci|babbage|codex)/.test(m),
  };
}

/**
 * A content block's evidence: parts only OpenAI writes (`image_url`, `input_audio`,
 * `refusal`, a `file` with a file object) and blocks only Anthropic writes (tool
 * use and results, documents, thinking, server tools, an image with a `source`,
 * text with `citations`). A switch of string comparisons: detection asks this of
 * every block of every message.
 */
function blockEvidence(block: unknown, ev: Evidence): void {
  if (!isObj(block)) return;
  const t = block.type;
  if (typeof t !== "string") return;
  switch (t) {
    case "text":
      if (Array.isArray(block.citations)) ev.anthropic = true;
      return;
    case "image":
      if (isObj(block.source)) ev.anthropic = true;
      return;
    case "file":
      if (isObj(block.file)) ev.openai = true;
      return;
    case "image_url":
    case "input_audio":
    case "refusal":
      ev.openai = true;
      return;
    case "tool_use":
    case "tool_result":
    case "document":
    case "thinking":
    case "redacted_thinking":
    case "server_tool_use":
    case "search_result":
    case "container_upload":
    case "mcp_tool_use":
    case "mcp_tool_result":
      ev.anthropic = true;
      return;
    default:
      if (t.endsWith("_tool_result")) ev.anthropic = true;
  }
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

/** The evidence of a request body's own keys, its tool choice and its tools (everything but the messages). */
function bodyEvidence(body: Obj, ev: Evidence): void {
  for (const k in body) {
    const vendor = requestKeyVendor(k);
    if (vendor === "openai") ev.openai = true;
    else if (vendor === "anthropic") ev.anthropic = true;
  }
  if (typeof body.tool_choice === "string") ev.openai = true;
  else if (
    isObj(body.tool_choice) &&
    (body.tool_choice.type === "auto" || body.tool_choice.type === "any" || body.tool_choice.type === "tool")
  )
    ev.anthropic = true;
  toolsEvidence(body.tools, ev);
}

function scanRequest(body: Obj): RequestEvidence {
  const ev: RequestEvidence = { openai: false, anthropic: false, chat: false };
  bodyEvidence(body, ev);
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

/**
 * `!isConverseRequest(body)` and `requestEvidence(body)`'s `chat && !anthropic`
 * (a chat request beside an OpenAI response is OpenAI's), with less work: one
 * pass over the messages serves both, of a message only its content blocks
 * can be Anthropic's, so its other keys are not judged one by one, and a request
 * that is not chat-shaped is turned down at once. Every read the two full scans
 * make is made here too (the Converse keys asked, each message's keys listed, its
 * role and content read), so an object that throws there throws here. OpenAI
 * evidence matters only against a Claude model name (`modelHint`): with one and
 * no OpenAI role seen, the full scan decides.
 */
export function isChatWithoutAnthropicOrConverseEvidence(body: Obj): boolean {
  if (hasConverseKey(body)) return false;
  // scanRequest's shape (chat unused), so the helpers that mark it see one shape.
  const ev: RequestEvidence = { openai: false, anthropic: false, chat: false };
  bodyEvidence(body, ev);
  const msgs = body.messages;
  if (ev.anthropic || !Array.isArray(msgs)) return false;
  const n = msgs.length;
  for (let i = 0; i < n; i++) {
    const m = msgs[i];
    if (!isObj(m)) {
      if (i < 64) return false;
      continue;
    }
    // scanConverse's test of the first messages.
    if (i < CONVERSE_PROBE && isConverseContent(m.content)) return false;
    if (i < 64 && typeof m.role !== "string") return false;
    for (const k in m) {
      if (k === "role") {
        if (isOpenAIRole(m.role)) ev.openai = true;
      } else if (k === "content") {
        const content = m.content;
        if (Array.isArray(content)) for (let j = 0; j < content.length; j++) blockEvidence(content[j], ev);
      }
    }
  }
  if (ev.anthropic) return false;
  return ev.openai || !modelHint(body.model).anthropic || !requestEvidence(body).anthropic;
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

/** The Converse request keys (each its own named `in` test, with its own inline cache, not a loop of generic keyed ones). */
function hasConverseKey(body: Obj): boolean {
  return (
    "modelId" in body ||
    "inferenceConfig" in body ||
    "toolConfig" in body ||
    "additionalModelRequestFields" in body ||
    "additionalModelResponseFieldPaths" in body ||
    "guardrailConfig" in body ||
    "promptVariables" in body ||
    "requestMetadata" in body
  );
}

/** How many of the first messages are looked at for a Converse union block. */
const CONVERSE_PROBE = 8;

/** A message's content whose first block is a Converse union block. */
function isConverseContent(content: unknown): boolean {
  return Array.isArray(content) && content.length > 0 && isConverseBlock(content[0]);
}

function scanConverse(body: Obj): boolean {
  if (hasConverseKey(body)) return true;
  const msgs = body.messages;
  if (!Array.isArray(msgs)) return false;
  const n = Math.min(msgs.length, CONVERSE_PROBE);
  for (let i = 0; i < n; i++) {
    const m = msgs[i];
    if (isObj(m) && isConverseContent(m.content)) return true;
  }
  return false;
}
