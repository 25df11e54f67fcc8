/** OpenAI tool calls (function and custom) and the legacy function_call -> native tool_call blocks. */
import type { ContentBlock } from "../../src/format/schema.js";
import { parseToolArgs } from "../common/args.js";
import { expectObj, fail, leftovers, optString, type Loc, type Obj } from "../common/guards.js";

const K_CALL = new Set(["id", "type", "function", "custom"]);
const K_FN = new Set(["name", "arguments"]);
const K_CUSTOM = new Set(["name", "input"]);

export function toolCallBlock(call: unknown, loc: Loc): ContentBlock {
  const c = expectObj(call, loc);
  const id = optString(c.id, loc, "id");
  const type = c.type ?? "function";
  let extras: Obj | undefined = leftovers(c, K_CALL);
  if (type === "custom") {
    // Custom tools take free-form text input, not JSON: keep it verbatim in extras.
    const cu = expectObj(c.custom, loc, "custom");
    const name = optString(cu.name, loc, "custom", "name");
    extras = { ...extras, ...leftovers(cu, K_CUSTOM), tool_type: "custom", input: cu.input };
    const block: ContentBlock = { type: "tool_call", args: {}, extras };
    if (name !== undefined) block.name = name;
    if (id !== undefined) block.id = id;
    return block;
  }
  if (type !== "function") fail([...loc, "type"], `unsupported tool call type ${JSON.stringify(type)}; expected function or custom`, "unsupported_tool_call");
  const fn = expectObj(c.function, loc, "function");
  const name = optString(fn.name, loc, "function", "name");
  const parsed = parseToolArgs(fn.arguments);
  // Nearly every call has no extras at all: merge only what exists (no spread, no key count).
  const fnExtras = leftovers(fn, K_FN);
  if (fnExtras) extras = extras ? Object.assign(extras, fnExtras) : fnExtras;
  if (parsed.extras) extras = extras ? Object.assign(extras, parsed.extras) : { ...parsed.extras };
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
  const extras: Obj = { ...leftovers(f, K_FN), ...parsed.extras, legacy_function_call: true };
  const block: ContentBlock = { type: "tool_call", id, args: parsed.args, extras };
  if (name !== undefined) block.name = name;
  return block;
}
