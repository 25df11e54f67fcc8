/**
 * Shared pieces of message building: content parts an adapter does not know,
 * and tool results whose call is not in the record.
 */
import type { ContentBlock, Message } from "../../src/format/schema.js";
import type { Loc, Obj } from "./guards.js";

/**
 * DESIGN "Mapping decisions": a part of a type the adapter does not know is kept
 * whole, in order, in the message's `extras.unmapped_content`; vendors add types
 * every few months, and one new type must not reject a record.
 */
export interface Unmapped {
  index: number;
  part: unknown;
}

/** Each part of `list` as a block by `read`; a part `read` does not know (undefined) is kept whole in `unmapped`. */
export function partsToBlocks(
  list: readonly unknown[],
  loc: Loc,
  read: (part: unknown, loc: Loc) => ContentBlock | undefined,
  unmapped: Unmapped[],
): ContentBlock[] {
  const out: ContentBlock[] = [];
  for (let i = 0; i < list.length; i++) {
    const b = read(list[i], [...loc, i]);
    if (b) out.push(b);
    else unmapped.push({ index: i, part: list[i] });
  }
  return out;
}

/** Put the unmapped parts (if any) into `extras`, returning the extras to use. */
export function withUnmapped(extras: Obj | undefined, unmapped: readonly Unmapped[] | undefined): Obj | undefined {
  if (!unmapped || unmapped.length === 0) return extras;
  return { ...extras, unmapped_content: [...unmapped] };
}

/**
 * DESIGN: a `tool` message whose call is not in the record (a trimmed history)
 * keeps its `tool_call_id` and carries `extras.orphan: true`, which non-strict
 * validate accepts in place of the linkage rule. Every adapter runs its input
 * messages through this so `normalize` never emits what `validate` rejects.
 */
export function markOrphans(messages: Message[]): Message[] {
  // Most records have no tool message: then nothing is read of the assistant messages' blocks.
  let anyTool = false;
  for (let i = 0; i < messages.length; i++)
    if (messages[i]!.role === "tool") {
      anyTool = true;
      break;
    }
  if (!anyTool) return messages;
  let calls: CallIds | undefined;
  for (const m of messages) {
    if (m.role === "assistant") calls = noteToolCalls(m.content, calls);
    else if (m.role === "tool") markIfOrphan(m, calls);
  }
  return messages;
}

/**
 * The ids of the tool calls so far: a short list, compared one by one (cheaper
 * than a set for the few calls of nearly every record), that becomes a set past
 * a few dozen so a record with thousands of calls is still read in linear time.
 */
export type CallIds = string[] | Set<string>;

const LIST_MAX = 32;

/**
 * The rule of `markOrphans`, step by step, also for an adapter that builds the messages in
 * order: the tool calls of each assistant message are noted as it is made, and
 * each tool message is judged once complete, against the calls before it. The
 * same rule in one pass.
 */
export function noteToolCalls(content: readonly ContentBlock[], calls: CallIds | undefined): CallIds | undefined {
  for (let i = 0; i < content.length; i++) {
    const b = content[i]!;
    if (b.type !== "tool_call" || typeof b.id !== "string") continue;
    if (calls === undefined) calls = [b.id];
    else if (Array.isArray(calls)) {
      calls.push(b.id);
      if (calls.length > LIST_MAX) calls = new Set(calls);
    } else calls.add(b.id);
  }
  return calls;
}

/** A complete tool message whose call is none of `calls` (noteToolCalls) is an orphan. */
export function markIfOrphan(m: Message, calls: CallIds | undefined): void {
  const id = m.tool_call_id;
  if (id === undefined) return;
  const known = calls === undefined ? false : Array.isArray(calls) ? calls.includes(id) : calls.has(id);
  if (!known) m.extras = { ...m.extras, orphan: true };
}
