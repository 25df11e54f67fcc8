/**
 * The multipart/form-data encoder for POST /runs/multipart. Encoding a standard
 * format is simple and hot (every batch), so it is written here as a direct
 * Buffer builder; parsing (the collector) uses busboy.
 *
 * `post.{id}` / `patch.{id}` carries the run, `feedback.{id}` a feedback record, `{kind}.{id}.{field}` a large
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
import { holdEncoded, type EncodedRun } from "./encoded-run.js";

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

/**
 * Boundaries: a random part drawn once per process and a counter, so no two
 * bodies share one and none can be guessed from run contents, without asking
 * the system for random bytes on every batch (that call cost as much as
 * encoding a few runs).
 */
const BOUNDARY_PREFIX = `tracepipe-${randomBytes(12).toString("hex")}`;
let boundaries = 0;

/** encodeRun's texts as the UTF-8 bytes encodeMultipart writes, held in a shared slab (for a run held encoded: ops.ts encodedOp). */
export function encodeRunBytes(run: Record<string, unknown>): EncodedRun {
  return holdEncoded(encodeRun(run));
}

/** The run's part and its large fields' own parts, as texts (see the module comment). */
export function encodeRun(run: Record<string, unknown>): { part: string; own?: string[] } {
  const main: Record<string, unknown> = {};
  let own: string[] | undefined;
  // The inlined fields, `,"inputs":{...},"outputs":{...}`, spliced in before the run's closing brace.
  let inlined = "";
  for (const k in run) {
    const v = run[k];
    if (v === undefined) continue;
    if (!LARGE.has(k)) {
      main[k] = v;
      continue;
    }
    const json = JSON.stringify(v);
    if (json === undefined) continue; // a value JSON leaves out (a function): as if absent
    if (json.length <= INLINE_MAX && inlineKeepsText(k, v)) inlined += INLINE_KEY[k]! + json;
    else (own ??= []).push(k, json);
  }
  const head = JSON.stringify(main);
  // `,"inputs":` after the head's fields; `"inputs":` when the head has none.
  const part = inlined === "" ? head : head === "{}" ? `{${inlined.slice(1)}}` : `${head.slice(0, -1)}${inlined}}`;
  return own ? { part, own } : { part };
}

/**
 * The body is written straight into one Buffer: each part is made one string
 * (headers, JSON and the closing line break; attachments stay bytes), the
 * parts' byte sizes are summed, and each is copied in once. One string per
 * part, not per piece: every Buffer.byteLength and write is a call into
 * native code whose fixed cost, over the eight or so pieces of a run's part,
 * was a third of encoding it; concatenating a whole body into one string
 * instead made V8 flatten a tree of hundreds of pieces and then copy it again.
 *
 * JSON.stringify keeps non-ASCII characters as they are, but most parts have
 * none: such a part is written as latin1, which for ASCII gives the same bytes
 * as UTF-8 at a plain copy's cost (UTF-8 encoding was the largest single part
 * of encoding a batch). Whether a part is ASCII comes free from its
 * Content-Length: every character takes at least one UTF-8 byte, only ASCII
 * exactly one.
 */
export function encodeMultipart(ops: readonly Op[]): EncodedBody {
  boundaries = (boundaries + 1) % 2 ** 32;
  const boundary = `${BOUNDARY_PREFIX}${boundaries.toString(16).padStart(8, "0")}`;
  const opening = `--${boundary}\r\nContent-Disposition: `;
  // Parts in body order, each with its size in bytes (a string is ASCII when that equals its length).
  const parts: (string | Uint8Array)[] = [];
  const sizes: number[] = [];
  // Where a part held in a slab starts in it (-1 for the other parts: texts, and bytes written whole).
  const starts: number[] = [];
  let size = 0;
  const text = (t: string, bytes: number) => {
    parts.push(t);
    sizes.push(bytes);
    starts.push(-1);
    size += bytes;
  };
  const bytes = (b: Uint8Array, start = -1, end = b.byteLength) => {
    const n = start < 0 ? end : end - start;
    parts.push(b);
    sizes.push(n);
    starts.push(start);
    size += n;
  };
  /** A JSON part's headers; `chars` decides whether it goes as a file. */
  const jsonHeaders = (name: string, n: number, chars: number, filename?: string) =>
    `${opening}${disposition(name, chars > FILE_PART_CHARS ? filename : undefined)}\r\nContent-Type: application/json\r\nContent-Length: ${n}\r\n\r\n`;
  const jsonPart = (name: string, json: string, filename?: string) => {
    const n = Buffer.byteLength(json);
    const headers = jsonHeaders(name, n, json.length, filename);
    // Names and filenames may hold any character: the headers are measured apart from the JSON.
    text(`${headers}${json}\r\n`, Buffer.byteLength(headers) + n + 2);
  };
  /** A JSON part from a slab's range (bytes, so `chars` is their count: a file past FILE_PART_CHARS bytes). */
  const heldPart = (name: string, held: Buffer, start: number, end: number, filename?: string) => {
    const headers = jsonHeaders(name, end - start, end - start, filename);
    text(headers, Buffer.byteLength(headers));
    bytes(held, start, end);
    text("\r\n", 2);
  };
  for (const op of ops) {
    // An op encoded at hand-over is written from its bytes (reading `run` would decode it).
    const e = op.encoded;
    if (e) {
      const { slab: held, ends, fields } = e;
      heldPart(`${op.kind}.${op.id}`, held, ends[0]!, ends[1]!);
      if (fields)
        for (let i = 0; i < fields.length; i++)
          heldPart(`${op.kind}.${op.id}.${fields[i]}`, held, ends[i + 1]!, ends[i + 2]!, `${fields[i]}.json`);
    } else if (op.kind === "feedback") {
      // LangSmith's multipart feedback part: the whole record, one JSON part.
      jsonPart(`feedback.${op.id}`, JSON.stringify(op.run));
      continue;
    } else {
      const t = encodeRun(op.run);
      jsonPart(`${op.kind}.${op.id}`, t.part);
      const own = t.own;
      if (own) for (let i = 0; i < own.length; i += 2) jsonPart(`${op.kind}.${op.id}.${own[i]}`, own[i + 1]!, `${own[i]}.json`);
    }
    if (op.attachments) {
      for (const [name, [mime, data]] of Object.entries(op.attachments)) {
        const headers = `${opening}${disposition(`attachment.${op.id}.${name}`, name)}\r\nContent-Type: ${mime}\r\nContent-Length: ${data.byteLength}\r\n\r\n`;
        text(headers, Buffer.byteLength(headers));
        bytes(data);
        text("\r\n", 2);
      }
    }
  }
  text(`--${boundary}--\r\n`, boundary.length + 6);
  const body = Buffer.allocUnsafe(size);
  let at = 0;
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (typeof p === "string") body.write(p, at, p.length === sizes[i] ? "latin1" : "utf8");
    else if (starts[i]! >= 0) (p as Buffer).copy(body, at, starts[i], starts[i]! + sizes[i]!);
    else body.set(p, at);
    at += sizes[i]!;
  }
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}
