/**
 * Responses API items -> native content. The same items appear in a request's
 * `input` (history passed back) and a response's `output`, so both sides use
 * these functions. Item-level fields with no native home (the item `id`,
 * `status`, `phase`, ...) go into the first block's extras, keyed `item_id`,
 * `item_status`, ... so two items merged into one message stay distinguishable.
 */
import type { ContentBlock } from "../../src/format/schema.js";
import { parseToolArgs } from "../common/args.js";
import { expectArray, expectObj, expectString, optString, type Loc, type Obj, put } from "../common/guards.js";
import type { Unmapped } from "../common/content.js";
import { contentToBlocks } from "./parts.js";

/** Built-in tools the server runs: item type -> the native tool name. */
const SERVER_TOOLS: Record<string, string> = {
  web_search_call: "web_search",
  file_search_call: "file_search",
  code_interpreter_call: "code_interpreter",
  image_generation_call: "image_generation",
  mcp_call: "mcp",
};

export function isServerToolItem(type: unknown): boolean {
  return typeof type === "string" && Object.hasOwn(SERVER_TOOLS, type);
}

/** Item fields (other than the ones the mapping used) prefixed `item_` for id/status, kept whole otherwise. */
function itemExtras(item: Obj, used: ReadonlySet<string>): Obj | undefined {
  let out: Obj | undefined;
  for (const k in item) {
    const v = item[k];
    if (used.has(k) || v === undefined || v === null) continue;
    put((out ??= {}), k === "id" || k === "status" || k === "type" ? `item_${k}` : k, v);
  }
  return out;
}

function stampFirst(blocks: ContentBlock[], extras: Obj | undefined): void {
  if (!extras || blocks.length === 0) return;
  const b = blocks[0]!;
  b.extras = { ...extras, ...b.extras };
}

const K_MESSAGE = new Set(["type", "role", "content"]);
const K_FUNCTION_CALL = new Set(["type", "call_id", "name", "arguments"]);
const K_REASONING = new Set(["type", "summary", "content"]);
const K_CUSTOM_CALL = new Set(["type", "call_id", "name", "input"]);
const K_COMPUTER_CALL = new Set(["type", "call_id", "action", "actions"]);

/** A custom tool takes free-form text, not JSON (as in chat completions): the input is kept verbatim in extras. */
export function customToolCallBlock(item: Obj, loc: Loc): ContentBlock {
  const block: ContentBlock = {
    type: "tool_call",
    args: {},
    extras: { tool_type: "custom", input: item.input, ...itemExtras(item, K_CUSTOM_CALL) },
  };
  const id = optString(item.call_id, loc, "call_id");
  const name = optString(item.name, loc, "name");
  if (name !== undefined) block.name = name;
  if (id !== undefined) block.id = id;
  return block;
}

/** Computer use is run by the caller, like a function: a `tool_call` named `computer` whose args are the action(s). */
export function computerCallBlock(item: Obj, loc: Loc): ContentBlock {
  const args: Record<string, unknown> = {};
  if (item.action !== undefined && item.action !== null) args.action = item.action;
  if (item.actions !== undefined && item.actions !== null) args.actions = item.actions;
  const block: ContentBlock = {
    type: "tool_call",
    name: "computer",
    args,
    extras: { tool_type: "computer", ...itemExtras(item, K_COMPUTER_CALL) },
  };
  const id = optString(item.call_id, loc, "call_id");
  if (id !== undefined) block.id = id;
  return block;
}

/** A message item's content (any role); unknown parts go to `unmapped`. */
export function messageBlocks(item: Obj, loc: Loc, unmapped: Unmapped[]): ContentBlock[] {
  const blocks = contentToBlocks(item.content, [...loc, "content"], unmapped);
  const ex = itemExtras(item, K_MESSAGE);
  if (blocks.length === 0 && ex) blocks.push({ type: "text", text: "", extras: ex });
  else stampFirst(blocks, ex);
  return blocks;
}

export function functionCallBlock(item: Obj, loc: Loc): ContentBlock {
  const id = optString(item.call_id, loc, "call_id");
  const name = optString(item.name, loc, "name");
  const parsed = parseToolArgs(item.arguments);
  const block: ContentBlock = { type: "tool_call", args: parsed.args };
  if (name !== undefined) block.name = name;
  if (id !== undefined) block.id = id;
  const extras = { ...itemExtras(item, K_FUNCTION_CALL), ...parsed.extras };
  if (Object.keys(extras).length) block.extras = extras;
  return block;
}

/**
 * A reasoning item: each summary part and each reasoning_text part is a
 * reasoning block. An item with neither (encrypted reasoning only) is still one
 * empty reasoning block, so its id and `encrypted_content` (needed to pass it
 * back) are not lost.
 */
export function reasoningBlocks(item: Obj, loc: Loc): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  for (const key of ["summary", "content"] as const) {
    const v = item[key];
    if (v === undefined || v === null) continue;
    const list = expectArray(v, loc, key);
    for (let i = 0; i < list.length; i++) {
      const part = expectObj(list[i], [...loc, key], i);
      const text = expectString(part.text, [...loc, key, i], "text");
      const block: ContentBlock = { type: "reasoning", text };
      const ex: Obj = {};
      if (key === "summary") ex.summary = true;
      for (const k in part) if (k !== "text" && k !== "type" && part[k] !== undefined) put(ex, k, part[k]);
      if (Object.keys(ex).length) block.extras = ex;
      blocks.push(block);
    }
  }
  if (blocks.length === 0) blocks.push({ type: "reasoning", text: "" });
  stampFirst(blocks, itemExtras(item, K_REASONING));
  return blocks;
}

const K_SERVER: Record<string, ReadonlySet<string>> = {
  web_search_call: new Set(["type", "id", "action"]),
  file_search_call: new Set(["type", "id", "queries", "results"]),
  code_interpreter_call: new Set(["type", "id", "code", "container_id", "outputs"]),
  image_generation_call: new Set(["type", "id", "result"]),
  mcp_call: new Set(["type", "id", "name", "arguments", "output", "error"]),
};

/**
 * A built-in tool item -> `server_tool_call`, plus a `server_tool_result` when
 * the item carries a result (file search results, code interpreter outputs, the
 * generated image, an MCP output or error) or failed.
 */
export function serverToolBlocks(item: Obj, loc: Loc): ContentBlock[] {
  const type = item.type as string;
  const id = expectString(item.id, loc, "id");
  let name = SERVER_TOOLS[type]!;
  let args: Record<string, unknown> = {};
  let argExtras: Obj | undefined;
  let output: unknown;
  let hasOutput = false;
  let error = item.status === "failed";
  switch (type) {
    case "web_search_call":
      if (item.action !== undefined && item.action !== null) args = { action: item.action };
      break;
    case "file_search_call":
      if (item.queries !== undefined) args = { queries: item.queries };
      if (item.results !== undefined && item.results !== null) [output, hasOutput] = [item.results, true];
      break;
    case "code_interpreter_call":
      if (item.code !== undefined && item.code !== null) args.code = item.code;
      if (item.container_id !== undefined) args.container_id = item.container_id;
      if (item.outputs !== undefined && item.outputs !== null) [output, hasOutput] = [item.outputs, true];
      break;
    case "image_generation_call":
      if (item.result !== undefined && item.result !== null) [output, hasOutput] = [item.result, true];
      break;
    case "mcp_call": {
      name = optString(item.name, loc, "name") ?? name;
      const parsed = parseToolArgs(item.arguments);
      args = parsed.args;
      argExtras = { vendor_type: "mcp_call", ...parsed.extras };
      if (item.error !== undefined && item.error !== null) [output, hasOutput, error] = [item.error, true, true];
      else if (item.output !== undefined && item.output !== null) [output, hasOutput] = [item.output, true];
      break;
    }
  }
  const call: ContentBlock = { type: "server_tool_call", id, name, args };
  const extras = { ...argExtras, ...itemExtras(item, K_SERVER[type]!) };
  if (Object.keys(extras).length) call.extras = extras;
  const blocks: ContentBlock[] = [call];
  if (hasOutput || error) {
    const result: ContentBlock = { type: "server_tool_result", tool_call_id: id, status: error ? "error" : "success" };
    if (hasOutput) result.output = output;
    blocks.push(result);
  }
  return blocks;
}

/**
 * An assistant-side item -> blocks, or undefined when the item type is not
 * one this adapter knows (the caller keeps it whole in extras.unmapped_content).
 */
export function assistantItemBlocks(item: Obj, loc: Loc, unmapped: Unmapped[]): ContentBlock[] | undefined {
  switch (item.type) {
    case "message":
      return messageBlocks(item, loc, unmapped);
    case "function_call":
      return [functionCallBlock(item, loc)];
    case "reasoning":
      return reasoningBlocks(item, loc);
    case "custom_tool_call":
      return [customToolCallBlock(item, loc)];
    case "computer_call":
      return [computerCallBlock(item, loc)];
    default:
      return isServerToolItem(item.type) ? serverToolBlocks(item, loc) : undefined;
  }
}
