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
import { describe, expectObj, fail, isObj, leftovers, type Loc, type Obj } from "../common/guards.js";
import { markOrphans, withUnmapped, type Unmapped } from "../common/content.js";
import { CallIds, partToNative } from "./parts.js";

/** A Content with where each of its parts came from (SDK shorthands group loose parts into one user turn). */
interface Turn {
  role: unknown;
  parts: { raw: unknown; loc: Loc }[];
  extras?: Obj;
}

/** A Content object: it has `parts` (the SDK's own test), or a `role` and no part data. */
function isContent(v: unknown): v is Obj {
  return isObj(v) && (Array.isArray(v.parts) || (typeof v.role === "string" && !("text" in v)));
}

function contentTurn(c: Obj, loc: Loc): Turn {
  const parts = c.parts === undefined || c.parts === null ? [] : c.parts;
  if (!Array.isArray(parts)) fail([...loc, "parts"], `expected an array of parts, got ${describe(parts)}`, "list_type");
  return { role: c.role, parts: parts.map((raw, j) => ({ raw, loc: [...loc, "parts", j] })), extras: leftovers(c, new Set(["role", "parts"])) };
}

/** `contents` in any spelling the API or the SDK accepts -> turns. */
export function toTurns(raw: unknown, loc: Loc): Turn[] {
  if (raw === undefined || raw === null) return [];
  if (typeof raw === "string") return [{ role: "user", parts: [{ raw, loc }] }];
  if (!Array.isArray(raw)) {
    if (!isObj(raw)) fail(loc, `expected a string, a part, a Content or an array of them, got ${describe(raw)}`, "contents_type");
    return isContent(raw) ? [contentTurn(raw, loc)] : [{ role: "user", parts: [{ raw, loc }] }];
  }
  const out: Turn[] = [];
  let loose: Turn | undefined;
  for (let i = 0; i < raw.length; i++) {
    const item = raw[i];
    if (isContent(item)) {
      loose = undefined;
      out.push(contentTurn(item, [...loc, i]));
    } else {
      // Parts outside a Content are one user turn (the SDK's reading of `[part, part]`).
      if (!loose) out.push((loose = { role: "user", parts: [] }));
      loose.parts.push({ raw: item, loc: [...loc, i] });
    }
  }
  return out;
}

const ROLES: Record<string, Message["role"]> = { user: "user", model: "assistant", function: "user" };

/** Turns -> messages. `ids` links function responses to their calls across the whole record. */
export function turnsToMessages(turns: readonly Turn[], loc: Loc, ids: CallIds): Message[] {
  const out: Message[] = [];
  turns.forEach((t, ti) => {
    const vendorRole = t.role === undefined || t.role === null ? "user" : t.role;
    const role = typeof vendorRole === "string" && Object.hasOwn(ROLES, vendorRole) ? ROLES[vendorRole]! : undefined;
    if (!role) fail([...loc, ti, "role"], `unsupported role ${JSON.stringify(vendorRole)}; expected user, model or function`, "unsupported_role");
    // The turn's own fields (and an old-style `function` role) ride on its first message.
    let turnExtras: Obj | undefined = t.extras;
    if (vendorRole === "function") turnExtras = { ...turnExtras, vendor_role: "function" };
    const first = out.length;
    let blocks: ContentBlock[] = [];
    let unmapped: Unmapped[] = [];
    const flush = (force: boolean) => {
      if (!force && blocks.length === 0 && unmapped.length === 0) return;
      const msg: Message = { role, content: blocks };
      const ex = withUnmapped(out.length === first ? turnExtras : undefined, unmapped);
      if (ex) msg.extras = ex;
      out.push(msg);
      blocks = [];
      unmapped = [];
    };
    t.parts.forEach((p, pi) => {
      const r = partToNative(p.raw, p.loc, `${ti}_${pi}`, ids);
      if (!r) unmapped.push({ index: pi, part: p.raw });
      else if ("tool" in r) {
        flush(false);
        if (out.length === first && turnExtras) r.tool.extras = { ...turnExtras, ...r.tool.extras };
        out.push(r.tool);
      } else for (const b of r.blocks) blocks.push(b);
    });
    // A turn with no parts at all is still a turn.
    flush(out.length === first);
  });
  return out;
}

/** `systemInstruction` (a Content, or the SDK's string / part / parts) -> one system message. */
function systemMessage(raw: unknown, loc: Loc): Message | undefined {
  if (raw === undefined || raw === null) return undefined;
  const ids = new CallIds("system_");
  const content: ContentBlock[] = [];
  const unmapped: Unmapped[] = [];
  let extras: Obj | undefined;
  let index = 0;
  for (const t of toTurns(raw, loc)) {
    // The role of a system instruction is ignored by the API; kept only if unusual.
    if (t.role !== undefined && t.role !== "user" && t.role !== "system") extras = { ...extras, vendor_role: t.role };
    if (t.extras) extras = { ...extras, ...t.extras };
    for (const p of t.parts) {
      const r = partToNative(p.raw, p.loc, `${index}`, ids);
      if (r && "blocks" in r) for (const b of r.blocks) content.push(b);
      else unmapped.push({ index, part: p.raw });
      index++;
    }
  }
  const msg: Message = { role: "system", content };
  const ex = withUnmapped(extras, unmapped);
  if (ex) msg.extras = ex;
  return msg;
}

/** Client-side plumbing in the SDK's `config`, never sent as such and never recorded: headers may hold keys. */
const SDK_CLIENT_ONLY = new Set(["httpOptions", "abortSignal"]);

/** `models/gemini-2.5-flash` -> `gemini-2.5-flash`: the name users know. */
export function modelName(v: unknown): string | undefined {
  if (typeof v !== "string" || v === "") return undefined;
  return v.startsWith("models/") ? v.slice("models/".length) : v;
}

export function normalizeRequest(request: unknown): RequestResult {
  const body = expectObj(request, []);
  if (!("contents" in body)) fail(["contents"], "a Gemini request needs contents", "missing");
  const config = body.config === undefined || body.config === null ? undefined : expectObj(body.config, ["config"]);
  const sysLoc = body.systemInstruction !== undefined && body.systemInstruction !== null ? ["systemInstruction"] : ["config", "systemInstruction"];
  const sys = systemMessage(body.systemInstruction ?? config?.systemInstruction, sysLoc);
  const messages = turnsToMessages(toTurns(body.contents, ["contents"]), ["contents"], new CallIds());
  const invocation_params: Obj = {};
  for (const k in body) if (k !== "contents" && k !== "systemInstruction" && k !== "model" && k !== "config" && body[k] !== undefined) invocation_params[k] = body[k];
  if (config) for (const k in config) if (k !== "systemInstruction" && !SDK_CLIENT_ONLY.has(k) && config[k] !== undefined) invocation_params[k] = config[k];
  const result: RequestResult = { messages: markOrphans(sys ? [sys, ...messages] : messages), invocation_params, trace_provider: "google" };
  const model = modelName(body.model);
  if (model !== undefined) result.trace_model_name = model;
  return result;
}
