/** Responses API content parts (input_text, input_image, input_file, input_audio, output_text, refusal) -> native blocks. */
import type { ContentBlock } from "../../src/format/schema.js";
import { parseDataUrl } from "../common/dataurl.js";
import { describe, expectArray, expectObj, expectString, fail, leftovers, optString, type Loc, type Obj } from "../common/guards.js";
import { partsToBlocks, type Unmapped } from "../common/content.js";
import { withExtras } from "../common/extras.js";
import { audioMime, imageFromUrl } from "../openai-chat/parts.js";

const K_TEXT = new Set(["type", "text"]);
const K_OUTPUT_TEXT = new Set(["type", "text", "annotations"]);
const K_IMAGE = new Set(["type", "image_url", "file_id"]);
const K_FILE = new Set(["type", "file_data", "file_id", "file_url"]);
const K_AUDIO = new Set(["type", "input_audio"]);
const K_AUDIO_INNER = new Set(["data", "format"]);
const K_REFUSAL = new Set(["type", "refusal"]);

function fileBlock(p: Obj, loc: Loc): ContentBlock {
  let extras = leftovers(p, K_FILE);
  if (typeof p.file_data === "string") {
    if (p.file_id !== undefined && p.file_id !== null) extras = { ...extras, file_id: p.file_id };
    if (p.file_url !== undefined) extras = { ...extras, file_url: p.file_url };
    const data = parseDataUrl(p.file_data);
    if (data)
      return withExtras(
        { type: "file", base64: data.base64, mime_type: data.mime_type },
        data.params ? { ...extras, mime_params: data.params } : extras,
        "replace",
      );
    // Raw base64: the SDK sends the name beside it; the MIME type is not known for sure.
    return withExtras({ type: "file", base64: p.file_data, mime_type: "application/octet-stream" }, extras, "replace");
  }
  if (p.file_data !== undefined && p.file_data !== null)
    fail([...loc, "file_data"], `expected a string, got ${describe(p.file_data)}`, "string_type");
  const fileId = optString(p.file_id, loc, "file_id");
  if (fileId !== undefined)
    return withExtras({ type: "file", id: fileId }, p.file_url !== undefined ? { ...extras, file_url: p.file_url } : extras, "replace");
  const url = optString(p.file_url, loc, "file_url");
  if (url !== undefined) return withExtras({ type: "file", url }, extras, "replace");
  return fail(loc, "an input_file part needs file_data, file_id or file_url", "missing");
}

/** One part; undefined for a part type this adapter does not know (DESIGN: kept in extras.unmapped_content). */
export function partToBlock(part: unknown, loc: Loc): ContentBlock | undefined {
  const p = expectObj(part, loc);
  switch (p.type) {
    case "input_text":
      return withExtras({ type: "text", text: expectString(p.text, loc, "text") }, leftovers(p, K_TEXT), "replace");
    case "output_text": {
      const block: ContentBlock = { type: "text", text: expectString(p.text, loc, "text") };
      if (p.annotations !== undefined && p.annotations !== null) {
        const anns = expectArray(p.annotations, loc, "annotations");
        if (anns.length) block.annotations = anns.map((a, i) => expectObj(a, [...loc, "annotations", i]));
      }
      return withExtras(block, leftovers(p, K_OUTPUT_TEXT), "replace");
    }
    case "refusal":
      return withExtras(
        { type: "text", text: expectString(p.refusal, loc, "refusal") },
        { refusal: true, ...leftovers(p, K_REFUSAL) },
        "replace",
      );
    case "input_image": {
      const extras = leftovers(p, K_IMAGE);
      const url = optString(p.image_url, loc, "image_url");
      if (url !== undefined)
        return imageFromUrl(url, p.file_id !== undefined && p.file_id !== null ? { ...extras, file_id: p.file_id } : extras);
      const id = optString(p.file_id, loc, "file_id");
      if (id !== undefined) return withExtras({ type: "image", id }, extras, "replace");
      return fail(loc, "an input_image part needs image_url or file_id", "missing");
    }
    case "input_file":
      return fileBlock(p, loc);
    case "input_audio": {
      const a = expectObj(p.input_audio, loc, "input_audio");
      const data = expectString(a.data, loc, "input_audio", "data");
      const format = expectString(a.format, loc, "input_audio", "format");
      const extras = leftovers(p, K_AUDIO);
      const inner = leftovers(a, K_AUDIO_INNER);
      return withExtras(
        { type: "audio", base64: data, mime_type: audioMime(format) },
        extras || inner ? { ...extras, ...inner } : undefined,
        "replace",
      );
    }
    default:
      return undefined;
  }
}

/** `content`: a string or a list of parts; unknown parts go to `unmapped`. */
export function contentToBlocks(content: unknown, loc: Loc, unmapped: Unmapped[]): ContentBlock[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (content === undefined || content === null) return [];
  return partsToBlocks(expectArray(content, loc), loc, partToBlock, unmapped);
}
