/** OpenAI tool calls (function and custom) and the legacy function_call -> native tool_call blocks. */
import type { ContentBlock } from "../../src/format/schema.js";
import { parseToolArgs } from "../common/args.js";
import { expectObj, fail, leftoversBut, optString, putAll, type Key, type Loc, type Obj } from "../common/guards.js";

/** An optional string at `parent` + `k1` + `k2` + `k3`; the location is built only for an error. */
function strAt(v: unknown, parent: Loc, k1: Key, k2: Key, k3: Key): string | undefined {
  if (v === undefined || v === null) return undefined;
  return typeof v === "string" ? v : optString(v, [...parent, k1, k2], k3);
}

/** Call `j` of the list at `listLoc` (a message's `tool_calls`); its location is built only for an error. */
export function toolCallBlock(call: unknown, listLoc: Loc, j: number): ContentBlock {
  const c = expectObj(call, listLoc, j);
  const id = optString(c.id, listLoc, j, "id");
  const type = c.type ?? "function";
  let extras: Obj | undefined = leftoversBut(c, "id", "type", "function", "custom");
  if (type === "custom") {
    // Custom tools take free-form text input, not JSON: keep it verbatim in extras.
    const cu = expectObj(c.custom, listLoc, j, "custom");
    const name = strAt(cu.name, listLoc, j, "custom", "name");
    extras = { ...extras, ...leftoversBut(cu, "name", "input"), tool_type: "custom", input: cu.input };
    const block: ContentBlock = { type: "tool_call", args: {}, extras };
    if (name !== undefined) block.name = name;
    if (id !== undefined) block.id = id;
    return block;
  }
  if (type !== "function")
    fail(
      [...listLoc, j, "type"],
      `unsupported tool call type ${JSON.stringify(type)}; expected function or custom`,
      "unsupported_tool_call",
    );
  const fn = expectObj(c.function, listLoc, j, "function");
  const name = strAt(fn.name, listLoc, j, "function", "name");
  const parsed = parseToolArgs(fn.arguments);
  // Nearly every call has no extras at all: merge only what exists (no spread, no key count).
  const fnExtras = leftoversBut(fn, "name", "arguments");
  if (fnExtras) extras = extras ? putAll(extras, fnExtras) : fnExtras;
  if (parsed.extras) extras = extras ? putAll(extras, parsed.extras) : { ...parsed.extras };
  const block: ContentBlock = { type: "tool_call", args: parsed.args };
  if (name !== undefined) block.name = name;
  if (id !== undefined) block.id = id;
  if (extras) block.extras = extras;
  return block;
}

/**
 * The legacy `function_call` has no id. DESIGN: synthesize a deterministic one
 * from the message position so the following `function` message can point at it.
 */
export function legacyCallId(messageIndex: number): string {
  return `call_legacy_${messageIndex}`;
}

export function legacyFunctionCallBlock(fc: unknown, loc: Loc, id: string): ContentBlock {
  const f = expectObj(fc, loc);
  const name = optString(f.name, loc, "name");
  const parsed = parseToolArgs(f.arguments);
  const extras: Obj = { ...leftoversBut(f, "name", "arguments"), ...parsed.extras, legacy_function_call: true };
  const block: ContentBlock = { type: "tool_call", id, args: parsed.args, extras };
  if (name !== undefined) block.name = name;
  return block;
}
