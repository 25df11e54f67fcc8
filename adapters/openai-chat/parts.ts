/** OpenAI content parts -> native content blocks. */
import type { ContentBlock } from "../../src/format/schema.js";
import { parseDataUrl } from "../common/dataurl.js";
import { describe, expectObj, expectString, fail, isObj, leftovers, type Key, type Loc, type Obj } from "../common/guards.js";
import { withExtras } from "../common/extras.js";
import { partsToBlocks, type Unmapped } from "../common/content.js";

const AUDIO_MIME: Record<string, string> = {
  wav: "audio/wav",
  mp3: "audio/mpeg",
  flac: "audio/flac",
  opus: "audio/opus",
  pcm16: "audio/pcm",
  aac: "audio/aac",
  ogg: "audio/ogg",
};
const EXT_MIME: Record<string, string> = {
  pdf: "application/pdf",
  txt: "text/plain",
  md: "text/markdown",
  csv: "text/csv",
  json: "application/json",
  html: "text/html",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
};

export function audioMime(format: string): string {
  return AUDIO_MIME[format] ?? `audio/${format}`;
}

function mimeFromFilename(name: unknown): string | undefined {
  if (typeof name !== "string") return undefined;
  const dot = name.lastIndexOf(".");
  return dot < 0 ? undefined : EXT_MIME[name.slice(dot + 1).toLowerCase()];
}

const K_TEXT = new Set(["type", "text"]);
const K_IMAGE_URL = new Set(["url", "detail"]);
const K_PART_IMAGE = new Set(["type", "image_url"]);
const K_PART_AUDIO = new Set(["type", "input_audio"]);
const K_AUDIO = new Set(["data", "format"]);
const K_PART_FILE = new Set(["type", "file"]);
const K_FILE = new Set(["file_id", "file_data", "filename"]);
const K_REFUSAL = new Set(["type", "refusal"]);

function merge(a: Obj | undefined, b: Obj | undefined): Obj | undefined {
  if (!a) return b;
  if (!b) return a;
  return { ...a, ...b };
}

/** An image URL: data URLs become base64 + mime_type, anything else stays a URL. */
export function imageFromUrl(url: string, extras: Obj | undefined): ContentBlock {
  const data = parseDataUrl(url);
  if (data) {
    const ex = data.params ? merge(extras, { mime_params: data.params }) : extras;
    return withExtras({ type: "image", base64: data.base64, mime_type: data.mime_type }, ex, "replace");
  }
  return withExtras({ type: "image", url }, extras, "replace");
}

export function textBlock(text: string): ContentBlock {
  return { type: "text", text };
}

/** One content part of a message (any role); undefined for a part type this adapter does not know. */
export function partToBlock(part: unknown, loc: Loc): ContentBlock | undefined {
  if (typeof part === "string") return textBlock(part); // some compatible servers send bare strings
  const p = expectObj(part, loc);
  const type = p.type;
  switch (type) {
    case "text": {
      const text = expectString(p.text, loc, "text");
      return withExtras({ type: "text", text }, leftovers(p, K_TEXT), "replace");
    }
    case "image_url": {
      const iu = p.image_url;
      let url: string;
      let extras = leftovers(p, K_PART_IMAGE);
      if (typeof iu === "string") url = iu;
      else {
        const o = expectObj(iu, loc, "image_url");
        url = expectString(o.url, loc, "image_url", "url");
        extras = merge(extras, leftovers(o, K_IMAGE_URL));
        if (o.detail !== undefined && o.detail !== null) extras = merge(extras, { detail: o.detail });
      }
      return imageFromUrl(url, extras);
    }
    case "input_audio": {
      const a = expectObj(p.input_audio, loc, "input_audio");
      const data = expectString(a.data, loc, "input_audio", "data");
      const format = expectString(a.format, loc, "input_audio", "format");
      const extras = merge(leftovers(p, K_PART_AUDIO), leftovers(a, K_AUDIO));
      return withExtras({ type: "audio", base64: data, mime_type: audioMime(format) }, extras, "replace");
    }
    case "file": {
      const f = expectObj(p.file, loc, "file");
      let extras = merge(leftovers(p, K_PART_FILE), leftovers(f, K_FILE));
      if (f.filename !== undefined) extras = merge(extras, { filename: f.filename });
      if (typeof f.file_data === "string") {
        const data = parseDataUrl(f.file_data);
        if (data) {
          if (data.params) extras = merge(extras, { mime_params: data.params });
          if (f.file_id !== undefined) extras = merge(extras, { file_id: f.file_id });
          return withExtras({ type: "file", base64: data.base64, mime_type: data.mime_type }, extras, "replace");
        }
        // Raw base64 without a data URL: the MIME type comes from the file name, else octet-stream.
        if (f.file_id !== undefined) extras = merge(extras, { file_id: f.file_id });
        return withExtras(
          { type: "file", base64: f.file_data, mime_type: mimeFromFilename(f.filename) ?? "application/octet-stream" },
          extras,
          "replace",
        );
      }
      if (f.file_data !== undefined && f.file_data !== null)
        fail([...loc, "file", "file_data"], `expected a string, got ${describe(f.file_data)}`, "string_type");
      if (typeof f.file_id === "string") return withExtras({ type: "file", id: f.file_id }, extras, "replace");
      return fail([...loc, "file"], "a file part needs file_id or file_data", "missing");
    }
    case "refusal": {
      const text = expectString(p.refusal, loc, "refusal");
      return withExtras({ type: "text", text }, merge({ refusal: true }, leftovers(p, K_REFUSAL)), "replace");
    }
    default:
      // DESIGN: an unknown part never rejects the record; the caller keeps it in extras.unmapped_content.
      return undefined;
  }
}

/**
 * `content` (at `parent` + `key`): a string, null, or an array of parts. Parts of
 * unknown types go to `unmapped`. The location is built only when needed:
 * nearly every message has string content, and this runs for each one.
 */
export function contentToBlocks(content: unknown, parent: Loc, key: Key, unmapped: Unmapped[]): ContentBlock[] {
  if (typeof content === "string") return [textBlock(content)];
  if (content === undefined || content === null) return [];
  const loc = [...parent, key];
  if (!Array.isArray(content)) return fail(loc, `expected a string or an array of content parts, got ${describe(content)}`, "content_type");
  return partsToBlocks(content, loc, partToBlock, unmapped);
}

export { isObj };
