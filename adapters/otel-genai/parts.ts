/**
 * OTel GenAI message parts -> native content blocks.
 *
 * | part                          | native                                            |
 * |-------------------------------|---------------------------------------------------|
 * | text `{content}` (or `{text}`) | text; without either (content not captured), nothing |
 * | reasoning `{content}` (or `{text}`) | reasoning                                   |
 * | tool_call `{id, name, arguments}` | tool_call (arguments parsed to an object); `call_id`, when given, is the id |
 * | tool_call_response `{id, response | result}` | its own `tool` message, `tool_call_id` = id |
 * | server_tool_call `{id, name, server_tool_call}` | server_tool_call, args = the payload |
 * | server_tool_call_response `{id, server_tool_call_response}` | server_tool_result |
 * | blob `{modality, mime_type, content}` | image / audio / video (else file) with base64 |
 * | uri `{modality, mime_type, uri}` | the same with url                               |
 * | file `{modality, mime_type, file_id}` | the same with id                           |
 * | anything else                 | kept whole in the message's `extras.unmapped_content` |
 */
import type { ContentBlock, MediaBlock } from "../../src/format/schema.js";
import { parseToolArgs } from "../common/args.js";
import { expectString, fail, isObj, type Key, type Loc, type Obj } from "../common/guards.js";
import type { Unmapped } from "../common/content.js";
import { sniffMime } from "../common/mime.js";

export interface ReadParts {
  blocks: ContentBlock[];
  /** tool_call_response parts: each becomes a `tool` message; `after` is how many blocks preceded it. */
  toolResults: { id: string | undefined; content: ContentBlock[]; after: number }[];
  /** Parts with no native home, with their index (DESIGN: `extras.unmapped_content`). */
  unknown: Unmapped[];
}

const MEDIA: Record<string, MediaBlock["type"]> = { image: "image", audio: "audio", video: "video" };

function optStr(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

/** A text part as the conventions write it (`content`) or as a vendor block does (`text`). */
function partText(p: unknown): string | undefined {
  if (!isObj(p) || p.type !== "text") return undefined;
  return typeof p.content === "string" ? p.content : typeof p.text === "string" ? p.text : undefined;
}

/**
 * A tool's result as content: text stays text; a list of text parts (the
 * Anthropic SDK records a tool_result's blocks so) is that text, one block per
 * part; anything else is its JSON text.
 */
export function resultContent(v: unknown): ContentBlock[] {
  if (v === undefined || v === null) return [];
  if (typeof v === "string") return [{ type: "text", text: v }];
  if (Array.isArray(v)) {
    const texts = v.map(partText);
    if (texts.every((t) => t !== undefined)) return texts.map((t) => ({ type: "text" as const, text: t! }));
    return v.map((p) => {
      const t = partText(p);
      return t !== undefined
        ? { type: "text" as const, text: t }
        : { type: "text" as const, text: typeof p === "string" ? p : JSON.stringify(p) };
    });
  }
  return [{ type: "text", text: JSON.stringify(v) }];
}

/**
 * The call's id. The official OpenAI instrumentation records Responses API
 * items with the item's own id in `id` and the call's in `call_id` (which
 * the tool's answer names): the call's id links the two.
 */
function callId(p: Obj): string | undefined {
  return optStr(p.call_id) ?? optStr(p.id);
}

function media(p: Obj, source: "base64" | "url" | "id", value: string): MediaBlock {
  const type = MEDIA[optStr(p.modality) ?? ""] ?? "file";
  const block = { type, [source]: value } as MediaBlock;
  if (typeof p.mime_type === "string") block.mime_type = p.mime_type;
  else if (source === "base64") block.mime_type = sniffMime(value); // validate needs one with base64
  if (type === "file" && typeof p.modality === "string") block.extras = { modality: p.modality };
  return block;
}

/**
 * `parts` sits at `loc` (plus `key` when given). Locations are built only for
 * an error: a spread per part and per field read was a tenth of reading a
 * span's messages.
 */
export function readParts(parts: unknown, loc: Loc, key?: Key): ReadParts {
  if (!Array.isArray(parts)) fail(key === undefined ? loc : [...loc, key], "expected an array of parts", "list_type");
  const out: ReadParts = { blocks: [], toolResults: [], unknown: [] };
  const str = (v: unknown, i: number, field: string) =>
    typeof v === "string" ? v : expectString(v, key === undefined ? loc : [...loc, key], i, field);
  for (let i = 0; i < parts.length; i++) {
    const p: unknown = parts[i];
    if (!isObj(p)) fail(key === undefined ? [...loc, i] : [...loc, key, i], "expected a part object", "object_type");
    switch (p.type) {
      case "text":
      case "reasoning": {
        // An instrumentation not capturing content writes the part with neither field: nothing to show, not an error.
        const t = p.content ?? p.text;
        if (t === undefined || t === null) break;
        out.blocks.push({ type: p.type, text: str(t, i, p.content !== undefined ? "content" : "text") });
        break;
      }
      case "tool_call": {
        const { args, extras } = parseToolArgs(p.arguments);
        const block: ContentBlock = { type: "tool_call", name: str(p.name, i, "name"), args };
        const id = callId(p);
        if (id) block.id = id;
        const more = id !== p.id && typeof p.id === "string" ? { ...extras, item_id: p.id } : extras;
        if (more) block.extras = more;
        out.blocks.push(block);
        break;
      }
      case "tool_call_response":
        // The semantic conventions call it `response`; some emitters wrote `result`.
        out.toolResults.push({
          id: callId(p),
          content: resultContent(p.response !== undefined ? p.response : p.result),
          after: out.blocks.length,
        });
        break;
      case "server_tool_call": {
        const payload = isObj(p.server_tool_call) ? p.server_tool_call : {};
        out.blocks.push({ type: "server_tool_call", id: optStr(p.id) ?? "", name: str(p.name, i, "name"), args: payload });
        break;
      }
      case "server_tool_call_response": {
        const payload = p.server_tool_call_response;
        const isError =
          isObj(payload) && (payload.error !== undefined || (typeof payload.type === "string" && payload.type.endsWith("_error")));
        const block: ContentBlock = {
          type: "server_tool_result",
          tool_call_id: optStr(p.id) ?? "",
          status: isError ? "error" : "success",
          output: payload,
        };
        out.blocks.push(block);
        break;
      }
      case "blob":
        out.blocks.push(media(p, "base64", str(p.content, i, "content")));
        break;
      case "uri":
        out.blocks.push(media(p, "url", str(p.uri, i, "uri")));
        break;
      case "file":
        out.blocks.push(media(p, "id", str(p.file_id, i, "file_id")));
        break;
      default:
        if (typeof p.type !== "string")
          fail(key === undefined ? [...loc, i, "type"] : [...loc, key, i, "type"], "expected a part type", "string_type");
        out.unknown.push({ index: i, part: p });
    }
  }
  return out;
}
