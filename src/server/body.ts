/** Request bodies: bounded, gunzipped when `Content-Encoding: gzip`. */
import type { IncomingMessage } from "node:http";
import { createGunzip } from "node:zlib";
import type { Readable } from "node:stream";
import { HttpError } from "./http.js";

/** The request as a stream of decoded bytes, failing with 413 past `maxBytes` (raw or decoded). */
export function decodedStream(req: IncomingMessage, maxBytes: number): Readable {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBytes) throw new HttpError(413, `request body of ${declared} bytes exceeds the limit of ${maxBytes} bytes`);
  const enc = String(req.headers["content-encoding"] ?? "identity").toLowerCase();
  let raw = 0;
  req.on("data", (c: Buffer) => {
    raw += c.length;
    if (raw > maxBytes) req.destroy(new HttpError(413, `request body exceeds the limit of ${maxBytes} bytes`));
  });
  if (enc === "identity" || enc === "") return req;
  if (enc !== "gzip") throw new HttpError(415, `unsupported Content-Encoding ${JSON.stringify(enc)}; use gzip or none`);
  const gunzip = createGunzip();
  let decoded = 0;
  gunzip.on("data", (c: Buffer) => {
    decoded += c.length;
    if (decoded > maxBytes) gunzip.destroy(new HttpError(413, `decompressed body exceeds the limit of ${maxBytes} bytes`));
  });
  req.on("error", (e) => gunzip.destroy(e));
  req.pipe(gunzip);
  return gunzip;
}

export async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  try {
    for await (const c of stream) chunks.push(c as Buffer);
  } catch (err) {
    if (err instanceof HttpError) throw err;
    if ((err as NodeJS.ErrnoException)?.code === "Z_DATA_ERROR" || (err as Error)?.message?.includes("incorrect header check")) throw new HttpError(400, "body is not valid gzip");
    throw new HttpError(400, `request body could not be read: ${(err as Error).message}`);
  }
  return Buffer.concat(chunks);
}

export function parseJson(buf: Buffer, what = "body"): unknown {
  try {
    return JSON.parse(buf.toString("utf8"));
  } catch (err) {
    throw new HttpError(400, `malformed JSON in ${what}: ${(err as Error).message}`);
  }
}
