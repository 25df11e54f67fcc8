/**
 * The multipart/form-data encoder for POST /runs/multipart. Encoding a standard
 * format is simple and hot (every batch), so it is written here as a direct
 * Buffer builder; parsing (the collector) uses busboy.
 *
 * One part per field: `post.{id}` / `patch.{id}` carries the run without its
 * large fields, `{kind}.{id}.{field}` carries inputs, outputs, events, extra,
 * error and serialized, and `attachment.{id}.{name}` an attachment. Every part
 * has a Content-Type and a Content-Length.
 */
import { randomBytes } from "node:crypto";
import type { Op } from "./ops.js";

export const LARGE_FIELDS = ["inputs", "outputs", "events", "extra", "error", "serialized"] as const;
const LARGE = new Set<string>(LARGE_FIELDS);

export interface EncodedBody {
  body: Buffer;
  contentType: string;
}

function disposition(name: string, filename?: string): string {
  return filename === undefined ? `form-data; name="${name}"` : `form-data; name="${name}"; filename="${filename.replace(/"/g, "%22")}"`;
}

/** A character past ASCII (code point 128 or more). */
const NON_ASCII = /[\u0080-\uffff]/;

/**
 * Boundaries: a random part drawn once per process and a counter, so no two
 * bodies share one and none can be guessed from run contents, without asking
 * the system for random bytes on every batch (that call cost as much as
 * encoding a few runs).
 */
const BOUNDARY_PREFIX = `tracepipe-${randomBytes(12).toString("hex")}`;
let boundaries = 0;

/**
 * JSON parts are gathered as strings and turned into one Buffer per run of
 * text (a Buffer per part made this the hottest function of delivery); only
 * attachments, which are already bytes, break the text up.
 *
 * JSON.stringify keeps non-ASCII characters as they are, but most batches
 * have none: then latin1 gives the same bytes as UTF-8 at a plain copy's cost
 * (UTF-8 encoding was the largest single part of encoding a batch). Whether
 * the text is all ASCII comes free from the Content-Length of each part
 * (every character takes at least one UTF-8 byte, only ASCII exactly one)
 * and a look at the ids and attachment names that go into part headers.
 */
export function encodeMultipart(ops: readonly Op[]): EncodedBody {
  boundaries = (boundaries + 1) % 2 ** 32;
  const boundary = `${BOUNDARY_PREFIX}${boundaries.toString(16).padStart(8, "0")}`;
  const chunks: Buffer[] = [];
  let text = "";
  let ascii = true;
  const bytes = (t: string) => Buffer.from(t, ascii ? "latin1" : "utf8");
  const jsonPart = (name: string, json: string) => {
    const n = Buffer.byteLength(json);
    if (n !== json.length) ascii = false;
    text += `--${boundary}\r\nContent-Disposition: ${disposition(name)}\r\nContent-Type: application/json\r\nContent-Length: ${n}\r\n\r\n${json}\r\n`;
  };
  for (const op of ops) {
    if (NON_ASCII.test(op.id)) ascii = false;
    const main: Record<string, unknown> = {};
    for (const k in op.run) if (!LARGE.has(k) && op.run[k] !== undefined) main[k] = op.run[k];
    jsonPart(`${op.kind}.${op.id}`, JSON.stringify(main));
    for (const f of LARGE_FIELDS) {
      const v = op.run[f];
      if (v !== undefined) jsonPart(`${op.kind}.${op.id}.${f}`, JSON.stringify(v));
    }
    if (op.attachments) {
      for (const [name, [mime, data]] of Object.entries(op.attachments)) {
        if (NON_ASCII.test(name) || NON_ASCII.test(mime)) ascii = false;
        text += `--${boundary}\r\nContent-Disposition: ${disposition(`attachment.${op.id}.${name}`, name)}\r\nContent-Type: ${mime}\r\nContent-Length: ${data.byteLength}\r\n\r\n`;
        chunks.push(bytes(text), Buffer.from(data.buffer, data.byteOffset, data.byteLength));
        text = "\r\n";
      }
    }
  }
  text += `--${boundary}--\r\n`;
  chunks.push(bytes(text));
  return { body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}
