/**
 * Converse content blocks -> native content blocks (DESIGN "Mapping decisions").
 *
 * A Converse block is a union object without `type`: exactly one member
 * (`{text}`, `{image}`, `{toolUse}`, ...) says what it is. A member this adapter
 * does not know (Bedrock adds them, and the SDK spells an unknown one
 * `{$unknown: [name, value]}`) never rejects the record: the caller keeps the
 * whole block in `extras.unmapped_content`.
 */
import type { ContentBlock, MediaBlock } from "../../src/format/schema.js";
import { parseToolArgs } from "../common/args.js";
import {
  describe,
  expectArray,
  expectObj,
  expectString,
  fail,
  isObj,
  leftovers,
  leftoversBut,
  type Loc,
  type Obj,
  jsonText,
} from "../common/guards.js";
import type { Unmapped } from "../common/content.js";
import { assignOwned, copyOf, hasKeys, withExtras } from "../common/extras.js";
import { mimeOf, toBase64, type MediaKind } from "./media.js";

/** Whatever a union object carries besides its member `key` (normally nothing). */
function member(b: Obj, key: string): Obj | undefined {
  return leftoversBut(b, key);
}

const K_MEDIA = new Set(["format", "source"]);
const K_SOURCE_S3 = new Set(["s3Location"]);
const K_S3 = new Set(["uri"]);

/**
 * A format is dropped once it is a MIME type only when the MIME type gives it
 * back (`png` <-> `image/png`); `mpg`, `jpg` or a format Bedrock adds later
 * stay in `extras.format`, so nothing the caller sent is lost.
 */
function formatExtras(kind: MediaKind, format: unknown): Obj | undefined {
  if (format === undefined || format === null) return undefined;
  return typeof format === "string" && CANONICAL[kind].includes(format) ? undefined : { format };
}
/** Formats whose MIME type names them alone (`mpg` and `mpeg` are both video/mpeg: only `mpeg` is here). */
const CANONICAL: Record<MediaKind, string[]> = {
  image: ["png", "jpeg", "gif", "webp"],
  file: ["pdf", "csv", "doc", "docx", "xls", "xlsx", "html", "txt", "md"],
  video: ["mp4", "mov", "mkv", "webm", "flv", "mpeg", "wmv", "three_gp"],
  audio: ["mp3", "wav", "flac", "ogg", "opus", "aac", "m4a", "webm", "mka", "pcm"],
};

/**
 * `{format, source: {bytes} | {s3Location} | {text}}` -> one native media block
 * with exactly one source; undefined for a source member this adapter does not
 * know (the caller keeps the block unmapped). A document's `text` source is
 * base64 of its UTF-8 with `extras.source_type: "text"`, as for Anthropic.
 */
function media(kind: MediaKind, v: Obj, loc: Loc): ContentBlock | undefined {
  const src = expectObj(v.source, loc, "source");
  const type = kind;
  if (src.bytes !== undefined && src.bytes !== null) {
    // The common case (every image a request carries), built without spreads: the
    // block's extras are the media object's, the format's and the source's leftovers, in that order.
    const base64 = toBase64(src.bytes, [...loc, "source", "bytes"]);
    const block: MediaBlock = { type, base64, mime_type: mimeOf(kind, v.format, base64)! };
    const extras = assignOwned(
      assignOwned(copyOf(leftoversBut(v, "format", "source")), formatExtras(kind, v.format)),
      leftoversBut(src, "bytes"),
    );
    if (extras && hasKeys(extras)) block.extras = extras;
    return block;
  }
  const extras: Obj = { ...leftovers(v, K_MEDIA), ...formatExtras(kind, v.format) };
  if (src.s3Location !== undefined && src.s3Location !== null) {
    const s3 = expectObj(src.s3Location, loc, "source", "s3Location");
    const block: MediaBlock = { type, url: expectString(s3.uri, [...loc, "source", "s3Location"], "uri") };
    const mime = mimeOf(kind, v.format);
    if (mime) block.mime_type = mime;
    const s3Extras = leftovers(s3, K_S3);
    return withExtras(block, { ...extras, ...(s3Extras ? { s3Location: s3Extras } : undefined), ...leftovers(src, K_SOURCE_S3) }, "merge");
  }
  if (kind === "file" && typeof src.text === "string") {
    const mime = mimeOf(kind, v.format) ?? "text/plain";
    return withExtras(
      { type, base64: Buffer.from(src.text, "utf8").toString("base64"), mime_type: mime },
      { ...extras, source_type: "text", ...leftovers(src, new Set(["text"])) },
      "merge",
    );
  }
  return undefined;
}

/**
 * A document whose source is `content` ({text} blocks the caller wrote) is what
 * the model reads: each inner block becomes a text block carrying the
 * document's own fields (name, format, context, citations) in
 * `extras.document`, and its position in `extras.document_part`.
 */
function documentContent(v: Obj, loc: Loc): ContentBlock[] | undefined {
  const src = v.source as Obj;
  const doc: Obj = { ...leftovers(v, new Set(["source"])), ...leftovers(src, new Set(["content"])) };
  const inner = expectArray(src.content, loc, "source", "content");
  const out: ContentBlock[] = [];
  for (let k = 0; k < inner.length; k++) {
    const ib = expectObj(inner[k], [...loc, "source", "content"], k);
    if (typeof ib.text !== "string") return undefined; // a member we do not know: the whole document stays unmapped
    out.push(
      withExtras({ type: "text", text: ib.text }, { ...leftovers(ib, new Set(["text"])), document: doc, document_part: k }, "merge"),
    );
  }
  return out;
}

function mediaBlocks(kind: MediaKind, raw: unknown, loc: Loc): ContentBlock[] | undefined {
  const v = expectObj(raw, loc);
  if (kind === "file" && isObj(v.source) && v.source.content !== undefined && v.source.content !== null) return documentContent(v, loc);
  const one = media(kind, v, loc);
  return one ? [one] : undefined;
}

/** `{source, title, content: [{text}]}`: text the model may cite; the joined text, the rest in extras. */
function searchResult(raw: unknown, loc: Loc): ContentBlock {
  const v = expectObj(raw, loc);
  const content = expectArray(v.content, loc, "content");
  const texts = content.map((c, i) => expectString(expectObj(c, [...loc, "content"], i).text, [...loc, "content", i], "text"));
  return withExtras(
    { type: "text", text: texts.join("\n\n") },
    { vendor_type: "searchResult", ...leftovers(v, new Set(["content"])) },
    "merge",
  );
}

const K_TOOL_USE = new Set(["toolUseId", "name", "input", "type"]);

function toolUse(raw: unknown, loc: Loc): ContentBlock {
  const v = expectObj(raw, loc);
  const id = expectString(v.toolUseId, loc, "toolUseId");
  const parsed = parseToolArgs(v.input);
  const extras: Obj = { ...leftovers(v, K_TOOL_USE), ...parsed.extras };
  // Bedrock runs some tools itself (ToolUseType "server_tool_use"): those are server tool calls.
  if (v.type === "server_tool_use")
    return withExtras({ type: "server_tool_call", id, name: expectString(v.name, loc, "name"), args: parsed.args }, extras, "merge");
  const block: ContentBlock =
    v.name === undefined || v.name === null
      ? { type: "tool_call", id, args: parsed.args }
      : { type: "tool_call", id, name: expectString(v.name, loc, "name"), args: parsed.args };
  if (v.type !== undefined) extras.type = v.type;
  return withExtras(block, extras, "merge");
}

/**
 * A tool result's content: `{text}`, `{json}` (any JSON value; as its JSON text,
 * `extras.vendor_type: "json"`), `{image}`, `{document}`, `{video}`, `{searchResult}`.
 */
export function toolResultContent(raw: unknown, loc: Loc, unmapped: Unmapped[]): ContentBlock[] {
  if (raw === undefined || raw === null) return [];
  const list = expectArray(raw, loc);
  const out: ContentBlock[] = [];
  for (let i = 0; i < list.length; i++) {
    const iloc = [...loc, i];
    const c = expectObj(list[i], iloc);
    let blocks: ContentBlock[] | undefined;
    if ("text" in c) blocks = [withExtras({ type: "text", text: expectString(c.text, iloc, "text") }, member(c, "text"), "merge")];
    else if ("json" in c)
      blocks = [
        withExtras(
          { type: "text", text: jsonText(c.json, () => [...iloc, "json"]) },
          { vendor_type: "json", ...member(c, "json") },
          "merge",
        ),
      ];
    else if ("image" in c) blocks = mediaBlocks("image", c.image, [...iloc, "image"]);
    else if ("document" in c) blocks = mediaBlocks("file", c.document, [...iloc, "document"]);
    else if ("video" in c) blocks = mediaBlocks("video", c.video, [...iloc, "video"]);
    else if ("searchResult" in c) blocks = [searchResult(c.searchResult, [...iloc, "searchResult"])];
    if (blocks) out.push(...blocks);
    else unmapped.push({ index: i, part: list[i] });
  }
  return out;
}

function reasoning(raw: unknown, loc: Loc): ContentBlock | undefined {
  const v = expectObj(raw, loc);
  if (isObj(v.reasoningText)) {
    const t = v.reasoningText;
    return withExtras(
      { type: "reasoning", text: expectString(t.text, [...loc, "reasoningText"], "text") },
      { ...leftovers(t, new Set(["text"])), ...leftovers(v, new Set(["reasoningText"])) },
      "merge",
    );
  }
  if (v.redactedContent !== undefined && v.redactedContent !== null) {
    // DESIGN: redacted reasoning is `text: ""` with extras.redacted; the encrypted bytes are kept (as base64) for replay.
    return withExtras(
      { type: "reasoning", text: "" },
      {
        redacted: true,
        redacted_content: toBase64(v.redactedContent, [...loc, "redactedContent"]),
        ...leftovers(v, new Set(["redactedContent"])),
      },
      "merge",
    );
  }
  return undefined;
}

function citations(raw: unknown, loc: Loc): ContentBlock | undefined {
  const v = expectObj(raw, loc);
  const content = v.content === undefined || v.content === null ? [] : expectArray(v.content, loc, "content");
  const texts: string[] = [];
  for (let i = 0; i < content.length; i++) {
    const c = expectObj(content[i], [...loc, "content"], i);
    if (typeof c.text !== "string") return undefined;
    texts.push(c.text);
  }
  const block: ContentBlock = { type: "text", text: texts.join("") };
  if (v.citations !== undefined && v.citations !== null)
    block.annotations = expectArray(v.citations, loc, "citations").map((c, i) => expectObj(c, [...loc, "citations"], i));
  return withExtras(block, { vendor_type: "citationsContent", ...leftovers(v, new Set(["content", "citations"])) }, "merge");
}

/**
 * Guard content is prompt text (or an image) the model reads and the guardrail
 * checks: it stays readable as a text / image block, marked
 * `extras.guard_content` (with the qualifiers when given).
 */
function guard(raw: unknown, loc: Loc): ContentBlock | undefined {
  const v = expectObj(raw, loc);
  if (isObj(v.text)) {
    const t = v.text;
    const marker = t.qualifiers !== undefined ? { qualifiers: t.qualifiers } : true;
    return withExtras(
      { type: "text", text: expectString(t.text, [...loc, "text"], "text") },
      { guard_content: marker, ...leftovers(t, new Set(["text", "qualifiers"])), ...leftovers(v, new Set(["text"])) },
      "merge",
    );
  }
  if (isObj(v.image)) {
    const img = media("image", v.image, [...loc, "image"]);
    return img ? withExtras(img, { guard_content: true, ...leftovers(v, new Set(["image"])) }, "merge") : undefined;
  }
  return undefined;
}

/**
 * One Converse block -> native blocks; undefined for a member this adapter does
 * not know. `toolResult` and `cachePoint` are the caller's (see convertContent).
 */
export function blockToNative(raw: unknown, loc: Loc): ContentBlock[] | undefined {
  const b = expectObj(raw, loc);
  if ("text" in b) return [withExtras({ type: "text", text: expectString(b.text, loc, "text") }, member(b, "text"), "merge")];
  if ("image" in b) return tag(mediaBlocks("image", b.image, [...loc, "image"]), member(b, "image"));
  if ("document" in b) return tag(mediaBlocks("file", b.document, [...loc, "document"]), member(b, "document"));
  if ("video" in b) return tag(mediaBlocks("video", b.video, [...loc, "video"]), member(b, "video"));
  if ("audio" in b) return tag(mediaBlocks("audio", b.audio, [...loc, "audio"]), member(b, "audio"));
  if ("toolUse" in b) return [withExtras(toolUse(b.toolUse, [...loc, "toolUse"]), member(b, "toolUse"), "merge")];
  if ("reasoningContent" in b) return tag(one(reasoning(b.reasoningContent, [...loc, "reasoningContent"])), member(b, "reasoningContent"));
  if ("citationsContent" in b) return tag(one(citations(b.citationsContent, [...loc, "citationsContent"])), member(b, "citationsContent"));
  if ("guardContent" in b) return tag(one(guard(b.guardContent, [...loc, "guardContent"])), member(b, "guardContent"));
  if ("searchResult" in b) return [withExtras(searchResult(b.searchResult, [...loc, "searchResult"]), member(b, "searchResult"), "merge")];
  return undefined;
}

function one(b: ContentBlock | undefined): ContentBlock[] | undefined {
  return b ? [b] : undefined;
}

function tag(blocks: ContentBlock[] | undefined, extras: Obj | undefined): ContentBlock[] | undefined {
  if (blocks && extras) for (const b of blocks) withExtras(b, extras, "merge");
  return blocks;
}

/** `{cachePoint: {type: "default"}}`: a marker between blocks, not content. */
export function isCachePoint(b: unknown): b is Obj & { cachePoint: unknown } {
  return isObj(b) && "cachePoint" in b && Object.keys(b).length === 1;
}

/** What takes a user turn's toolResult blocks (request.ts makes each a tool message). */
export interface ToolResultTaker {
  toolResult(block: Obj, loc: Loc, rest: Obj | undefined): void;
}

/** Where convertContent puts what it reads; a caller may swap both lists between blocks (see request.ts). */
export interface Sink {
  blocks: ContentBlock[];
  unmapped: Unmapped[];
}

/**
 * A content list -> native blocks in `sink`. A cache point marks "cache
 * everything up to here", which Anthropic writes as `cache_control` on the block
 * before it: it goes to that block's `extras.cache_point` and, with no block
 * right before it, to `extras.unmapped_content` in its place. `onToolResult`
 * takes toolResult blocks (a user turn makes each a tool message); without it
 * they are server tool results (an assistant turn's).
 */
export function convertContent(raw: unknown, loc: Loc, sink: Sink, onToolResult?: ToolResultTaker): void {
  if (typeof raw === "string") {
    sink.blocks.push({ type: "text", text: raw });
    return;
  }
  if (!Array.isArray(raw)) return fail(loc, `expected an array of content blocks, got ${describe(raw)}`, "list_type");
  // Which input block made the sink's last block: a cache point belongs to the block right before it.
  let lastFrom = -1;
  for (let i = 0; i < raw.length; i++) {
    const b = raw[i];
    if (isCachePoint(b)) {
      const prev = sink.blocks[sink.blocks.length - 1];
      if (lastFrom === i - 1 && prev) withExtras(prev, { cache_point: b.cachePoint }, "merge");
      else sink.unmapped.push({ index: i, part: b });
      continue;
    }
    if (isObj(b)) {
      if (isObj(b.toolResult)) {
        if (onToolResult) onToolResult.toolResult(b.toolResult, [...loc, i, "toolResult"], member(b, "toolResult"));
        else {
          sink.blocks.push(serverToolResult(b, [...loc, i]));
          lastFrom = i;
        }
        continue;
      }
      if (typeof b.text === "string") {
        // blockToNative's answer for a text block (most blocks), without building its location.
        const block: ContentBlock = { type: "text", text: b.text };
        const extras = leftoversBut(b, "text");
        // As withExtras("merge") lays them on a fresh block: a copy, only when a key is there to enumerate.
        if (extras !== undefined && hasKeys(extras)) block.extras = { ...extras };
        sink.blocks.push(block);
        lastFrom = i;
        continue;
      }
    }
    const blocks = blockToNative(b, [...loc, i]);
    if (blocks) {
      for (const nb of blocks) sink.blocks.push(nb);
      lastFrom = i;
    } else sink.unmapped.push({ index: i, part: b });
  }
}

/** A toolResult in an assistant turn: a tool Bedrock ran itself, so a server_tool_result. */
function serverToolResult(b: Obj, loc: Loc): ContentBlock {
  const v = b.toolResult as Obj;
  const tloc = [...loc, "toolResult"];
  const id = expectString(v.toolUseId, tloc, "toolUseId");
  const inner: Unmapped[] = [];
  const output = toolResultContent(v.content, [...tloc, "content"], inner);
  const extras: Obj = { ...leftovers(v, new Set(["toolUseId", "content", "status"])), ...member(b, "toolResult") };
  if (v.status !== undefined && v.status !== "error" && v.status !== "success") extras.status = v.status;
  if (inner.length) extras.unmapped_content = inner;
  return withExtras(
    { type: "server_tool_result", tool_call_id: id, status: v.status === "error" ? "error" : "success", output },
    extras,
    "merge",
  );
}
