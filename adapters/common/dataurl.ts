/**
 * Data URLs (RFC 2397) -> base64 + mime_type, for any MIME type: `image/svg+xml`,
 * `audio/x-wav`, `application/vnd.ms-excel`, and parameters such as `;charset=utf-8`.
 * Other converters often use a `\w+/\w+` pattern that rejects `+`, `-` and `.`.
 */

export interface DataUrl {
  /** The media type without parameters, lower-cased (`image/svg+xml`). */
  mime_type: string;
  /** Parameters other than `base64`, in order, e.g. `{charset: "utf-8"}`. */
  params?: Record<string, string>;
  /** Base64 payload. Percent-encoded (non-base64) data URLs are re-encoded to base64. */
  base64: string;
}

export function parseDataUrl(url: string): DataUrl | undefined {
  if (url.length < 5 || url.slice(0, 5).toLowerCase() !== "data:") return undefined;
  const comma = url.indexOf(",");
  if (comma < 0) return undefined;
  const header = url.slice(5, comma);
  const data = url.slice(comma + 1);
  const parts = header.split(";");
  let isBase64 = false;
  let params: Record<string, string> | undefined;
  // RFC 2397: an empty media type means text/plain;charset=US-ASCII.
  const mime = (parts[0] ?? "").trim().toLowerCase() || "text/plain";
  for (let i = 1; i < parts.length; i++) {
    const p = (parts[i] ?? "").trim();
    if (p.toLowerCase() === "base64") {
      isBase64 = true;
      continue;
    }
    const eq = p.indexOf("=");
    if (eq > 0) (params ??= {})[p.slice(0, eq).toLowerCase()] = p.slice(eq + 1);
  }
  if (!/^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(mime)) return undefined;
  let base64: string;
  if (isBase64) {
    // Kept verbatim: whitespace inside base64 is ignored by decoders, and copying
    // or even scanning megabytes of image data on every record is not free.
    base64 = data;
  } else {
    try {
      base64 = Buffer.from(decodeURIComponent(data), "utf8").toString("base64");
    } catch {
      return undefined;
    }
  }
  return params ? { mime_type: mime, params, base64 } : { mime_type: mime, base64 };
}
