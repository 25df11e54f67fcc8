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
import type { EncodedRun, Op } from "./ops.js";

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
 * Whether a string is all ASCII (then latin1 writes the same bytes as UTF-8
 * at a plain copy's cost): every character takes at least one UTF-8 byte,
 * only ASCII exactly one. Buffer.byteLength scans in native code several
 * times faster than a regular expression looking for a character past ASCII
 * (0.3 against 1.4-2 µs on a 2 KB run).
 */
const isAscii = (t: string) => Buffer.byteLength(t) === t.length;

/**
 * Boundaries: a random part drawn once per process and a counter, so no two
 * bodies share one and none can be guessed from run contents, without asking
 * the system for random bytes on every batch (that call cost as much as
 * encoding a few runs).
 */
const BOUNDARY_PREFIX = `tracepipe-${randomBytes(12).toString("hex")}`;
let boundaries = 0;

/** encodeRun's texts as the UTF-8 bytes encodeMultipart writes (for a run held encoded: ops.ts encodedOp). */
export function encodeRunBytes(run: Record<string, unknown>): EncodedRun {
  const { part, own } = encodeRun(run);
  const bytes = (t: string) => Buffer.from(t, isAscii(t) ? "latin1" : "utf8");
  if (!own) return { part: bytes(part) };
  const ownBytes: (string | Buffer)[] = [];
  for (let i = 0; i < own.length; i += 2) ownBytes.push(own[i]!, bytes(own[i + 1]!));
  return { part: bytes(part), own: ownBytes };
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
  let size = 0;
  const text = (t: string, bytes: number) => {
    parts.push(t);
    sizes.push(bytes);
    size += bytes;
  };
  const bytes = (b: Uint8Array) => {
    parts.push(b);
    sizes.push(b.byteLength);
    size += b.byteLength;
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
  const bytesPart = (name: string, json: Buffer, filename?: string) => {
    const headers = jsonHeaders(name, json.length, json.length, filename);
    text(headers, Buffer.byteLength(headers));
    bytes(json);
    text("\r\n", 2);
  };
  for (const op of ops) {
    // An op encoded at hand-over is written from its bytes (reading `run` would decode it).
    const e = op.encoded;
    if (e) {
      bytesPart(`${op.kind}.${op.id}`, e.part);
      const own = e.own;
      if (own) for (let i = 0; i < own.length; i += 2) bytesPart(`${op.kind}.${op.id}.${own[i] as string}`, own[i + 1] as Buffer, `${own[i] as string}.json`);
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
    if (typeof p !== "string") body.set(p, at);
    else body.write(p, at, p.length === sizes[i] ? "latin1" : "utf8");
    at += sizes[i]!;
  }
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}
