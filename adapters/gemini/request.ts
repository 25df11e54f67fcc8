/**
 * Gemini generateContent requests -> native messages + invocation params. Two
 * spellings of one request are read:
 * - the REST body: `{contents: Content[], systemInstruction, generationConfig,
 *   tools, toolConfig, safetySettings, cachedContent}` (the model is in the URL,
 *   sometimes logged as `model`);
 * - the `@google/genai` SDK's parameters: `{model, contents, config: {systemInstruction,
 *   tools, temperature, ...}}`, where `contents` may also be a string, one part,
 *   an array of parts (one user turn) or of Content objects.
 * `user` -> user, `model` -> assistant; each `functionResponse` part is a `tool`
 * message of its own, in order (the parts around it stay in their turn).
 */
import type { RequestResult } from "../types.js";
import type { ContentBlock, Message } from "../../src/format/schema.js";
import { describe, expectObj, fail, isObj, leftoversBut, type Key, type Loc, type Obj, put } from "../common/guards.js";
import { markOrphans, withUnmapped, type Unmapped } from "../common/content.js";
import { CallIds, partToNative } from "./parts.js";
import { readEitherSpelling, REQUEST, REQUEST_SCAN } from "./spelling.js";

/**
 * A Content, and where its parts sit (SDK shorthands group loose parts into one
 * user turn). Part `j` is at `at` + `j`, at `at` + `positions[j]` for loose
 * parts, or at `at` itself for a lone part (`single`). The parts are the
 * vendor's own array when there is one: no copy, no location per part.
 */
interface Turn {
  role: unknown;
  parts: readonly unknown[];
  at: Loc;
  positions?: number[];
  single?: boolean;
  extras?: Obj;
}

function partKey(t: Turn, j: number): Key | undefined {
  return t.single ? undefined : t.positions ? t.positions[j] : j;
}

/** A Content object: it has `parts` (the SDK's own test), or a `role` and no part data. */
function isContent(v: unknown): v is Obj {
  return isObj(v) && (Array.isArray(v.parts) || (typeof v.role === "string" && !("text" in v)));
}

const NO_PARTS: readonly unknown[] = [];

/** The Content `c`, at `parent` (+ `index` when it is an element of a list). */
function contentTurn(c: Obj, parent: Loc, index?: number): Turn {
  const parts = c.parts === undefined || c.parts === null ? NO_PARTS : c.parts;
  const at = index === undefined ? [...parent, "parts"] : parent.length === 1 ? [parent[0]!, index, "parts"] : [...parent, index, "parts"];
  if (!Array.isArray(parts)) fail(at, `expected an array of parts, got ${describe(parts)}`, "list_type");
  const turn: Turn = { role: c.role, parts, at };
  const extras = leftoversBut(c, "role", "parts");
  if (extras) turn.extras = extras;
  return turn;
}

/** `contents` in any spelling the API or the SDK accepts -> turns. */
export function toTurns(raw: unknown, loc: Loc): Turn[] {
  if (raw === undefined || raw === null) return [];
  if (typeof raw === "string") return [{ role: "user", parts: [raw], at: loc, single: true }];
  if (!Array.isArray(raw)) {
    if (!isObj(raw)) fail(loc, `expected a string, a part, a Content or an array of them, got ${describe(raw)}`, "contents_type");
    return isContent(raw) ? [contentTurn(raw, loc)] : [{ role: "user", parts: [raw], at: loc, single: true }];
  }
  const out: Turn[] = [];
  let loose: { parts: unknown[]; positions: number[] } | undefined;
  for (let i = 0; i < raw.length; i++) {
    const item = raw[i];
    if (isContent(item)) {
      loose = undefined;
      out.push(contentTurn(item, loc, i));
    } else {
      // Parts outside a Content are one user turn (the SDK's reading of `[part, part]`).
      if (!loose) {
        loose = { parts: [], positions: [] };
        out.push({ role: "user", parts: loose.parts, at: loc, positions: loose.positions });
      }
      loose.parts.push(item);
      loose.positions.push(i);
    }
  }
  return out;
}

/** A vendor role's native role: `user` and the old `function` -> user, `model` -> assistant. */
function nativeRole(r: unknown): Message["role"] | undefined {
  return r === "user" || r === "function" ? "user" : r === "model" ? "assistant" : undefined;
}

function turnMessage(role: Message["role"], content: ContentBlock[], extras: Obj | undefined, unmapped: Unmapped[] | undefined): Message {
  const msg: Message = { role, content };
  const ex = withUnmapped(extras, unmapped);
  if (ex) msg.extras = ex;
  return msg;
}

/**
 * Turns -> messages, appended to `out` (which may already hold the system
 * message). `ids` links function responses to their calls across the whole record.
 */
export function turnsToMessages(turns: readonly Turn[], loc: Loc, ids: CallIds, out: Message[] = []): Message[] {
  for (let ti = 0; ti < turns.length; ti++) {
    const t = turns[ti]!;
    const vendorRole = t.role === undefined || t.role === null ? "user" : t.role;
    const role = nativeRole(vendorRole);
    if (!role)
      fail([...loc, ti, "role"], `unsupported role ${JSON.stringify(vendorRole)}; expected user, model or function`, "unsupported_role");
    // The turn's own fields (and an old-style `function` role) ride on its first message.
    let turnExtras: Obj | undefined = t.extras;
    if (vendorRole === "function") turnExtras = { ...turnExtras, vendor_role: "function" };
    const first = out.length;
    let blocks: ContentBlock[] = [];
    let unmapped: Unmapped[] | undefined;
    const parts = t.parts;
    for (let pi = 0; pi < parts.length; pi++) {
      const r = partToNative(parts[pi], t.at, partKey(t, pi), ti, pi, ids, blocks);
      if (r === true) continue;
      if (r === false) {
        (unmapped ??= []).push({ index: pi, part: parts[pi] });
        continue;
      }
      // A function response is a message of its own: the parts before it close their message.
      if (blocks.length > 0 || unmapped) {
        out.push(turnMessage(role, blocks, out.length === first ? turnExtras : undefined, unmapped));
        blocks = [];
        unmapped = undefined;
      }
      if (out.length === first && turnExtras) r.extras = { ...turnExtras, ...r.extras };
      out.push(r);
    }
    // A turn with no parts at all is still a turn.
    if (blocks.length > 0 || unmapped || out.length === first)
      out.push(turnMessage(role, blocks, out.length === first ? turnExtras : undefined, unmapped));
  }
  return out;
}

/** `systemInstruction` (a Content, or the SDK's string / part / parts) -> one system message. */
function systemMessage(raw: unknown, loc: Loc): Message | undefined {
  if (raw === undefined || raw === null) return undefined;
  const ids = new CallIds("system_");
  const content: ContentBlock[] = [];
  let unmapped: Unmapped[] | undefined;
  let extras: Obj | undefined;
  let index = 0;
  for (const t of toTurns(raw, loc)) {
    // The role of a system instruction is ignored by the API; kept only if unusual.
    if (t.role !== undefined && t.role !== "user" && t.role !== "system") extras = { ...extras, vendor_role: t.role };
    if (t.extras) extras = { ...extras, ...t.extras };
    for (let j = 0; j < t.parts.length; j++) {
      if (partToNative(t.parts[j], t.at, partKey(t, j), -1, index, ids, content) !== true)
        (unmapped ??= []).push({ index, part: t.parts[j] });
      index++;
    }
  }
  return turnMessage("system", content, extras, unmapped);
}

/** Client-side plumbing in the SDK's `config`, never sent as such and never recorded: headers may hold keys. */
const SDK_CLIENT_ONLY = new Set(["httpOptions", "abortSignal"]);

/** `models/gemini-2.5-flash` -> `gemini-2.5-flash`: the name users know. */
export function modelName(v: unknown): string | undefined {
  if (typeof v !== "string" || v === "") return undefined;
  return v.startsWith("models/") ? v.slice("models/".length) : v;
}

/** A request in either JSON spelling (spelling.ts). */
export function normalizeRequest(request: unknown): RequestResult {
  return readEitherSpelling(request, REQUEST, REQUEST_SCAN, readRequest);
}

function readRequest(request: unknown): RequestResult {
  const body = expectObj(request, []);
  if (!("contents" in body)) fail(["contents"], "a Gemini request needs contents", "missing");
  const config = body.config === undefined || body.config === null ? undefined : expectObj(body.config, ["config"]);
  const sysLoc =
    body.systemInstruction !== undefined && body.systemInstruction !== null ? ["systemInstruction"] : ["config", "systemInstruction"];
  const sys = systemMessage(body.systemInstruction ?? config?.systemInstruction, sysLoc);
  const messages = turnsToMessages(toTurns(body.contents, ["contents"]), ["contents"], new CallIds(), sys ? [sys] : []);
  const invocation_params: Obj = {};
  for (const k in body)
    if (k !== "contents" && k !== "systemInstruction" && k !== "model" && k !== "config" && body[k] !== undefined)
      put(invocation_params, k, body[k]);
  if (config)
    for (const k in config)
      if (k !== "systemInstruction" && !SDK_CLIENT_ONLY.has(k) && config[k] !== undefined) put(invocation_params, k, config[k]);
  const result: RequestResult = { messages: markOrphans(messages), invocation_params, trace_provider: "google" };
  const model = modelName(body.model);
  if (model !== undefined) result.trace_model_name = model;
  return result;
}
