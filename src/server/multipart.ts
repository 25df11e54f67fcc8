/**
 * POST /runs/multipart bodies, parsed with busboy (never split by hand). Part names:
 *   post.{id} / patch.{id}                 the run without its large fields
 *   post.{id}.{field} / patch.{id}.{field}  inputs, outputs, events, extra, error, serialized
 *   attachment.{id}.{name}                 an attachment, in its own content type
 * Everything is collected first and validated as a whole; nothing is written
 * until the request has been read completely (see routes/ingest.ts).
 */
import busboy from "busboy";
import { createHash } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import type { Readable } from "node:stream";
import { HttpError } from "./http.js";

export const LARGE_FIELDS = new Set(["inputs", "outputs", "events", "extra", "error", "serialized"]);
const UUIDISH = /^[0-9a-fA-F-]{8,64}$/;

export interface ParsedMultipart {
  post: Map<string, Record<string, unknown>>;
  patch: Map<string, Record<string, unknown>>;
  attachments: { runId: string; name: string; contentType: string; data: Buffer; sha256: string }[];
  parts: number;
}

function json(value: Buffer | string, part: string): unknown {
  try {
    return JSON.parse(typeof value === "string" ? value : value.toString("utf8"));
  } catch (err) {
    throw new HttpError(400, `malformed JSON in part ${JSON.stringify(part)}: ${(err as Error).message}`);
  }
}

function accept(out: ParsedMultipart, name: string, data: Buffer, contentType: string): void {
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
    out.attachments.push({ runId, name: attName, contentType, data, sha256: createHash("sha256").update(data).digest("hex") });
    return;
  }
  if (kind !== "post" && kind !== "patch") throw new HttpError(400, `unknown part ${JSON.stringify(name)}; expected post.{id}, patch.{id}, post.{id}.{field} or attachment.{id}.{name}`);
  const d = rest.indexOf(".");
  const id = d < 0 ? rest : rest.slice(0, d);
  const field = d < 0 ? undefined : rest.slice(d + 1);
  if (!id) throw new HttpError(400, `part ${JSON.stringify(name)} has no run id`);
  if (!UUIDISH.test(id)) throw new HttpError(400, `part ${JSON.stringify(name)}: run id ${JSON.stringify(id)} is not a UUID`);
  const map = kind === "post" ? out.post : out.patch;
  let run = map.get(id);
  if (!run) map.set(id, (run = { id }));
  const value = json(data, name);
  if (field === undefined) {
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw new HttpError(400, `part ${JSON.stringify(name)} must be a JSON object`);
    const body = value as Record<string, unknown>;
    if (body.id !== undefined && body.id !== id) throw new HttpError(400, `part ${JSON.stringify(name)} carries id ${JSON.stringify(body.id)}, not ${JSON.stringify(id)}`);
    for (const k in body) if (run[k] === undefined || !LARGE_FIELDS.has(k)) run[k] = body[k];
  } else {
    if (!LARGE_FIELDS.has(field)) throw new HttpError(400, `part ${JSON.stringify(name)}: unknown field ${JSON.stringify(field)}; expected one of ${[...LARGE_FIELDS].join(", ")}`);
    run[field] = value;
  }
}

export function parseMultipart(body: Readable, headers: IncomingHttpHeaders, maxBytes: number): Promise<ParsedMultipart> {
  return new Promise((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      bb = busboy({ headers, limits: { fieldSize: maxBytes, fileSize: maxBytes, parts: 1_000_000, fields: 1_000_000, files: 100_000 } });
    } catch (err) {
      reject(new HttpError(400, `not a multipart/form-data request: ${(err as Error).message}`));
      return;
    }
    const out: ParsedMultipart = { post: new Map(), patch: new Map(), attachments: [], parts: 0 };
    let failed = false;
    const fail = (err: unknown) => {
      if (failed) return;
      failed = true;
      body.unpipe(bb);
      body.resume();
      reject(err instanceof HttpError ? err : new HttpError(400, `malformed multipart body: ${(err as Error)?.message ?? String(err)}`));
    };
    bb.on("field", (name, value, info) => {
      if (failed) return;
      if (info.valueTruncated) return fail(new HttpError(413, `part ${JSON.stringify(name)} exceeds ${maxBytes} bytes`));
      try {
        accept(out, name, Buffer.from(value, "utf8"), info.mimeType);
      } catch (err) {
        fail(err);
      }
    });
    bb.on("file", (name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("limit", () => fail(new HttpError(413, `part ${JSON.stringify(name)} exceeds ${maxBytes} bytes`)));
      stream.on("close", () => {
        if (failed) return;
        try {
          accept(out, name, Buffer.concat(chunks), info.mimeType);
        } catch (err) {
          fail(err);
        }
      });
    });
    bb.on("error", fail);
    bb.on("close", () => {
      if (!failed) resolve(out);
    });
    body.on("error", fail);
    body.on("aborted", () => fail(new HttpError(400, "request aborted")));
    body.pipe(bb);
  });
}
