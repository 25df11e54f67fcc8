/**
 * Converse / ConverseStream input -> native messages + invocation params.
 *
 * `system` (a list of text, guardContent and cachePoint blocks) is one `system`
 * message. A user turn's `toolResult` blocks each become a `tool` message, in
 * order (as Anthropic's tool_result blocks do); `status: "error"` ->
 * `extras.is_error: true`. Everything but `modelId`, `messages` and `system`
 * (`inferenceConfig`, `toolConfig`, `additionalModelRequestFields`,
 * `guardrailConfig`, `promptVariables`, `requestMetadata`, ...) is an invocation
 * param, as sent. `modelId` is the model as given: an ARN, an inference profile
 * (`us.anthropic.claude-...`) or a prompt ARN is kept whole.
 */
import type { RequestResult } from "../types.js";
import type { ContentBlock, Message } from "../../src/format/schema.js";
import { expectArray, expectObj, expectString, fail, leftovers, leftoversBut, optString, type Loc, type Obj } from "../common/guards.js";
import { markOrphans, withUnmapped, type Unmapped } from "../common/content.js";
import { convertContent, toolResultContent, type Sink, type ToolResultTaker } from "./blocks.js";
import { requestResult } from "../common/request.js";

const K_TOOL_RESULT = new Set(["toolUseId", "content", "status"]);

function message(role: Message["role"], content: ContentBlock[], extras: Obj | undefined, unmapped: Unmapped[]): Message {
  const msg: Message = { role, content };
  const ex = withUnmapped(extras, unmapped);
  if (ex && Object.keys(ex).length) msg.extras = ex;
  return msg;
}

function systemMessage(system: unknown): Message | undefined {
  if (system === undefined || system === null) return undefined;
  const sink: Sink = { blocks: [], unmapped: [] };
  convertContent(system, ["system"], sink);
  // `system: []` says nothing: no empty system message.
  if (sink.blocks.length === 0 && sink.unmapped.length === 0) return undefined;
  return message("system", sink.blocks, undefined, sink.unmapped);
}

function toolResultMessage(v: Obj, loc: Loc, rest: Obj | undefined): Message {
  const id = expectString(v.toolUseId, loc, "toolUseId");
  const unmapped: Unmapped[] = [];
  const content = toolResultContent(v.content, [...loc, "content"], unmapped);
  const extras: Obj = { ...leftovers(v, K_TOOL_RESULT), ...rest };
  if (v.status === "error") extras.is_error = true;
  else if (v.status !== undefined && v.status !== null && v.status !== "success") extras.status = v.status;
  const msg = message("tool", content, extras, unmapped);
  msg.tool_call_id = id;
  return msg;
}

/**
 * A user turn being read: consecutive ordinary blocks form one user message;
 * each toolResult its own tool message, in order. A class (its `toolResult`
 * is convertContent's taker) rather than closures made per turn: every user
 * turn passes here.
 */
class UserTurn implements Sink, ToolResultTaker {
  blocks: ContentBlock[] = [];
  unmapped: Unmapped[] = [];
  emitted = false;

  constructor(
    private readonly out: Message[],
    private readonly extras: Obj | undefined,
  ) {}

  flush(): void {
    if (this.blocks.length === 0 && this.unmapped.length === 0) return;
    this.out.push(message("user", this.blocks, this.extras, this.unmapped));
    this.emitted = true;
    this.blocks = [];
    this.unmapped = [];
  }

  toolResult(tr: Obj, trLoc: Loc, rest: Obj | undefined): void {
    this.flush();
    this.out.push(toolResultMessage(tr, trLoc, rest));
    this.emitted = true;
  }
}

function userTurn(m: Obj, loc: Loc, out: Message[]): void {
  const extras = leftoversBut(m, "role", "content");
  const turn = new UserTurn(out, extras);
  convertContent(m.content ?? [], [...loc, "content"], turn, turn);
  turn.flush();
  if (!turn.emitted) out.push(message("user", [], extras, []));
}

/** Converse messages (and the system list) -> native messages. */
export function normalizeMessages(raw: unknown, system?: unknown): Message[] {
  const out: Message[] = [];
  const sys = systemMessage(system);
  if (sys) out.push(sys);
  // Prompt-management requests may send no messages at all: the prompt is on the service.
  if (raw === undefined || raw === null) return out;
  const list = expectArray(raw, ["messages"]);
  for (let i = 0; i < list.length; i++) {
    const loc = ["messages", i];
    const m = expectObj(list[i], loc);
    if (m.role === "user") userTurn(m, loc, out);
    else if (m.role === "assistant" || m.role === "system") {
      const sink: Sink = { blocks: [], unmapped: [] };
      convertContent(m.content ?? [], [...loc, "content"], sink);
      out.push(message(m.role, sink.blocks, leftoversBut(m, "role", "content"), sink.unmapped));
    } else fail([...loc, "role"], `unsupported role ${JSON.stringify(m.role)}; expected user or assistant`, "unsupported_role");
  }
  return markOrphans(out);
}

/** The body fields the messages and the model are read from; the rest are invocation parameters. */
const TAKEN: readonly string[] = ["messages", "system", "modelId"];

export function normalizeRequest(request: unknown, withParams = true): RequestResult {
  const body = expectObj(request, []);
  const messages = normalizeMessages(body.messages, body.system);
  return requestResult(messages, body, TAKEN, "bedrock", optString(body.modelId, [], "modelId"), withParams);
}
