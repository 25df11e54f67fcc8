/**
 * The collector's route contract. Every endpoint group (ingest, query, OTLP,
 * deployments, webhooks) is a list of `Route`s; the server dispatches on method
 * and path pattern; a thrown `HttpError` (http-error.ts) becomes `{detail}` JSON.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import type { BodyStream } from "./body.js";

export interface RequestContext {
  method: string;
  /** Path without the query string, e.g. `/runs/0192...`. */
  path: string;
  /** Values captured by `:name` segments of the route's path pattern. */
  params: Record<string, string>;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** Remote address, used as the IP identity key for rate limits. */
  ip: string;
  /** The raw request. Read the body through stream() or body(), which bound and admit it. */
  req: IncomingMessage;
  /** The body as a stream of decoded bytes, bounded (413) and admitted (large bodies wait for a slot). Use it or body(), not both. */
  stream(): BodyStream;
  /** The whole body, decompressed (gzip), bounded by the collector's max body size (413 past it). */
  body(): Promise<Buffer>;
  /** JSON text parsed; malformed JSON is a 400, nesting past the depth limit a 422 with `loc`. */
  parse(text: Buffer): Promise<unknown>;
  /** parse(await body()). */
  json(): Promise<unknown>;
}

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export type Handler = (ctx: RequestContext) => Promise<Reply> | Reply;

export interface Route {
  method: "GET" | "POST" | "PATCH" | "PUT" | "DELETE";
  /** Path pattern with `:name` segments, e.g. `/v2/deployments/:id/revisions/:revision_id`. */
  path: string;
  handler: Handler;
}

/** Writes a reply as JSON (or raw bytes when the body is a Uint8Array). */
export function sendReply(res: ServerResponse, reply: Reply): void {
  const body = reply.body instanceof Uint8Array ? reply.body : reply.body === undefined ? "" : JSON.stringify(reply.body);
  res.writeHead(reply.status, { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...reply.headers });
  res.end(body);
}
