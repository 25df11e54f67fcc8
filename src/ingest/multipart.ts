/**
 * The multipart/form-data encoder for POST /runs/multipart. Encoding a standard
 * format is simple and hot (every batch), so it is written here as a direct
 * Buffer builder; parsing (the collector) uses busboy.
 *
 * `post.{id}` / `patch.{id}` carries the run, `{kind}.{id}.{field}` a large
 * field (inputs, outputs, events, extra, error, serialized) of more than
 * INLINE_MAX characters of JSON, and `attachment.{id}.{name}` an attachment.
 * Every part has a Content-Type and a Content-Length.
 *
 * Why small large fields ride in the run's own part: a part's headers are
 * ~190 bytes, a third of a typical 600-byte message list, and each part is
 * one more JSON.stringify and header to build; with one part per field they
 * were a third of the bytes of an LLM run. A field gets its own part when it
 * is big, where the collector's gain is real (it stores a part's text as
 * received instead of serializing the value again). Inline or not, the
 * collector stores the same text: only fields whose parsed and checked value
 * serializes back to the same text are inlined (records keep their key
 * order; the checked `extra` and `events` may not, unless `extra` holds
 * nothing but `metadata` and `events` is empty).
 */
import { randomBytes } from "node:crypto";
import type { Op } from "./ops.js";

export const LARGE_FIELDS = ["inputs", "outputs", "events", "extra", "error", "serialized"] as const;
const LARGE = new Set<string>(LARGE_FIELDS);
/** `,"field":` of each large field, as it is spliced into the run's part (field names need no escaping). */
const INLINE_KEY: Record<string, string> = Object.fromEntries(LARGE_FIELDS.map((k) => [k, `,"${k}":`]));
/**
 * Longest JSON of a large field sent inside the run's part. Under 1024 so
 * that nesting one level deeper (inside the run) keeps such a field far from
 * the collector's default JSON depth limit of 512: a field this short nests
 * at most 500 levels.
 */
export const INLINE_MAX = 1000;

/** Whether the collector stores `value` as the text it received, were it inside the run's part (see the module comment). */
function inlineKeepsText(field: string, value: unknown): boolean {
  if (field === "events") return Array.isArray(value) && value.length === 0;
  if (field !== "extra") return true;
  if (typeof value !== "object" || value === null) return true;
  let n = 0;
  for (const k in value) if (k !== "metadata" || n++) return false;
  return true;
}

export interface EncodedBody {
  body: Buffer;
  contentType: string;
}

function disposition(name: string, filename?: string): string {
  return filename === undefined ? `form-data; name="${name}"` : `form-data; name="${name}"; filename="${filename.replace(/"/g, "%22")}"`;
}

/**
 * A JSON part longer than this many characters is sent as a file (with a
 * filename, as FormData sends a Blob). Multipart readers such as busboy
 * gather a plain field whole, in copies, before handing it over, and stream a
 * file: tracepipe's collector reads a 60 MB file part in about two thirds of
 * the memory a field costs it (benchmarks/collector-memory.ts).
 */
export const FILE_PART_CHARS = 1024 * 1024;

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
 * The body is written straight into one Buffer: the parts' texts are gathered
 * (headers and JSON, attachments as bytes), their sizes summed, and each is
 * copied in once. Concatenating them into one string first made V8 flatten a
 * tree of hundreds of pieces into a new string and then copy that again,
 * the largest cost of encoding after JSON.stringify itself.
 *
 * JSON.stringify keeps non-ASCII characters as they are, but most batches
 * have none: then each text is written as latin1, which for ASCII gives the
 * same bytes as UTF-8 at a plain copy's cost (UTF-8 encoding was the largest
 * single part of encoding a batch). Whether the text is all ASCII comes free
 * from the Content-Length of each part (every character takes at least one
 * UTF-8 byte, only ASCII exactly one) and a look at the ids and attachment
 * names that go into part headers.
 */
export function encodeMultipart(ops: readonly Op[]): EncodedBody {
  boundaries = (boundaries + 1) % 2 ** 32;
  const boundary = `${BOUNDARY_PREFIX}${boundaries.toString(16).padStart(8, "0")}`;
  // Texts and byte chunks in body order; `size` counts their bytes when every text is ASCII.
  const pieces: (string | Uint8Array)[] = [];
  let size = 0;
  let ascii = true;
  const add = (t: string) => {
    pieces.push(t);
    size += t.length;
  };
  const jsonPart = (name: string, json: string, filename?: string) => {
    const n = Buffer.byteLength(json);
    if (n !== json.length) ascii = false;
    add(`--${boundary}\r\nContent-Disposition: ${disposition(name, json.length > FILE_PART_CHARS ? filename : undefined)}\r\nContent-Type: application/json\r\nContent-Length: ${n}\r\n\r\n`);
    add(json);
    add("\r\n");
  };
  // The run's part is written as its pieces (the head without its closing brace, then each inlined
  // field's name and JSON): joining them into one string would only be copied again into the body.
  const runPart: string[] = [];
  for (const op of ops) {
    if (NON_ASCII.test(op.id)) ascii = false;
    const run = op.run;
    const main: Record<string, unknown> = {};
    let own: string[] | undefined;
    runPart.length = 0;
    for (const k in run) {
      const v = run[k];
      if (v === undefined) continue;
      if (!LARGE.has(k)) {
        main[k] = v;
        continue;
      }
      const json = JSON.stringify(v);
      if (json === undefined) continue; // a value JSON leaves out (a function): as if absent
      if (json.length <= INLINE_MAX && inlineKeepsText(k, v)) runPart.push(INLINE_KEY[k]!, json);
      else (own ??= []).push(k, json);
    }
    // The run's fields, then the inlined ones before its closing brace.
    const head = JSON.stringify(main);
    if (runPart.length === 0) jsonPart(`${op.kind}.${op.id}`, head);
    else {
      // `,"inputs":` after the head's fields; `"inputs":` when the head has none.
      if (head === "{}") runPart[0] = runPart[0]!.slice(1);
      const first = head.slice(0, -1);
      let n = first.length + 1;
      let chars = n;
      for (const t of runPart) {
        n += Buffer.byteLength(t);
        chars += t.length;
      }
      if (n !== chars) ascii = false;
      add(`--${boundary}\r\nContent-Disposition: ${disposition(`${op.kind}.${op.id}`)}\r\nContent-Type: application/json\r\nContent-Length: ${n}\r\n\r\n`);
      add(first);
      for (const t of runPart) add(t);
      add("}\r\n");
    }
    if (own) for (let i = 0; i < own.length; i += 2) jsonPart(`${op.kind}.${op.id}.${own[i]}`, own[i + 1]!, `${own[i]}.json`);
    if (op.attachments) {
      for (const [name, [mime, data]] of Object.entries(op.attachments)) {
        if (NON_ASCII.test(name) || NON_ASCII.test(mime)) ascii = false;
        add(`--${boundary}\r\nContent-Disposition: ${disposition(`attachment.${op.id}.${name}`, name)}\r\nContent-Type: ${mime}\r\nContent-Length: ${data.byteLength}\r\n\r\n`);
        pieces.push(data);
        size += data.byteLength;
        add("\r\n");
      }
    }
  }
  add(`--${boundary}--\r\n`);
  if (!ascii) {
    size = 0;
    for (const p of pieces) size += typeof p === "string" ? Buffer.byteLength(p) : p.byteLength;
  }
  const body = Buffer.allocUnsafe(size);
  let at = 0;
  for (const p of pieces) {
    if (typeof p !== "string") {
      body.set(p, at);
      at += p.byteLength;
    } else at += body.write(p, at, ascii ? "latin1" : "utf8");
  }
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}
