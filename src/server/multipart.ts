/**
 * POST /runs/multipart bodies, parsed with busboy (never split by hand). Part names:
 *   post.{id} / patch.{id}                 the run without its large fields
 *   post.{id}.{field} / patch.{id}.{field}  inputs, outputs, events, extra, error, serialized
 *   attachment.{id}.{name}                 an attachment, in its own content type
 *   feedback.{id}                          a feedback record (LangSmith's), stored beside its run
 * Everything is collected first and validated as a whole; nothing is written
 * until the request has been read completely (see routes/ingest.ts).
 *
 * Bounds (docs/collector-api.md "Limits"): at most `maxParts` parts and `maxRuns`
 * runs (413 past either, as soon as the stream shows it); each JSON part's
 * nesting is checked against `maxJsonDepth` by the route, before validation. A part naming a run id that is not a
 * UUID is a problem of the request (422 with the part's name as `loc`); a part
 * whose name or JSON cannot be read at all is a 400.
 *
 * Memory: a large JSON part sent as a file (with a filename, as
 * FormData Blobs are) is decoded to text chunk by chunk, so its bytes are not
 * held beside its text (FilePart); one sent as a plain field arrives from
 * busboy as a string. Before a part of GC_PART_CHARS or more is parsed, the garbage its
 * reading left is collected (gc.ts), so text and parsed value are what it holds.
 */
import busboy from "busboy";
import { createHash } from "node:crypto";
import { isUtf8 } from "node:buffer";
import type { IncomingHttpHeaders } from "node:http";
import type { Readable } from "node:stream";
import { regexes } from "zod";
import { HttpError } from "./http-error.js";
import { parseJson } from "./body.js";
import { collectGarbage, GC_PART_CHARS } from "./gc.js";
import { FilePart, readFilePart } from "./file-part.js";
import type { IssueList } from "./issues.js";
import { RAW_FIELDS, type RawField, type RawText } from "../store/validate.js";
import { put } from "../internal/obj.js";

export const LARGE_FIELDS = new Set(["inputs", "outputs", "events", "extra", "error", "serialized"]);
/** z.uuid()'s pattern, the one the run schemas hold ids to. */
const UUID = regexes.uuid();
const RAW = new Set<string>(RAW_FIELDS);

export interface MultipartLimits {
  /** Largest single part (the body limit). */
  maxPartBytes: number;
  maxParts: number;
  /** Most runs: distinct post.{id} plus distinct patch.{id}. */
  maxRuns: number;
}

export interface ParsedMultipart {
  post: Map<string, Record<string, unknown>>;
  patch: Map<string, Record<string, unknown>>;
  attachments: { runId: string; name: string; contentType: string; data: Buffer; sha256: string }[];
  /** Feedback records by part name (`feedback.{id}`), in body order. */
  feedback: Map<string, Record<string, unknown>>;
  parts: number;
  /** Every JSON document read, by part name: their depth is checked (sliced) before anything recursive sees them. */
  documents: { part: string; value: unknown }[];
  /** The JSON text of each `{kind}.{id}.{field}` part that set a large field, by the record of `post` or `patch` it went into: the store writes it as is. */
  raw: Map<Record<string, unknown>, RawText>;
}

/** A character past latin1: busboy decoded the part by a charset it declared, not as bytes. */
const PAST_LATIN1 = /[\u0100-\uffff]/;

/**
 * A part busboy read as a field (no filename), as it decoded it. Why fields
 * are read as latin1 (busboy's defCharset): the Python langsmith SDK sends
 * attachments as parts with a Content-Type and no filename, so they arrive as
 * fields, and decoded as UTF-8 (busboy's default) every byte sequence that is
 * not UTF-8 (any image) became a replacement character. As latin1, a part
 * that declares no charset arrives with one character per byte: its bytes,
 * exactly. A part that declares one is decoded by it.
 */
class FieldValue {
  constructor(readonly value: string) {}

  /** An attachment's bytes: exact for a part without a charset (and a latin1 one); a declared Unicode charset's text as UTF-8. */
  bytes(): Buffer {
    return Buffer.from(this.value, PAST_LATIN1.test(this.value) ? "utf8" : "latin1");
  }

  /**
   * A JSON part's text. JSON is UTF-8 (RFC 8259): ASCII reads the same either
   * way (the usual part, checked by one native count); other bytes read as
   * latin1 are decoded as the UTF-8 they are. Text a declared charset already
   * decoded is kept: it has characters past latin1, or its characters as bytes
   * are not UTF-8 (a lone é, U+00E9, is the byte E9).
   */
  text(): string {
    const v = this.value;
    if (Buffer.byteLength(v, "utf8") === v.length || PAST_LATIN1.test(v)) return v;
    const bytes = Buffer.from(v, "latin1");
    return isUtf8(bytes) ? bytes.toString("utf8") : v;
  }
}

class PartParser {
  readonly out: ParsedMultipart = {
    post: new Map(),
    patch: new Map(),
    attachments: [],
    feedback: new Map(),
    parts: 0,
    documents: [],
    raw: new Map(),
  };

  constructor(
    private readonly limits: MultipartLimits,
    private readonly issues: IssueList,
  ) {}

  private uuid(id: string, part: string): boolean {
    if (UUID.test(id)) return true;
    this.issues.push({ loc: [part], msg: `run id ${JSON.stringify(id.slice(0, 80))} is not a UUID`, type: "uuid_parsing" });
    return false;
  }

  private records(): number {
    return this.out.post.size + this.out.patch.size + this.out.feedback.size;
  }

  /** A `feedback.{id}` part: one JSON object, checked with the runs (its id is the part's when it names none). */
  private feedback(name: string, id: string, data: Buffer | string | FieldValue): void {
    if (!id) throw new HttpError(400, `part ${JSON.stringify(name)} has no feedback id`);
    if (!this.uuid(id, name)) return;
    if (!this.out.feedback.has(name) && this.records() >= this.limits.maxRuns) {
      throw new HttpError(
        413,
        `more than ${this.limits.maxRuns} records in one request (GET /info batch_ingest_config.size_limit); split the batch`,
      );
    }
    const text = data instanceof FieldValue ? data.text() : typeof data === "string" ? data : data.toString("utf8");
    const value = parseJson(text, () => `part ${JSON.stringify(name)}`);
    if (typeof value !== "object" || value === null || Array.isArray(value))
      throw new HttpError(400, `part ${JSON.stringify(name)} must be a JSON object`);
    const body = value as Record<string, unknown>;
    if (body.id !== undefined && body.id !== id)
      throw new HttpError(400, `part ${JSON.stringify(name)} carries id ${JSON.stringify(body.id)}, not ${JSON.stringify(id)}`);
    this.out.documents.push({ part: name, value });
    this.out.feedback.set(name, { ...body, id });
  }

  accept(name: string, data: Buffer | string | FieldValue, contentType: string): void {
    const out = this.out;
    out.parts++;
    const dot = name.indexOf(".");
    const kind = dot < 0 ? name : name.slice(0, dot);
    const rest = dot < 0 ? "" : name.slice(dot + 1);
    if (kind === "attachment") {
      const d = rest.indexOf(".");
      const runId = d < 0 ? rest : rest.slice(0, d);
      const attName = d < 0 ? "" : rest.slice(d + 1);
      if (!runId) throw new HttpError(400, `part ${JSON.stringify(name)} has no run id`);
      if (!attName) throw new HttpError(400, `part ${JSON.stringify(name)} has no attachment name`);
      if (!this.uuid(runId, name)) return;
      const bytes = data instanceof FieldValue ? data.bytes() : typeof data === "string" ? Buffer.from(data, "utf8") : data;
      out.attachments.push({ runId, name: attName, contentType, data: bytes, sha256: createHash("sha256").update(bytes).digest("hex") });
      return;
    }
    if (kind === "feedback") return this.feedback(name, rest, data);
    if (kind !== "post" && kind !== "patch")
      throw new HttpError(
        400,
        `unknown part ${JSON.stringify(name)}; expected post.{id}, patch.{id}, post.{id}.{field}, attachment.{id}.{name} or feedback.{id}`,
      );
    const d = rest.indexOf(".");
    const id = d < 0 ? rest : rest.slice(0, d);
    const field = d < 0 ? undefined : rest.slice(d + 1);
    if (!id) throw new HttpError(400, `part ${JSON.stringify(name)} has no run id`);
    if (field !== undefined && !LARGE_FIELDS.has(field))
      throw new HttpError(
        400,
        `part ${JSON.stringify(name)}: unknown field ${JSON.stringify(field)}; expected one of ${[...LARGE_FIELDS].join(", ")}`,
      );
    const map = kind === "post" ? out.post : out.patch;
    let run = map.get(id);
    if (!run) {
      // Only ids that passed are in the map: a run's other parts need no second look.
      if (!this.uuid(id, name)) return;
      if (this.records() >= this.limits.maxRuns) {
        throw new HttpError(
          413,
          `more than ${this.limits.maxRuns} runs in one request (GET /info batch_ingest_config.size_limit); split the batch`,
        );
      }
      map.set(id, (run = { id }));
    }
    // One string per part: parsed here, and (for a large field) kept as the text the store writes.
    const text = data instanceof FieldValue ? data.text() : typeof data === "string" ? data : data.toString("utf8");
    if (text.length >= GC_PART_CHARS) collectGarbage();
    const value = parseJson(text, () => `part ${JSON.stringify(name)}`);
    if (typeof value === "object" && value !== null) out.documents.push({ part: name, value });
    if (field === undefined) {
      if (typeof value !== "object" || value === null || Array.isArray(value))
        throw new HttpError(400, `part ${JSON.stringify(name)} must be a JSON object`);
      const body = value as Record<string, unknown>;
      if (body.id !== undefined && body.id !== id)
        throw new HttpError(400, `part ${JSON.stringify(name)} carries id ${JSON.stringify(body.id)}, not ${JSON.stringify(id)}`);
      for (const k in body) if (run[k] === undefined || !LARGE_FIELDS.has(k)) put(run, k, body[k]);
    } else {
      run[field] = value;
      if (RAW.has(field)) {
        // Keyed by the record, not its part's name: no name is built and hashed per part.
        let raw = out.raw.get(run);
        if (!raw) out.raw.set(run, (raw = {}));
        raw[field as RawField] = text;
      }
    }
  }
}

export function parseMultipart(
  body: Readable,
  headers: IncomingHttpHeaders,
  limits: MultipartLimits,
  issues: IssueList,
): Promise<ParsedMultipart> {
  return new Promise((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      const max = limits.maxParts;
      // Fields without a charset arrive as latin1, one character per byte: their bytes, exactly (see FieldValue).
      bb = busboy({
        headers,
        defCharset: "latin1",
        // A part's filename is never used: busboy need not cut each one to its base name.
        preservePath: true,
        limits: { fieldSize: limits.maxPartBytes, fileSize: limits.maxPartBytes, parts: max, fields: max, files: max },
      });
    } catch (err) {
      reject(new HttpError(400, `not a multipart/form-data request: ${(err as Error).message}`));
      return;
    }
    const parser = new PartParser(limits, issues);
    let failed = false;
    const fail = (err: unknown) => {
      if (failed) return;
      failed = true;
      body.unpipe(bb);
      body.resume();
      reject(err instanceof HttpError ? err : new HttpError(400, `malformed multipart body: ${(err as Error)?.message ?? String(err)}`));
    };
    const tooMany = () => fail(new HttpError(413, `more than ${limits.maxParts} parts in one request; split the batch`));
    bb.on("partsLimit", tooMany);
    bb.on("fieldsLimit", tooMany);
    bb.on("filesLimit", tooMany);
    // busboy hands over a part whose Content-Disposition names none (or only as `name*`) with no name at all.
    const unnamed = () => fail(new HttpError(400, 'a part without a name; each part needs Content-Disposition: form-data; name="..."'));
    bb.on("field", (name, value, info) => {
      if (failed) return;
      if (typeof name !== "string") return unnamed();
      if (info.valueTruncated) return fail(new HttpError(413, `part ${JSON.stringify(name)} exceeds ${limits.maxPartBytes} bytes`));
      try {
        parser.accept(name, new FieldValue(value), info.mimeType);
      } catch (err) {
        fail(err);
      }
    });
    bb.on("file", (name, stream, info) => {
      if (typeof name !== "string") {
        // Thrown here, it would be thrown out of busboy's write and end the process.
        stream.resume();
        return unnamed();
      }
      const part = new FilePart(!name.startsWith("attachment."));
      // A part past the limit: busboy marks its stream truncated (and hands over nothing more of it) before it
      // ends or fails. Read there rather than from a 'limit' listener, one listener fewer per part.
      const tooLarge = () => new HttpError(413, `part ${JSON.stringify(name)} exceeds ${limits.maxPartBytes} bytes`);
      readFilePart(
        stream,
        (c) => {
          if (!failed) part.add(c);
        },
        () => {
          if (failed) return;
          if (stream.truncated) return fail(tooLarge());
          try {
            parser.accept(name, part.take(), info.mimeType);
          } catch (err) {
            fail(err);
          }
        },
      );
      // busboy destroys the part's stream with its own error (a body that ends inside the part): without a listener that error would be thrown.
      stream.on("error", (err) => fail(stream.truncated ? tooLarge() : err));
    });
    bb.on("error", fail);
    bb.on("close", () => {
      if (!failed) resolve(parser.out);
    });
    body.on("error", fail);
    body.pipe(bb);
  });
}
