/**
 * Converse media: bytes in every form they reach us, and the `format` names
 * Bedrock uses instead of MIME types.
 *
 * The SDK holds bytes as a Uint8Array; the service's JSON (and Bedrock's own
 * invocation logs) carry them as base64 text; a log written with
 * JSON.stringify(sdkInput) turns a Uint8Array into `{"0":137,"1":80,...}` and a
 * Buffer into `{type: "Buffer", data: [...]}`. All of them are the same bytes,
 * so all are read, and the native block always gets base64.
 */
import { describe, fail, isObj, type Loc } from "../common/guards.js";
import { sniffMime } from "../common/mime.js";

function fromByteList(list: ArrayLike<unknown>, loc: Loc): string {
  const out = new Uint8Array(list.length);
  for (let i = 0; i < list.length; i++) {
    const n = list[i];
    if (typeof n !== "number" || !Number.isInteger(n) || n < 0 || n > 255)
      fail([...loc, i], `expected a byte (an integer 0-255), got ${typeof n === "number" ? n : describe(n)}`, "byte_type");
    out[i] = n;
  }
  return Buffer.from(out.buffer, out.byteOffset, out.byteLength).toString("base64");
}

/** Bytes (Uint8Array, base64 text, a byte array, or a JSON-serialized Uint8Array/Buffer) -> base64. */
export function toBase64(v: unknown, loc: Loc): string {
  if (typeof v === "string") return v;
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("base64");
  if (Array.isArray(v)) return fromByteList(v, loc);
  if (isObj(v)) {
    if (v.type === "Buffer" && Array.isArray(v.data)) return fromByteList(v.data, [...loc, "data"]);
    // JSON.stringify(new Uint8Array(...)): keys "0".."n-1" in order.
    const keys = Object.keys(v);
    if (keys.every((k, i) => k === String(i)))
      return fromByteList(
        keys.map((k) => v[k]),
        loc,
      );
  }
  return fail(loc, `expected bytes (a Uint8Array or base64 text), got ${describe(v)}`, "bytes_type");
}

const IMAGE: Record<string, string> = { png: "image/png", jpeg: "image/jpeg", jpg: "image/jpeg", gif: "image/gif", webp: "image/webp" };
const DOCUMENT: Record<string, string> = {
  pdf: "application/pdf",
  csv: "text/csv",
  doc: "application/msword",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xls: "application/vnd.ms-excel",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  html: "text/html",
  txt: "text/plain",
  md: "text/markdown",
};
const VIDEO: Record<string, string> = {
  mp4: "video/mp4",
  mov: "video/quicktime",
  mkv: "video/x-matroska",
  webm: "video/webm",
  flv: "video/x-flv",
  mpeg: "video/mpeg",
  mpg: "video/mpeg",
  wmv: "video/x-ms-wmv",
  three_gp: "video/3gpp",
};
const AUDIO: Record<string, string> = {
  mp3: "audio/mpeg",
  mpeg: "audio/mpeg",
  mpga: "audio/mpeg",
  wav: "audio/wav",
  flac: "audio/flac",
  ogg: "audio/ogg",
  opus: "audio/opus",
  aac: "audio/aac",
  "x-aac": "audio/aac",
  m4a: "audio/mp4",
  mp4: "audio/mp4",
  webm: "audio/webm",
  mka: "audio/x-matroska",
  mkv: "audio/x-matroska",
  pcm: "audio/pcm",
};

export type MediaKind = "image" | "file" | "video" | "audio";
const TABLES: Record<MediaKind, Record<string, string>> = { image: IMAGE, file: DOCUMENT, video: VIDEO, audio: AUDIO };
const FALLBACK_PREFIX: Record<MediaKind, string> = { image: "image/", file: "application/", video: "video/", audio: "audio/" };

/**
 * The MIME type of a Converse `format`. A format Bedrock adds later still gets a
 * type of its family (`image/avif`); with no format, the bytes are sniffed.
 */
export function mimeOf(kind: MediaKind, format: unknown, base64?: string): string | undefined {
  if (typeof format === "string" && format !== "") {
    const f = format.toLowerCase();
    const table = TABLES[kind];
    return Object.hasOwn(table, f) ? table[f] : FALLBACK_PREFIX[kind] + f;
  }
  return base64 === undefined ? undefined : sniffMime(base64);
}
