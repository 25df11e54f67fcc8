/**
 * A quick yes to "does the zod schema (schema.ts) accept these messages?".
 *
 * `validate` runs on every live LLM span and wrapped call, and zod's generic
 * walk (discriminated union, strict-object key checks, issue bookkeeping) was
 * the largest part of its cost. This walk checks the same shape by hand and
 * answers only `true` (certainly accepted) or `false` (not sure): on `false`
 * validate asks zod, so every issue, its location, message and type still
 * come from zod alone. It must therefore never say `true` where zod would
 * refuse; anything unusual (an unknown key, a class instance where a record
 * goes, -0, a big integer) is left to zod. test/format/shape.test.ts holds it
 * to zod on the fixtures and on mutations of them, so a schema change that
 * this file misses shows up there.
 *
 * surelyValid goes one step further, for validate's whole answer: the same
 * walk also applies the rules validate adds to zod's, so that messages with
 * nothing to report are walked once.
 */
import type { Obj } from "../internal/obj.js";

const ROLES = new Set(["system", "reasoning", "user", "assistant", "tool"]);
const MESSAGE_KEYS = new Set(["role", "content", "tool_call_id", "usage_metadata", "extras"]);
const TEXT_KEYS = new Set(["type", "text", "annotations", "extras"]);
const REASONING_KEYS = new Set(["type", "text", "extras"]);
const MEDIA_KEYS = new Set(["type", "url", "base64", "id", "mime_type", "extras"]);
const TOOL_CALL_KEYS = new Set(["type", "name", "args", "id", "extras"]);
const SERVER_TOOL_CALL_KEYS = new Set(["type", "id", "name", "args", "extras"]);
const SERVER_TOOL_RESULT_KEYS = new Set(["type", "tool_call_id", "id", "status", "output", "extras"]);
const USAGE_KEYS = new Set([
  "input_tokens",
  "output_tokens",
  "total_tokens",
  "input_token_details",
  "output_token_details",
  "estimated",
  "input_cost",
  "output_cost",
  "total_cost",
  "extras",
]);
const INPUT_DETAIL_COUNTS = ["cache_read", "cache_creation", "audio"] as const;
const OUTPUT_DETAIL_COUNTS = ["reasoning", "audio"] as const;

/** A plain object (what JSON.parse and object literals make): zod's records and objects accept it. */
function plain(v: unknown): v is Obj {
  if (typeof v !== "object" || v === null) return false;
  const p: unknown = Object.getPrototypeOf(v);
  return p === Object.prototype || p === null;
}

/**
 * A record zod certainly accepts (z.record(z.string(), ...)): plain, no symbol
 * keys (zod checks those against z.string() and refuses them), and an
 * ordinary `constructor` (zod's plain-object test looks at it).
 */
function record(v: unknown): v is Obj {
  if (!plain(v)) return false;
  const ctor: unknown = (v as { constructor?: unknown }).constructor;
  if (ctor !== Object && ctor !== undefined) return false;
  return Object.getOwnPropertySymbols(v).length === 0;
}

/** Own enumerable keys all among `allowed` (zod's strict objects refuse any other). */
function keysIn(o: Obj, allowed: ReadonlySet<string>): boolean {
  for (const k in o) if (!allowed.has(k)) return false;
  return true;
}

const optString = (v: unknown) => v === undefined || typeof v === "string";
const optRecord = (v: unknown) => v === undefined || record(v);
/** z.number().int().nonnegative(): a safe integer >= 0 (-0 left to zod). */
const count = (v: unknown) => typeof v === "number" && Number.isSafeInteger(v) && v >= 0 && !Object.is(v, -0);
const optCount = (v: unknown) => v === undefined || count(v);
const optCost = (v: unknown) => v === undefined || (typeof v === "number" && Number.isFinite(v) && v >= 0 && !Object.is(v, -0));

function details(v: unknown, counts: readonly string[]): boolean {
  if (v === undefined) return true;
  if (!plain(v)) return false;
  for (const k of counts) if (!optCount(v[k])) return false;
  return true;
}

function usage(u: unknown): boolean {
  if (u === undefined) return true;
  if (!plain(u) || !keysIn(u, USAGE_KEYS)) return false;
  return (
    count(u.input_tokens) &&
    count(u.output_tokens) &&
    count(u.total_tokens) &&
    details(u.input_token_details, INPUT_DETAIL_COUNTS) &&
    details(u.output_token_details, OUTPUT_DETAIL_COUNTS) &&
    (u.estimated === undefined || typeof u.estimated === "boolean") &&
    optCost(u.input_cost) &&
    optCost(u.output_cost) &&
    optCost(u.total_cost) &&
    optRecord(u.extras)
  );
}

function block(b: unknown): b is Obj {
  if (!plain(b)) return false;
  if (!optRecord(b.extras)) return false;
  switch (b.type) {
    case "text": {
      if (!keysIn(b, TEXT_KEYS) || typeof b.text !== "string") return false;
      const a = b.annotations;
      if (a === undefined) return true;
      if (!Array.isArray(a)) return false;
      for (let i = 0; i < a.length; i++) if (!record(a[i])) return false;
      return true;
    }
    case "reasoning":
      return keysIn(b, REASONING_KEYS) && typeof b.text === "string";
    case "image":
    case "file":
    case "audio":
    case "video":
      return keysIn(b, MEDIA_KEYS) && optString(b.url) && optString(b.base64) && optString(b.id) && optString(b.mime_type);
    case "tool_call":
      return keysIn(b, TOOL_CALL_KEYS) && optString(b.name) && record(b.args) && optString(b.id);
    case "server_tool_call":
      return keysIn(b, SERVER_TOOL_CALL_KEYS) && typeof b.id === "string" && typeof b.name === "string" && record(b.args);
    case "server_tool_result":
      return (
        keysIn(b, SERVER_TOOL_RESULT_KEYS) &&
        typeof b.tool_call_id === "string" &&
        optString(b.id) &&
        (b.status === "success" || b.status === "error")
      );
    default:
      return false;
  }
}

/** True only when the zod `Messages` schema certainly accepts `messages`; false means "ask zod". */
export function surelyMessages(messages: unknown): boolean {
  if (!Array.isArray(messages)) return false;
  for (let i = 0; i < messages.length; i++) {
    const m: unknown = messages[i];
    if (!plain(m) || !keysIn(m, MESSAGE_KEYS)) return false;
    if (typeof m.role !== "string" || !ROLES.has(m.role)) return false;
    if (!optString(m.tool_call_id) || !optRecord(m.extras) || !usage(m.usage_metadata)) return false;
    const content = m.content;
    if (!Array.isArray(content)) return false;
    for (let j = 0; j < content.length; j++) if (!block(content[j])) return false;
  }
  return true;
}

/** A media block's source rule as validate states it: exactly one of base64, url and id, and a mime_type beside base64. */
function oneSource(b: Obj): boolean {
  const n = (b.base64 !== undefined ? 1 : 0) + (b.url !== undefined ? 1 : 0) + (b.id !== undefined ? 1 : 0);
  return n === 1 && (b.base64 === undefined || b.mime_type !== undefined);
}

/**
 * True only when non-strict `validate` certainly finds nothing in `messages`:
 * the shape surelyMessages checks, and in the same walk the rules validate
 * adds on top of zod (a `tool_call_id` only on a `tool` message, naming a
 * tool call of an earlier assistant message unless `extras.orphan` says its
 * call was trimmed away; a media block with one source). False means "run
 * validate's own checks", which then find every issue. Every live LLM span
 * and wrapped call is validated, so the shape and the rules are checked in
 * one walk rather than two.
 */
export function surelyValid(messages: unknown): boolean {
  if (!Array.isArray(messages)) return false;
  let calls: Set<string> | undefined;
  for (let i = 0; i < messages.length; i++) {
    const m: unknown = messages[i];
    if (!plain(m) || !keysIn(m, MESSAGE_KEYS)) return false;
    const role = m.role;
    if (typeof role !== "string" || !ROLES.has(role)) return false;
    if (!optRecord(m.extras) || !usage(m.usage_metadata)) return false;
    const callId = m.tool_call_id;
    if (callId !== undefined) {
      if (typeof callId !== "string" || role !== "tool") return false;
      if (!calls?.has(callId) && (m.extras as Obj | undefined)?.orphan !== true) return false;
    }
    const content = m.content;
    if (!Array.isArray(content)) return false;
    for (let j = 0; j < content.length; j++) {
      const b: unknown = content[j];
      if (!block(b)) return false;
      switch (b.type) {
        case "image":
        case "file":
        case "audio":
        case "video":
          if (!oneSource(b)) return false;
          break;
        case "tool_call":
          if (role === "assistant" && typeof b.id === "string") (calls ??= new Set()).add(b.id);
      }
    }
  }
  return true;
}
