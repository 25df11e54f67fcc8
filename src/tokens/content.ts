/**
 * What of a message is counted, read defensively: estimation runs on whatever
 * a host or a log handed over, so a BigInt, a cycle, nesting deeper than the
 * call stack, a throwing getter or a non-array content never throw from here.
 */
import type { ContentBlock } from "../format/schema.js";
import { approximateTokens } from "./count.js";

/** Every role of the native format is one token in o200k_base and cl100k_base. */
const ROLE_TOKENS: Record<string, number> = { system: 1, reasoning: 1, user: 1, assistant: 1, tool: 1, developer: 1, function: 1 };

/** Tokens of a role name, known without encoding it. */
export function roleTokens(role: unknown): number {
  if (typeof role !== "string") return 0;
  return Object.hasOwn(ROLE_TOKENS, role) ? ROLE_TOKENS[role]! : approximateTokens(role);
}

/** OpenAI's documented image cost: 85 at low detail, else 85 + 170 per 512 px tile when the size is known, else 765. */
export function imageTokens(b: ContentBlock): number {
  const ex = (b as { extras?: Record<string, unknown> }).extras;
  if (!ex || typeof ex !== "object") return 765;
  if (ex.detail === "low") return 85;
  const w = typeof ex.width === "number" ? ex.width : typeof ex.width === "string" ? Number(ex.width) : NaN;
  const h = typeof ex.height === "number" ? ex.height : typeof ex.height === "string" ? Number(ex.height) : NaN;
  if (w > 0 && h > 0 && Number.isFinite(w) && Number.isFinite(h)) {
    // Fit in 2048x2048, then the shortest side to 768, then count 512 px tiles.
    let sw = w;
    let sh = h;
    const f1 = Math.min(1, 2048 / Math.max(sw, sh));
    sw *= f1;
    sh *= f1;
    const f2 = Math.min(1, 768 / Math.min(sw, sh));
    sw *= f2;
    sh *= f2;
    return 85 + 170 * Math.ceil(sw / 512) * Math.ceil(sh / 512);
  }
  return 765;
}

/** The text of a block that is counted as tokens ("" for media). */
export function blockText(b: ContentBlock): string {
  switch (b.type) {
    case "text":
    case "reasoning":
      return typeof b.text === "string" ? b.text : jsonText(b.text);
    case "tool_call":
    case "server_tool_call":
      return `${typeof b.name === "string" ? b.name : ""}${jsonText(b.args)}`;
    case "server_tool_result":
      return typeof b.output === "string" ? b.output : jsonText(b.output ?? "");
    default:
      return "";
  }
}

/** Characters of JSON text built for counting at most; beyond that, the rest of a value is not read. */
const MAX_JSON_CHARS = 1 << 26;

/**
 * JSON text of a value for counting. JSON.stringify when it can; when it
 * throws (BigInt, a cycle, nesting deeper than the stack, a throwing toJSON),
 * an iterative walk that writes near-JSON: cycles as "[Circular]", BigInts as
 * digits, unreadable values as null.
 */
export function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? "";
  } catch {
    return walkJson(value);
  }
}

/** A literal to emit, as opposed to a value still to walk; `leave` closes an object on the current path. */
class Raw {
  constructor(
    readonly text: string,
    readonly leave?: object,
  ) {}
}

function walkJson(root: unknown): string {
  const out: string[] = [];
  let size = 0;
  // Objects open on the path from the root: meeting one again is a cycle. A
  // value shared without a cycle is written each time, within MAX_JSON_CHARS.
  const onPath = new WeakSet<object>();
  const stack: unknown[] = [root];
  while (stack.length && size < MAX_JSON_CHARS) {
    const v = stack.pop();
    let s: string;
    if (v instanceof Raw) {
      s = v.text;
      if (v.leave) onPath.delete(v.leave);
    } else if (typeof v === "string") s = JSON.stringify(v.length > MAX_JSON_CHARS - size ? v.slice(0, MAX_JSON_CHARS - size) : v);
    else if (typeof v === "number" || typeof v === "boolean" || typeof v === "bigint") s = String(v);
    else if (v === null || typeof v !== "object") s = "null";
    else if (onPath.has(v)) s = '"[Circular]"';
    else {
      s = "";
      try {
        pushObject(v, stack, MAX_JSON_CHARS - size);
        onPath.add(v);
      } catch {
        s = "null";
      }
    }
    out.push(s);
    size += s.length;
  }
  return out.join("");
}

/** Queue an object's members between its brackets, in reverse so the stack pops them in order; at most `room` of them. */
function pushObject(v: object, stack: unknown[], room: number): void {
  const isArray = Array.isArray(v);
  const items: unknown[] = [new Raw(isArray ? "[" : "{")];
  if (isArray) {
    const a = v as unknown[];
    for (let i = 0; i < Math.min(a.length, room); i++) items.push(new Raw(i ? "," : ""), a[i]);
  } else {
    let i = 0;
    for (const k of Object.keys(v)) {
      if (i >= room) break;
      items.push(new Raw(`${i++ ? "," : ""}${JSON.stringify(k)}:`), (v as Record<string, unknown>)[k]);
    }
  }
  items.push(new Raw(isArray ? "]" : "}", v));
  for (let i = items.length - 1; i >= 0; i--) stack.push(items[i]);
}
