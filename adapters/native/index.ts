/**
 * The native adapter: payloads already in the native format, and the reply
 * shapes SPEC §2.6 accepts for a model's output:
 *   {choices:[{message:{role,content}}], usage_metadata?}, {message:{role,content}},
 *   {role,content}, and the two-element array [role, content].
 * `content` may be a string (one text block) or native blocks. There is no
 * native stream form (SPEC §2.6: no reduce in JS/TS), so streams are rejected.
 */
import type { Adapter, NormalizedRecord, PayloadKind, RequestResult, ResponseResult, StreamAccumulator } from "../types.js";
import type { Message, UsageMetadata } from "../../src/format/schema.js";
import { nativeSchemas } from "../../src/format/schema.js";
import { adapterOf } from "../common/adapter.js";
import { describe, expectArray, expectObj, fail, isObj, under, type Loc, type Obj } from "../common/guards.js";
import { markOrphans } from "../common/content.js";
import { validate } from "../../src/format/validate.js";
import { NormalizeError, zodIssues } from "../../src/errors.js";
import { requestResult } from "../common/request.js";

/**
 * The schema alone does not hold the cross-field rules (tool-call links, one
 * media source); `normalize` never emits what `validate` rejects, so a native
 * record is checked whole. A tool result whose call was trimmed away is an
 * orphan, as in every adapter (DESIGN).
 */
function checked(messages: Message[], where: (i: number) => Loc): Message[] {
  markOrphans(messages);
  const issues = validate(messages);
  if (issues.length) throw new NormalizeError(issues.map((i) => ({ ...i, loc: [...where(i.loc[0] as number), ...i.loc.slice(1)] })));
  return messages;
}

export const FORMAT = "native";
export const native: Adapter = adapterOf(
  FORMAT,
  { detect, normalizeRequest, normalizeResponse, normalizeStream, createStreamAccumulator },
  normalize,
);
const ROLES = new Set(["system", "reasoning", "user", "assistant", "tool"]);

/** One message: string content becomes a text block; the result must satisfy the schema. */
function toMessage(raw: unknown, loc: Loc): Message {
  const m = expectObj(raw, loc);
  if (typeof m.role !== "string" || !ROLES.has(m.role)) {
    fail([...loc, "role"], `expected one of system, reasoning, user, assistant, tool; got ${JSON.stringify(m.role)}`, "unsupported_role");
  }
  const candidate = typeof m.content === "string" ? { ...m, content: [{ type: "text", text: m.content }] } : m;
  const parsed = nativeSchemas().Message.safeParse(candidate);
  if (!parsed.success) {
    throw new NormalizeError(zodIssues(parsed.error.issues, loc));
  }
  return parsed.data;
}

function pairToMessage(v: unknown[], loc: Loc): Message {
  if (v.length !== 2) fail(loc, `a [role, content] reply has two elements, got ${v.length}`, "tuple_length");
  return toMessage({ role: v[0], content: v[1] }, loc);
}

function usageOf(v: unknown, loc: Loc): UsageMetadata | undefined {
  if (v === undefined || v === null) return undefined;
  const parsed = nativeSchemas().UsageMetadata.safeParse(v);
  if (!parsed.success) throw new NormalizeError(zodIssues(parsed.error.issues, loc));
  return parsed.data;
}

function isMessageLike(v: unknown): v is Obj {
  return isObj(v) && typeof v.role === "string" && "content" in v;
}

const NATIVE_BLOCKS = new Set([
  "text",
  "reasoning",
  "image",
  "file",
  "audio",
  "video",
  "tool_call",
  "server_tool_call",
  "server_tool_result",
]);
const MESSAGE_KEYS = new Set(["role", "content", "tool_call_id", "usage_metadata", "extras"]);
const VENDOR_BLOCK_KEYS = ["source", "image_url", "input_audio", "citations", "input", "tool_use_id", "thinking", "cache_control"];

/**
 * A cheap structural test (no schema parse) for "could be a native message":
 * native roles and keys, string or native-typed blocks, no vendor-only block
 * fields. Detection runs on every record, so it must not cost a full validation;
 * normalizing still validates.
 */
function looksNative(m: unknown): boolean {
  if (!isObj(m) || typeof m.role !== "string" || !ROLES.has(m.role)) return false;
  for (const k in m) if (!MESSAGE_KEYS.has(k)) return false;
  const c = m.content;
  if (typeof c === "string") return true;
  if (!Array.isArray(c)) return false;
  for (const b of c) {
    if (!isObj(b) || typeof b.type !== "string" || !NATIVE_BLOCKS.has(b.type)) return false;
    for (const k of VENDOR_BLOCK_KEYS) if (k in b) return false;
  }
  return true;
}

/**
 * DESIGN: a record is native only if it has nothing but native fields. Any other
 * top-level field (`model`, `system`, `max_tokens`, sampling parameters, ...)
 * makes it a vendor record, whose adapter knows the provider and the system prompt.
 */
const REQUEST_KEYS = new Set(["messages"]);
const CHOICES_KEYS = new Set(["choices", "usage_metadata"]);
const ENVELOPE_KEYS = new Set(["message", "usage_metadata"]);
const CHOICE_KEYS = new Set(["message"]);

function onlyKeys(o: Obj, allowed: ReadonlySet<string>): boolean {
  for (const k in o) if (!allowed.has(k)) return false;
  return true;
}

export function detect(payload: unknown): PayloadKind | null {
  try {
    if (Array.isArray(payload)) {
      return payload.length === 2 && typeof payload[0] === "string" && looksNative({ role: payload[0], content: payload[1] })
        ? "response"
        : null;
    }
    if (!isObj(payload)) return null;
    if ("request" in payload || "response" in payload) {
      // The response side is the cheaper test, and usually settles it.
      const okRes = payload.response === undefined || payload.response === null || detect(payload.response) === "response";
      if (!okRes) return null;
      const okReq = payload.request === undefined || payload.request === null || detect(payload.request) === "request";
      return okReq ? "pair" : null;
    }
    if (Array.isArray(payload.messages)) return onlyKeys(payload, REQUEST_KEYS) && payload.messages.every(looksNative) ? "request" : null;
    if (Array.isArray(payload.choices)) {
      const c = payload.choices;
      return onlyKeys(payload, CHOICES_KEYS) &&
        c.length > 0 &&
        c.every((x) => isObj(x) && onlyKeys(x, CHOICE_KEYS) && looksNative(x.message))
        ? "response"
        : null;
    }
    if (isMessageLike(payload.message)) return onlyKeys(payload, ENVELOPE_KEYS) && looksNative(payload.message) ? "response" : null;
    if (isMessageLike(payload)) return looksNative(payload) ? "response" : null;
    return null;
  } catch {
    return null;
  }
}

/**
 * True when the payload (a request, a reply, or a {request, response} pair) is
 * native to the letter of the schema: content as blocks, no string shorthand.
 * Such a payload stays native under auto-detection, whatever its model name.
 */
export function isStrictlyNative(payload: unknown): boolean {
  if (isObj(payload) && ("request" in payload || "response" in payload)) {
    const r = payload.request;
    const s = payload.response;
    return (
      (r === undefined || r === null || isStrictlyNative(r)) &&
      (s === undefined || s === null || isStrictlyNative(s)) &&
      (r != null || s != null)
    );
  }
  if (detect(payload) === null) return false;
  if (isObj(payload) && Array.isArray(payload.messages))
    return payload.messages.every((m) => typeof (m as Obj).content !== "string" && nativeSchemas().Message.safeParse(m).success);
  if (isObj(payload) && Array.isArray(payload.choices))
    return payload.choices.every((c) => isObj(c) && nativeSchemas().Message.safeParse(c.message).success) && "usage_metadata" in payload;
  if (isObj(payload) && isObj(payload.message)) return nativeSchemas().Message.safeParse(payload.message).success;
  return false;
}

/** The body fields the messages and the model are read from; the rest are invocation parameters. */
const TAKEN: readonly string[] = ["messages", "model"];

export function normalizeRequest(request: unknown): RequestResult {
  const body = expectObj(request, []);
  const list = expectArray(body.messages, ["messages"]);
  const messages = checked(
    list.map((m, i) => toMessage(m, ["messages", i])),
    (i) => ["messages", i],
  );
  return requestResult(messages, body, TAKEN, undefined, body.model);
}

export function normalizeResponse(response: unknown): ResponseResult {
  let messages: Message[];
  let usage: UsageMetadata | undefined;
  let model: string | undefined;
  if (Array.isArray(response)) {
    messages = [pairToMessage(response, [])];
  } else {
    const r = expectObj(response, []);
    if (typeof r.model === "string") model = r.model;
    if (Array.isArray(r.choices)) {
      messages = r.choices.map((c, i) => toMessage(expectObj(c, ["choices", i]).message, ["choices", i, "message"]));
      usage = usageOf(r.usage_metadata, ["usage_metadata"]);
    } else if (r.message !== undefined) {
      messages = [toMessage(r.message, ["message"])];
      usage = usageOf(r.usage_metadata, ["usage_metadata"]);
    } else if (typeof r.role === "string") {
      messages = [toMessage(r, [])];
    } else {
      return fail([], "expected a native reply: {choices:[{message}]}, {message}, {role, content} or [role, content]", "unknown_payload");
    }
  }
  const shape = Array.isArray(response)
    ? "pair"
    : isObj(response) && Array.isArray(response.choices)
      ? "choices"
      : isObj(response) && response.message !== undefined
        ? "message"
        : "bare";
  checked(messages, (i) => (shape === "choices" ? ["choices", i, "message"] : shape === "message" ? ["message"] : []));
  const first = messages[0];
  usage ??= first?.usage_metadata;
  if (first && usage && !first.usage_metadata) first.usage_metadata = usage;
  const result: ResponseResult = { messages };
  if (usage) result.usage_metadata = usage;
  if (model !== undefined) result.trace_model_name = model;
  return result;
}

export function normalizeStream(chunks: readonly unknown[]): ResponseResult {
  return fail([], `the native format has no stream form (SPEC §2.6); got ${describe(chunks)}`, "unsupported_stream");
}

export function createStreamAccumulator(): StreamAccumulator {
  return {
    push: (chunk: unknown) => fail([], `the native format has no stream form (SPEC §2.6); got ${describe(chunk)}`, "unsupported_stream"),
    result: () => ({ messages: [] }),
  };
}

export function normalize(payload: unknown): NormalizedRecord {
  const out: NormalizedRecord = { format: FORMAT, metadata: {} };
  let reqModel: string | undefined;
  let res: ResponseResult | undefined;
  const kind = detect(payload);
  if (isObj(payload) && ("request" in payload || "response" in payload)) {
    if (payload.request !== undefined && payload.request !== null) {
      const req = under("request", () => normalizeRequest(payload.request));
      out.inputs = { messages: req.messages };
      reqModel = req.trace_model_name;
    }
    if (payload.response !== undefined && payload.response !== null) res = under("response", () => normalizeResponse(payload.response));
    if (!out.inputs && !res) fail([], "a {request, response} record needs at least one of them", "missing");
  } else if (kind === "request" || (isObj(payload) && Array.isArray(payload.messages))) {
    const req = normalizeRequest(payload);
    out.inputs = { messages: req.messages };
    reqModel = req.trace_model_name;
  } else {
    res = normalizeResponse(payload);
  }
  if (res) out.outputs = { messages: res.messages };
  const model = res?.trace_model_name ?? reqModel;
  if (model !== undefined) out.metadata.trace_model_name = model;
  return out;
}

export default native;
