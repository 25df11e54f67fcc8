/**
 * Content blocks of a LangChain message -> native blocks. A message may hold
 * three kinds side by side:
 * - LangChain's standard blocks, v1 (`text`, `reasoning`, `image` / `audio` /
 *   `video` / `file` / `text-plain` with `url`, `base64` or `file_id` (Python) or
 *   `data` / `fileId` / `mimeType` (JS), `tool_call`, `server_tool_call`, ...)
 *   and the older v0 data blocks that say `source_type`;
 * - provider-native blocks passed through as the provider wrote them (OpenAI
 *   `image_url`, `input_audio`, `file`, `refusal`; Anthropic `tool_use`,
 *   `thinking`, `document`, `image` with a `source`, ...), read by that vendor
 *   adapter's own part reader, so they map exactly as that vendor's payloads do;
 * - anything else, kept whole in `extras.unmapped_content` (DESIGN).
 */
import type { ContentBlock, MediaBlock } from "../../src/format/schema.js";
import { parseToolArgs } from "../common/args.js";
import { parseDataUrl } from "../common/dataurl.js";
import type { Unmapped } from "../common/content.js";
import { describe, expectString, fail, isObj, leftovers, type Loc, type Obj } from "../common/guards.js";
import { partToBlock as openaiPart } from "../openai-chat/parts.js";
import { blockToNative as anthropicBlock } from "../anthropic-messages/blocks.js";

/** Anthropic-native block types (and every `*_tool_result`): the Anthropic reader's. */
const ANTHROPIC_TYPES = new Set([
  "tool_use",
  "thinking",
  "redacted_thinking",
  "document",
  "server_tool_use",
  "search_result",
  "container_upload",
  "mcp_tool_use",
  "mcp_tool_result",
]);
/** OpenAI chat-completions part types: the OpenAI reader's. */
const OPENAI_TYPES = new Set(["image_url", "input_audio", "refusal"]);

function withExtras<T extends ContentBlock>(block: T, extras: Obj | undefined): T {
  if (extras && Object.keys(extras).length) (block as { extras?: Obj }).extras = extras;
  return block;
}

/**
 * `leftovers` without null values (a serializer's `None` carries nothing) and
 * without `index`, which only says where a streamed block merges: a streamed
 * message reads like the finished one.
 */
function rest(b: Obj, known: ReadonlySet<string>): Obj | undefined {
  const out = leftovers(b, known);
  if (!out) return undefined;
  for (const k in out) if (out[k] === null || k === "index") delete out[k];
  return Object.keys(out).length ? out : undefined;
}

const K_TEXT = new Set(["type", "text", "annotations"]);

function textBlock(b: Obj, loc: Loc): ContentBlock {
  const out: ContentBlock = { type: "text", text: expectString(b.text, loc, "text") };
  const extras = rest(b, K_TEXT) ?? {};
  const anns = b.annotations;
  if (Array.isArray(anns) && anns.every(isObj)) {
    if (anns.length) out.annotations = anns;
  } else if (anns !== undefined && anns !== null) extras.annotations = anns;
  return withExtras(out, extras);
}

/** `reasoning` (v1), else `text`, else an OpenAI Responses `summary` list joined. */
function reasoningBlock(b: Obj, loc: Loc): ContentBlock {
  let text = "";
  let used = "reasoning";
  if (typeof b.reasoning === "string") text = b.reasoning;
  else if (typeof b.text === "string") [text, used] = [b.text, "text"];
  else if (Array.isArray(b.summary)) {
    text = b.summary
      .map((s) => (isObj(s) && typeof s.text === "string" ? s.text : ""))
      .filter((s) => s)
      .join("\n\n");
    used = "";
  } else if (b.reasoning !== undefined && b.reasoning !== null)
    fail([...loc, "reasoning"], `expected a string, got ${describe(b.reasoning)}`, "string_type");
  return withExtras({ type: "reasoning", text }, rest(b, new Set(["type", used])));
}

const MEDIA_KINDS: Record<string, "image" | "audio" | "video" | "file"> = {
  image: "image",
  audio: "audio",
  video: "video",
  file: "file",
  "text-plain": "file",
};
const K_DATA = new Set(["type", "source_type", "url", "base64", "data", "file_id", "fileId", "mime_type", "mimeType", "text"]);

/**
 * A standard data block (v1 or v0) -> one native media block with exactly one
 * source: base64 (+ mime_type), else a URL (a data URL becomes base64), else a
 * file id. Plain text (`text-plain`, v0 `source_type: "text"`) is a file of its
 * UTF-8 bytes. Undefined when the block names no usable source.
 */
function dataBlock(b: Obj, type: string): ContentBlock | undefined {
  const kind = MEDIA_KINDS[type]!;
  const extras: Obj = rest(b, K_DATA) ?? {};
  const mime = typeof b.mime_type === "string" ? b.mime_type : typeof b.mimeType === "string" ? b.mimeType : undefined;
  // v0 blocks name their source; in them `id` is the file's id, not the block's.
  const st = b.source_type;
  const base64 =
    st === undefined || st === "base64"
      ? typeof b.base64 === "string"
        ? b.base64
        : typeof b.data === "string"
          ? b.data
          : undefined
      : undefined;
  const url = st === undefined || st === "url" ? (typeof b.url === "string" ? b.url : undefined) : undefined;
  const fileId =
    st === "id"
      ? typeof b.id === "string"
        ? b.id
        : undefined
      : typeof b.file_id === "string"
        ? b.file_id
        : typeof b.fileId === "string"
          ? b.fileId
          : undefined;
  if (st === "id") delete extras.id;
  if (st !== undefined) extras.source_type = st;
  const text = typeof b.text === "string" && (type === "text-plain" || st === "text") ? b.text : undefined;
  let block: MediaBlock;
  let used: "base64" | "text" | "url" | "id";
  if (base64 !== undefined) {
    block = { type: kind, base64, mime_type: mime ?? "application/octet-stream" };
    used = "base64";
  } else if (text !== undefined) {
    block = { type: kind, base64: Buffer.from(text, "utf8").toString("base64"), mime_type: mime ?? "text/plain" };
    extras.source_type = "text";
    used = "text";
  } else if (url !== undefined) {
    const d = parseDataUrl(url);
    if (d) {
      block = { type: kind, base64: d.base64, mime_type: d.mime_type };
      if (d.params) extras.mime_params = d.params;
    } else {
      block = { type: kind, url };
      if (mime) block.mime_type = mime;
    }
    used = "url";
  } else if (fileId !== undefined) {
    block = { type: kind, id: fileId };
    if (mime) block.mime_type = mime;
    used = "id";
  } else return undefined;
  // The sources not taken stay in extras: a native block holds exactly one.
  if (url !== undefined && used !== "url") extras.url = url;
  if (fileId !== undefined && used !== "id") extras.file_id = fileId;
  if (text !== undefined && used !== "text") extras.text = text;
  if (type === "text-plain") extras.langchain_type = type;
  return withExtras(block, extras);
}

const K_CALL = new Set(["type", "id", "name", "args"]);

/** A tool call (standard block, `tool_calls` entry, chunk or invalid call) -> a native tool_call. */
export function toolCallBlock(c: Obj, loc: Loc): ContentBlock {
  const parsed = parseToolArgs(c.args);
  const block: ContentBlock = { type: "tool_call", args: parsed.args };
  if (typeof c.name === "string") block.name = c.name;
  else if (c.name !== undefined && c.name !== null) fail([...loc, "name"], `expected a string, got ${describe(c.name)}`, "string_type");
  if (typeof c.id === "string") block.id = c.id;
  else if (c.id !== undefined && c.id !== null) fail([...loc, "id"], `expected a string, got ${describe(c.id)}`, "string_type");
  const extras: Obj = { ...rest(c, K_CALL), ...parsed.extras };
  if (c.type === "invalid_tool_call") extras.invalid = true;
  return withExtras(block, extras);
}

function serverCall(b: Obj): ContentBlock | undefined {
  if (typeof b.id !== "string" || typeof b.name !== "string") return undefined;
  const parsed = parseToolArgs(b.args);
  return withExtras({ type: "server_tool_call", id: b.id, name: b.name, args: parsed.args }, { ...rest(b, K_CALL), ...parsed.extras });
}

function serverResult(b: Obj): ContentBlock | undefined {
  const callId = typeof b.tool_call_id === "string" ? b.tool_call_id : typeof b.toolCallId === "string" ? b.toolCallId : undefined;
  if (callId === undefined || (b.status !== "success" && b.status !== "error")) return undefined;
  const out: ContentBlock = { type: "server_tool_result", tool_call_id: callId, status: b.status };
  if (typeof b.id === "string") out.id = b.id;
  if (b.output !== undefined) out.output = b.output;
  const extras = rest(b, new Set(["type", "tool_call_id", "toolCallId", "status", "id", "output"])) ?? {};
  if (b.type !== "server_tool_result") extras.langchain_type = b.type;
  return withExtras(out, extras);
}

/** One block -> native blocks; undefined for a block this adapter does not know. */
export function blockToNative(b: Obj, loc: Loc): ContentBlock[] | undefined {
  const type = b.type;
  if (typeof type !== "string") return undefined;
  if (type === "text") return Array.isArray(b.citations) ? anthropicBlock(b, loc) : [textBlock(b, loc)];
  if (type === "reasoning") return [reasoningBlock(b, loc)];
  if (type === "image" && isObj(b.source)) return anthropicBlock(b, loc);
  if (type === "file" && isObj(b.file)) return one(openaiPart(b, loc));
  if (Object.hasOwn(MEDIA_KINDS, type)) return one(dataBlock(b, type));
  if (type === "tool_call" || type === "tool_call_chunk" || type === "invalid_tool_call") return [toolCallBlock(b, loc)];
  if (type === "server_tool_call") return one(serverCall(b));
  if (type === "server_tool_result" || type === "server_tool_call_result") return one(serverResult(b));
  if (OPENAI_TYPES.has(type)) return one(openaiPart(b, loc));
  if (ANTHROPIC_TYPES.has(type) || type.endsWith("_tool_result")) return anthropicBlock(withoutIndex(b), loc);
  return undefined;
}

/** A streamed block's `index` only says where it merged: the Anthropic reader would keep it as an extra. */
function withoutIndex(b: Obj): Obj {
  if (!("index" in b)) return b;
  const { index: _index, ...out } = b;
  return out;
}

function one(b: ContentBlock | undefined): ContentBlock[] | undefined {
  return b ? [b] : undefined;
}

const TOOL_USE_TYPES = new Set(["tool_use", "server_tool_use", "mcp_tool_use"]);

/**
 * A streamed ChatAnthropic message keeps each `input_json_delta` piece beside
 * the `tool_use` block it belongs to (same `index`, the block's `input` left
 * `""`): the pieces are joined onto that block's input, as the finished
 * message holds it. Returns the joined blocks by position and the positions
 * of the pieces taken; undefined when there is nothing to join.
 */
function joinInputDeltas(content: readonly unknown[]): { owners: Map<number, Obj>; taken: Set<number> } | undefined {
  if (!content.some((c) => isObj(c) && c.type === "input_json_delta")) return undefined;
  const byIndex = new Map<unknown, number>();
  const owners = new Map<number, Obj>();
  const taken = new Set<number>();
  for (let i = 0; i < content.length; i++) {
    const item = content[i];
    if (!isObj(item)) continue;
    if (TOOL_USE_TYPES.has(item.type as string) && item.index !== undefined) {
      byIndex.set(item.index, i);
      continue;
    }
    if (item.type !== "input_json_delta" || typeof item.input !== "string") continue;
    const at = byIndex.get(item.index);
    if (at === undefined) continue;
    const owner = owners.get(at) ?? (content[at] as Obj);
    const input = owner.input;
    if (typeof input !== "string" && !(isObj(input) && Object.keys(input).length === 0)) continue;
    owners.set(at, { ...owner, input: (typeof input === "string" ? input : "") + item.input });
    taken.add(i);
  }
  return taken.size ? { owners, taken } : undefined;
}

/** A message's `content`: a string (one text block; empty is none) or a list of blocks and strings. */
export function contentToNative(content: unknown, loc: Loc, unmapped: Unmapped[]): ContentBlock[] {
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  if (content === undefined || content === null) return [];
  if (!Array.isArray(content))
    return fail(loc, `expected a string or an array of content blocks, got ${describe(content)}`, "content_type");
  const joined = joinInputDeltas(content);
  const out: ContentBlock[] = [];
  for (let i = 0; i < content.length; i++) {
    if (joined?.taken.has(i)) continue;
    const item = joined?.owners.get(i) ?? content[i];
    if (typeof item === "string") {
      out.push({ type: "text", text: item });
      continue;
    }
    const blocks = isObj(item) ? blockToNative(item, [...loc, i]) : undefined;
    if (blocks) for (const b of blocks) out.push(b);
    else unmapped.push({ index: i, part: item });
  }
  return out;
}
