/** Anthropic content blocks -> native content blocks (DESIGN "Mapping decisions"). */
import type { ContentBlock } from "../../src/format/schema.js";
import { parseToolArgs } from "../common/args.js";
import { describe, expectArray, expectObj, expectString, fail, isObj, leftovers, type Key, type Loc, type Obj } from "../common/guards.js";
import type { Unmapped } from "../common/content.js";
import { withExtras } from "../common/extras.js";

const K_TEXT = new Set(["type", "text", "citations"]);
const K_MEDIA = new Set(["type", "source"]);
const K_SOURCE_B64 = new Set(["type", "media_type", "data"]);
const K_SOURCE_URL = new Set(["type", "url"]);
const K_SOURCE_FILE = new Set(["type", "file_id"]);
const K_TOOL_USE = new Set(["type", "id", "name", "input"]);
const K_THINKING = new Set(["type", "thinking"]);
const K_SERVER_RESULT = new Set(["type", "tool_use_id", "content"]);

/**
 * A media source -> one native source. `text` documents become base64 of their
 * UTF-8 text with the given media type (`extras.source_type: "text"`), so the
 * block still has exactly one source. (`content` documents are not media: see
 * documentContent.)
 */
function mediaBlock(kind: "image" | "file", b: Obj, loc: Loc): ContentBlock {
  const src = expectObj(b.source, loc, "source");
  const extras: Obj = { ...leftovers(b, K_MEDIA) };
  switch (src.type) {
    case "base64": {
      const data = expectString(src.data, loc, "source", "data");
      const mime = expectString(src.media_type, loc, "source", "media_type");
      return withExtras({ type: kind, base64: data, mime_type: mime }, { ...extras, ...leftovers(src, K_SOURCE_B64) }, "replace-nonempty");
    }
    case "url":
      return withExtras(
        { type: kind, url: expectString(src.url, loc, "source", "url") },
        { ...extras, ...leftovers(src, K_SOURCE_URL) },
        "replace-nonempty",
      );
    case "file":
      return withExtras(
        { type: kind, id: expectString(src.file_id, loc, "source", "file_id") },
        { ...extras, ...leftovers(src, K_SOURCE_FILE) },
        "replace-nonempty",
      );
    case "text": {
      const data = expectString(src.data, loc, "source", "data");
      const mime = typeof src.media_type === "string" ? src.media_type : "text/plain";
      return withExtras(
        { type: kind, base64: Buffer.from(data, "utf8").toString("base64"), mime_type: mime },
        { ...extras, source_type: "text" },
        "replace-nonempty",
      );
    }
    default:
      return fail(
        [...loc, "source", "type"],
        `unsupported source type ${JSON.stringify(src.type)}; expected base64, url, file, text or content`,
        "unsupported_source",
      );
  }
}

const K_DOCUMENT = new Set(["type", "source"]);

/**
 * A `document` whose source is `content` (text and image blocks the caller
 * wrote) is what the model reads: its blocks stay readable, one native block
 * each, and each carries the document's own fields (title, context, citations)
 * in `extras.document`, with `extras.document_part` its position inside it.
 */
function documentContent(b: Obj, loc: Loc): ContentBlock[] | undefined {
  const src = b.source as Obj;
  const doc: Obj = { ...leftovers(b, K_DOCUMENT), ...leftovers(src, new Set(["type", "content"])) };
  const inner =
    typeof src.content === "string" ? [{ type: "text", text: src.content }] : expectArray(src.content, loc, "source", "content");
  const out: ContentBlock[] = [];
  for (let k = 0; k < inner.length; k++) {
    const iloc = [...loc, "source", "content", k];
    const ib = expectObj(inner[k], iloc);
    let block: ContentBlock;
    if (ib.type === "text")
      block = withExtras({ type: "text", text: expectString(ib.text, iloc, "text") }, leftovers(ib, K_TEXT), "replace-nonempty");
    else if (ib.type === "image") block = mediaBlock("image", ib, iloc);
    else return undefined; // a block type we do not know: the whole document is kept unmapped
    block.extras = { ...block.extras, document: doc, document_part: k };
    out.push(block);
  }
  return out;
}

function citations(b: Obj, loc: Loc): Obj[] | undefined {
  if (b.citations === undefined || b.citations === null) return undefined;
  const list = expectArray(b.citations, loc, "citations");
  return list.map((c, i) => expectObj(c, loc, "citations", i));
}

/** Server tool results carry an error object (type `*_error`, or an `error_code`) instead of content on failure. */
function resultStatus(content: unknown): "success" | "error" {
  if (isObj(content) && ((typeof content.type === "string" && content.type.endsWith("_error")) || "error_code" in content)) return "error";
  return "success";
}

function toolUse(b: Obj, loc: Loc): { id: string; name: string; args: Obj; extras: Obj } {
  const id = expectString(b.id, loc, "id");
  const name = expectString(b.name, loc, "name");
  const parsed = parseToolArgs(b.input);
  return { id, name, args: parsed.args, extras: { ...leftovers(b, K_TOOL_USE), ...parsed.extras } };
}

/**
 * One block -> native blocks (a content document gives one per inner block);
 * undefined for a type this adapter does not know, which the caller keeps in
 * `extras.unmapped_content` (DESIGN). `tool_result` is the caller's: it becomes a
 * message of its own (see request.ts).
 */
export function blockToNative(block: unknown, loc: Loc): ContentBlock[] | undefined {
  const b = expectObj(block, loc);
  if (b.type === "document" && isObj(b.source) && b.source.type === "content") return documentContent(b, loc);
  const one = singleBlock(b, loc);
  return one ? [one] : undefined;
}

function singleBlock(b: Obj, loc: Loc): ContentBlock | undefined {
  const type = b.type;
  switch (type) {
    case "text": {
      const out: ContentBlock = { type: "text", text: expectString(b.text, loc, "text") };
      const anns = citations(b, loc);
      if (anns) out.annotations = anns;
      return withExtras(out, leftovers(b, K_TEXT), "replace-nonempty");
    }
    case "image":
      return mediaBlock("image", b, loc);
    case "document":
      return mediaBlock("file", b, loc);
    case "tool_use": {
      const t = toolUse(b, loc);
      return withExtras({ type: "tool_call", id: t.id, name: t.name, args: t.args }, t.extras, "replace-nonempty");
    }
    case "server_tool_use":
    case "mcp_tool_use": {
      const t = toolUse(b, loc);
      return withExtras(
        { type: "server_tool_call", id: t.id, name: t.name, args: t.args },
        type === "mcp_tool_use" ? { ...t.extras, vendor_type: type } : t.extras,
        "replace-nonempty",
      );
    }
    case "thinking": {
      const text = expectString(b.thinking, loc, "thinking");
      return withExtras({ type: "reasoning", text }, leftovers(b, K_THINKING), "replace-nonempty");
    }
    case "redacted_thinking":
      // DESIGN: text "" with extras.redacted; the encrypted `data` is kept for replay.
      return withExtras({ type: "reasoning", text: "" }, { redacted: true, ...leftovers(b, new Set(["type"])) }, "replace-nonempty");
    case "search_result": {
      // A search result is text the model may cite: its text blocks are joined, and
      // source, title and the original blocks stay in extras.
      const content = expectArray(b.content, loc, "content");
      const texts = content.map((c, i) => expectString(expectObj(c, loc, "content", i).text, [...loc, "content", i, "text"]));
      return withExtras(
        { type: "text", text: texts.join("\n\n") },
        { vendor_type: "search_result", ...leftovers(b, new Set(["type"])) },
        "replace-nonempty",
      );
    }
    case "container_upload":
      return withExtras(
        { type: "file", id: expectString(b.file_id, loc, "file_id") },
        { vendor_type: "container_upload", ...leftovers(b, new Set(["type", "file_id"])) },
        "replace-nonempty",
      );
    case "mcp_tool_result": {
      const out: ContentBlock = {
        type: "server_tool_result",
        tool_call_id: expectString(b.tool_use_id, loc, "tool_use_id"),
        status: b.is_error === true ? "error" : "success",
        output: b.content,
      };
      return withExtras(
        out,
        { vendor_type: type, ...leftovers(b, new Set(["type", "tool_use_id", "content", "is_error"])) },
        "replace-nonempty",
      );
    }
    default:
      if (typeof type === "string" && type.endsWith("_tool_result")) {
        const out: ContentBlock = {
          type: "server_tool_result",
          tool_call_id: expectString(b.tool_use_id, loc, "tool_use_id"),
          status: resultStatus(b.content),
          output: b.content,
        };
        return withExtras(out, { vendor_type: type, ...leftovers(b, K_SERVER_RESULT) }, "replace-nonempty");
      }
      return undefined;
  }
}

/** One block appended to `out`, or kept in `unmapped` (with its index) when its type is unknown. */
export function pushBlock(block: unknown, loc: Loc, index: number, out: ContentBlock[], unmapped: Unmapped[]): void {
  const blocks = blockToNative(block, loc);
  if (!blocks) unmapped.push({ index, part: block });
  else for (const b of blocks) out.push(b);
}

/**
 * `content` (at `parent` + `key`): a string or an array of blocks (tool_result
 * excluded by the caller). The location is built only for arrays and errors.
 */
export function contentToNative(content: unknown, parent: Loc, key: Key, unmapped: Unmapped[]): ContentBlock[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  const loc = [...parent, key];
  if (!Array.isArray(content))
    return fail(loc, `expected a string or an array of content blocks, got ${describe(content)}`, "content_type");
  const out: ContentBlock[] = [];
  for (let i = 0; i < content.length; i++) pushBlock(content[i], [...loc, i], i, out, unmapped);
  return out;
}
