/**
 * The MIME type of bytes whose sender did not name it, from their leading
 * bytes (as base64), so a base64 block always has the `mime_type` validate
 * requires. Unknown bytes are `application/octet-stream`: that is what they are,
 * not a guess.
 */
const MAGIC: [string, string][] = [
  ["iVBORw0KGgo", "image/png"],
  ["/9j/", "image/jpeg"],
  ["R0lGOD", "image/gif"],
  ["JVBERi0", "application/pdf"],
  ["UklGR", "audio/wav"], // RIFF (WAVE; a WebP is RIFF....WEBP, checked below)
  ["SUQz", "audio/mpeg"], // ID3
  ["//", "audio/mpeg"], // MPEG frame sync 0xFF 0xEx/0xFx
  ["ZkxhQw", "audio/flac"], // fLaC
  ["T2dnUw", "audio/ogg"], // OggS
];

export function sniffMime(base64: string): string {
  // RIFF, 4 size bytes, then "WEBP" in bytes 8-11: base64 characters 11-15 depend on those bytes alone.
  if (base64.startsWith("UklGR") && base64.slice(11, 16) === "XRUJQ") return "image/webp";
  for (const [prefix, mime] of MAGIC) if (base64.startsWith(prefix)) return mime;
  return "application/octet-stream";
}
