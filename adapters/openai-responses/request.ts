/**
 * Responses API request body -> native messages + invocation params.
 * `instructions` is a system message (DESIGN: a system prompt is always a
 * `system` message); `input` is a string (one user message) or a list of items.
 * Consecutive assistant-side items (output messages, function calls, reasoning,
 * built-in tool calls) form one assistant message, as one model turn does;
 * `function_call_output` is a `tool` message answering its `call_id`.
 */
import type { RequestResult } from "../types.js";
import type { ContentBlock, Message } from "../../src/format/schema.js";
import { describe, expectObj, fail, leftovers, type Loc, type Obj } from "../common/guards.js";
import { markOrphans, withUnmapped, type Unmapped } from "../common/content.js";
import { assistantItemBlocks, messageBlocks } from "./items.js";
import { contentToBlocks } from "./parts.js";
import { imageFromUrl } from "../openai-chat/parts.js";
import { requestResult } from "../common/request.js";

const K_TOOL_OUTPUT = new Set(["type", "call_id", "output"]);
/** Results the caller sends back for its own tools: each a `tool` message answering `call_id`. */
const TOOL_OUTPUTS = new Set(["function_call_output", "custom_tool_call_output", "computer_call_output"]);
const K_SCREENSHOT = new Set(["type", "image_url", "file_id"]);

/** A computer_call_output's screenshot -> an image block. */
function screenshotBlocks(output: unknown, loc: Loc): ContentBlock[] {
  const o = expectObj(output, loc);
  const extras = leftovers(o, K_SCREENSHOT);
  if (typeof o.image_url === "string") return [imageFromUrl(o.image_url, o.file_id ? { ...extras, file_id: o.file_id } : extras)];
  if (typeof o.file_id === "string") return [extras ? { type: "image", id: o.file_id, extras } : { type: "image", id: o.file_id }];
  return fail(loc, "a computer screenshot needs image_url or file_id", "missing");
}
const ROLES: Record<string, Message["role"]> = { user: "user", system: "system", developer: "system", assistant: "assistant" };

function isAssistantItem(item: Obj): boolean {
  if (item.type === "message" || item.type === undefined) return item.role === "assistant";
  return !TOOL_OUTPUTS.has(item.type as string);
}

/**
 * The input's messages as they are read: the open assistant turn (consecutive
 * assistant items make one message) and the items of a type this adapter does
 * not know, kept whole on the message they follow (DESIGN). A class rather than
 * closures made per request: every request passes here.
 */
class InputMessages {
  readonly out: Message[] = [];
  turn: { msg: Message; unmapped: Unmapped[] } | undefined;
  pending: Unmapped[] = [];

  flushTurn(): void {
    const turn = this.turn;
    if (!turn) return;
    const ex = withUnmapped(turn.msg.extras, turn.unmapped);
    if (ex) turn.msg.extras = ex;
    this.out.push(turn.msg);
    this.turn = undefined;
  }

  /** A message other than an assistant turn's, with what waits for it and its own unmapped parts. */
  push(msg: Message, unmapped: Unmapped[]): void {
    this.flushTurn();
    if (this.pending.length !== 0 || unmapped.length !== 0) {
      const ex = withUnmapped(msg.extras, [...this.pending, ...unmapped]);
      this.pending = [];
      if (ex) msg.extras = ex;
    }
    this.out.push(msg);
  }
}

export function normalizeInput(raw: unknown, loc: Loc): Message[] {
  if (typeof raw === "string") return [{ role: "user", content: [{ type: "text", text: raw }] }];
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) return fail(loc, `expected a string or an array of input items, got ${describe(raw)}`, "input_type");
  const read = new InputMessages();
  const out = read.out;
  for (let i = 0; i < raw.length; i++) {
    const iloc = [...loc, i];
    const item = expectObj(raw[i], iloc);
    if (TOOL_OUTPUTS.has(item.type as string)) {
      const unmapped: Unmapped[] = [];
      const output = item.output;
      const content: ContentBlock[] =
        typeof output === "string"
          ? [{ type: "text", text: output }]
          : item.type === "computer_call_output"
            ? screenshotBlocks(output, [...iloc, "output"])
            : contentToBlocks(output, [...iloc, "output"], unmapped);
      const msg: Message = {
        role: "tool",
        content,
        tool_call_id:
          typeof item.call_id === "string"
            ? item.call_id
            : fail([...iloc, "call_id"], `expected a string, got ${describe(item.call_id)}`, "string_type"),
      };
      let ex = leftovers(item, K_TOOL_OUTPUT);
      if (item.type !== "function_call_output") ex = { ...ex, vendor_type: item.type };
      if (ex) msg.extras = ex;
      read.push(msg, unmapped);
      continue;
    }
    if ((item.type === "message" || item.type === undefined) && item.role !== "assistant") {
      const role = typeof item.role === "string" && Object.hasOwn(ROLES, item.role) ? ROLES[item.role] : undefined;
      if (!role)
        fail(
          [...iloc, "role"],
          `unsupported role ${JSON.stringify(item.role)}; expected user, system, developer or assistant`,
          "unsupported_role",
        );
      const unmapped: Unmapped[] = [];
      const msg: Message = { role, content: messageBlocks(item, iloc, unmapped) };
      if (item.role === "developer") msg.extras = { vendor_role: "developer" };
      read.push(msg, unmapped);
      continue;
    }
    if (isAssistantItem(item)) {
      const unmapped: Unmapped[] = [];
      const blocks = assistantItemBlocks(item, iloc, unmapped);
      if (blocks) {
        if (!read.turn) {
          read.turn = { msg: { role: "assistant", content: [] }, unmapped: [...read.pending] };
          read.pending = [];
        }
        for (const block of blocks) read.turn.msg.content.push(block);
        for (const u of unmapped) read.turn.unmapped.push(u);
        continue;
      }
    }
    // An unknown item (item_reference, local_shell_call, mcp_approval_request, ...): on the open turn, else the message before, else the next.
    const u = { index: i, part: item };
    if (read.turn) read.turn.unmapped.push(u);
    else if (out.length) {
      const last = out[out.length - 1]!;
      last.extras = withUnmapped(last.extras, [...((last.extras?.unmapped_content as Unmapped[] | undefined) ?? []), u]);
    } else read.pending.push(u);
  }
  read.flushTurn();
  if (read.pending.length) out.push({ role: "user", content: [], extras: { unmapped_content: read.pending } });
  return markOrphans(out);
}

function instructionsMessages(raw: unknown): Message[] {
  if (raw === undefined || raw === null) return [];
  if (typeof raw === "string") return [{ role: "system", content: [{ type: "text", text: raw }] }];
  // A stored prompt's instructions come back as input items.
  return normalizeInput(raw, ["instructions"]);
}

/** The body fields the messages and the model are read from; the rest are invocation parameters. */
const TAKEN: readonly string[] = ["input", "instructions", "model"];

export function normalizeRequest(request: unknown, withParams = true): RequestResult {
  const body = expectObj(request, []);
  const messages = [...instructionsMessages(body.instructions), ...normalizeInput(body.input, ["input"])];
  // A conversation continued by id: the first message says which response it follows.
  if (typeof body.previous_response_id === "string" && messages[0])
    messages[0].extras = { ...messages[0].extras, previous_response_id: body.previous_response_id };
  return requestResult(messages, body, TAKEN, "openai", body.model, withParams);
}
