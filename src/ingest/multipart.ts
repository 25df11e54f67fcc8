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
const CRLF = Buffer.from("\r\n");

export interface EncodedBody {
  body: Buffer;
  contentType: string;
}

function header(boundary: string, name: string, type: string, length: number, filename?: string): Buffer {
  const disp = filename === undefined ? `form-data; name="${name}"` : `form-data; name="${name}"; filename="${filename.replace(/"/g, "%22")}"`;
  return Buffer.from(`--${boundary}\r\nContent-Disposition: ${disp}\r\nContent-Type: ${type}\r\nContent-Length: ${length}\r\n\r\n`);
}

export function encodeMultipart(ops: readonly Op[]): EncodedBody {
  const boundary = `tracepipe-${randomBytes(12).toString("hex")}`;
  const chunks: Buffer[] = [];
  const part = (name: string, type: string, data: Buffer, filename?: string) => {
    chunks.push(header(boundary, name, type, data.length, filename), data, CRLF);
  };
  for (const op of ops) {
    const main: Record<string, unknown> = {};
    for (const k in op.run) if (!LARGE.has(k) && op.run[k] !== undefined) main[k] = op.run[k];
    part(`${op.kind}.${op.id}`, "application/json", Buffer.from(JSON.stringify(main)));
    for (const f of LARGE_FIELDS) {
      const v = op.run[f];
      if (v !== undefined) part(`${op.kind}.${op.id}.${f}`, "application/json", Buffer.from(JSON.stringify(v)));
    }
    if (op.attachments) {
      for (const [name, [mime, data]] of Object.entries(op.attachments)) part(`attachment.${op.id}.${name}`, mime, Buffer.from(data.buffer, data.byteOffset, data.byteLength), name);
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}
