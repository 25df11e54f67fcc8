/**
 * The `inputs` of a LangChain llm run -> native messages. A chat model's run
 * holds `messages`, a list of conversations (one per prompt of the batch; the
 * tracer sends one), a completion model's run `prompts`, a list of strings.
 * A flat list of messages is read as one conversation. With more than one
 * prompt, each message says which it belongs to (`extras.batch_index`).
 */
import type { Message } from "../../src/format/schema.js";
import type { RequestResult } from "../types.js";
import { expectArray, expectObj, expectString, fail } from "../common/guards.js";
import { markOrphans } from "../common/content.js";
import { messagesToNative, newConversation } from "./messages.js";
import { requestResult } from "../common/request.js";

function batches(list: unknown[]): boolean {
  return list.length > 0 && list.every(Array.isArray);
}

/** A conversation or a batch of them (`messages`), or a flat list of messages. */
export function inputMessages(raw: unknown): Message[] {
  const list = expectArray(raw, ["messages"]);
  if (!batches(list)) return markOrphans(messagesToNative(list, ["messages"]));
  const out: Message[] = [];
  for (let b = 0; b < list.length; b++) {
    const conv = newConversation();
    const msgs = markOrphans(
      messagesToNative(list[b] as unknown[], ["messages", b], conv, list.length > 1 ? { batch_index: b } : undefined),
    );
    for (const m of msgs) out.push(m);
  }
  return out;
}

/** `prompts`: each a user message. */
function promptMessages(raw: unknown): Message[] {
  const list = expectArray(raw, ["prompts"]);
  return list.map((p, i) => {
    const msg: Message = { role: "user", content: [{ type: "text", text: expectString(p, ["prompts"], i) }] };
    if (list.length > 1) msg.extras = { batch_index: i };
    return msg;
  });
}

/** The body fields the messages are read from; the rest are invocation parameters. */
const TAKEN: readonly string[] = ["messages", "prompts"];

export function normalizeRequest(request: unknown): RequestResult {
  if (Array.isArray(request)) return { messages: markOrphans(messagesToNative(request, [])), invocation_params: {} };
  const body = expectObj(request, []);
  let messages: Message[];
  if (body.messages !== undefined) messages = inputMessages(body.messages);
  else if (body.prompts !== undefined) messages = promptMessages(body.prompts);
  else return fail([], "a LangChain llm run's inputs hold messages (a list of conversations) or prompts", "missing");
  return requestResult(messages, body, TAKEN, undefined, undefined);
}
