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

/**
 * JSON parts are gathered as strings and turned into one Buffer per run of
 * text (a Buffer per part made this the hottest function of delivery); only
 * attachments, which are already bytes, break the text up.
 */
/**
 * The bytes of a run of text. JSON.stringify keeps non-ASCII characters as
 * they are, but most batches have none, and for pure ASCII latin1 gives the
 * same bytes at a plain copy's cost, while UTF-8 encoding was the largest
 * single part of encoding a batch. Telling the two apart is one quick count:
 * every character takes at least one UTF-8 byte, and only ASCII exactly one.
 */
function textBytes(text: string): Buffer {
  return Buffer.from(text, Buffer.byteLength(text) === text.length ? "latin1" : "utf8");
}

/**
 * Boundaries: a random part drawn once per process and a counter, so no two
 * bodies share one and none can be guessed from run contents, without asking
 * the system for random bytes on every batch (that call cost as much as
 * encoding a few runs).
 */
const BOUNDARY_PREFIX = `tracepipe-${randomBytes(12).toString("hex")}`;
let boundaries = 0;

export function encodeMultipart(ops: readonly Op[]): EncodedBody {
  boundaries = (boundaries + 1) % 2 ** 32;
  const boundary = `${BOUNDARY_PREFIX}${boundaries.toString(16).padStart(8, "0")}`;
  const chunks: Buffer[] = [];
  let text = "";
  const jsonPart = (name: string, json: string) => {
    text += `--${boundary}\r\nContent-Disposition: ${disposition(name)}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}\r\n`;
  };
  for (const op of ops) {
    const main: Record<string, unknown> = {};
    for (const k in op.run) if (!LARGE.has(k) && op.run[k] !== undefined) main[k] = op.run[k];
    jsonPart(`${op.kind}.${op.id}`, JSON.stringify(main));
    for (const f of LARGE_FIELDS) {
      const v = op.run[f];
      if (v !== undefined) jsonPart(`${op.kind}.${op.id}.${f}`, JSON.stringify(v));
    }
    if (op.attachments) {
      for (const [name, [mime, data]] of Object.entries(op.attachments)) {
        text += `--${boundary}\r\nContent-Disposition: ${disposition(`attachment.${op.id}.${name}`, name)}\r\nContent-Type: ${mime}\r\nContent-Length: ${data.byteLength}\r\n\r\n`;
        chunks.push(textBytes(text), Buffer.from(data.buffer, data.byteOffset, data.byteLength));
        text = "\r\n";
      }
    }
  }
  text += `--${boundary}--\r\n`;
  chunks.push(textBytes(text));
  return { body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}
