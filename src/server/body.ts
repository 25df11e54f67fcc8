/**
 * Request bodies: bounded, gunzipped when `Content-Encoding: gzip`, counted,
 * and paused at the large-body size until admitted (middleware/body-admission.ts).
 */
import type { IncomingMessage } from "node:http";
import { createGunzip } from "node:zlib";
import { Transform, type Readable, type TransformCallback } from "node:stream";
import { HttpError } from "./http-error.js";
import { depthIssue, tooDeep } from "./depth.js";
import type { Loc } from "../internal/types.js";

/** The decoded body as it streams, with the count of decoded bytes so far. */
export class BodyStream extends Transform {
  bytes = 0;

  constructor(
    private readonly largeBytes: number,
    private readonly admit: () => Promise<void>,
    private readonly decoded: (total: number) => void = () => undefined,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.bytes += chunk.length;
    this.decoded(this.bytes);
    if (this.bytes < this.largeBytes) return cb(null, chunk);
    this.admit().then(
      () => cb(null, chunk),
      (err: Error) => cb(err),
    );
  }
}

export interface BodyOptions {
  maxBytes: number;
  /** Decoded size from which `admit` must have resolved before more is read. */
  largeBytes: number;
  /** Takes (once) a large-body slot for this request. */
  admit: () => Promise<void>;
  /** Told the decoded byte count so far, after each chunk. */
  decoded?: (total: number) => void;
}

/** The request as a stream of decoded bytes, failing with 413 past `maxBytes` (raw or decoded). */
export function decodedStream(req: IncomingMessage, o: BodyOptions): BodyStream {
  const { maxBytes } = o;
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBytes)
    throw new HttpError(413, `request body of ${declared} bytes exceeds the limit of ${maxBytes} bytes`);
  const enc = String(req.headers["content-encoding"] ?? "identity").toLowerCase();
  if (enc !== "identity" && enc !== "" && enc !== "gzip") {
    // LangSmith SDKs compress with zstd when a server's GET /info allows it; this one says it does not.
    const hint = enc === "zstd" ? " (LangSmith SDKs: set LANGSMITH_DISABLE_RUN_COMPRESSION=true)" : "";
    throw new HttpError(415, `unsupported Content-Encoding ${JSON.stringify(enc)}; use gzip or none${hint}`);
  }
  // A body declared large waits for its slot before its first byte is read.
  const out = new BodyStream(Number.isFinite(declared) && declared >= o.largeBytes ? 0 : o.largeBytes, o.admit, o.decoded);
  let raw = 0;
  req.on("data", (c: Buffer) => {
    raw += c.length;
    if (raw > maxBytes) req.destroy(new HttpError(413, `request body exceeds the limit of ${maxBytes} bytes`));
  });
  req.on("error", (e) => out.destroy(e));
  req.on("aborted", () => out.destroy(new HttpError(400, "request aborted")));
  if (enc === "gzip") {
    const gunzip = createGunzip();
    let decoded = 0;
    gunzip.on("data", (c: Buffer) => {
      decoded += c.length;
      if (decoded > maxBytes) gunzip.destroy(new HttpError(413, `decompressed body exceeds the limit of ${maxBytes} bytes`));
    });
    gunzip.on("error", (e) => out.destroy(e));
    req.pipe(gunzip).pipe(out);
  } else {
    req.pipe(out);
  }
  return out;
}

export async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  try {
    for await (const c of stream) chunks.push(c as Buffer);
  } catch (err) {
    throw readError(err);
  }
  return Buffer.concat(chunks);
}

/** A failure while reading a body, as the status it deserves. */
export function readError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  if ((err as NodeJS.ErrnoException)?.code === "Z_DATA_ERROR" || (err as Error)?.message?.includes("incorrect header check"))
    return new HttpError(400, "body is not valid gzip");
  return new HttpError(400, `request body could not be read: ${(err as Error)?.message ?? String(err)}`);
}

/** JSON text to a value; malformed JSON is a 400 naming `what` (a function when naming it costs something, called only then). */
export function parseJson(text: Buffer | string, what: string | (() => string) = "body"): unknown {
  try {
    return JSON.parse(typeof text === "string" ? text : text.toString("utf8"));
  } catch (err) {
    throw new HttpError(400, `malformed JSON in ${typeof what === "function" ? what() : what}: ${(err as Error).message}`);
  }
}

/** parseJson, then nesting past `maxDepth` is a 422 whose `loc` points into the document (after `prefix`). */
export async function parseBoundedJson(text: Buffer | string, maxDepth: number, what = "body", prefix: Loc = []): Promise<unknown> {
  const v = parseJson(text, what);
  const deep = await tooDeep(v, maxDepth);
  if (deep) throw new HttpError(422, [depthIssue([...prefix, ...deep], maxDepth)]);
  return v;
}
