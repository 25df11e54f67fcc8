/**
 * The collector's route contract. Every endpoint group (ingest, query, OTLP,
 * deployments, webhooks) is a list of `Route`s; the server dispatches on method
 * and path pattern and turns a thrown `HttpError` into `{detail}` JSON.
 */
import { TracepipeError } from "../errors.js";
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
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

/** Throw from a handler to answer with `{detail}` (a string, or SPEC §7's ValidationError list for 422). */
export class HttpError extends TracepipeError {
  override name = "HttpError";
  constructor(
    readonly status: number,
    readonly detail: unknown,
    readonly headers?: Record<string, string>,
    /** Fields sent beside `detail` in the body (e.g. a 422's `issue_count`). */
    readonly extra?: Record<string, unknown>,
  ) {
    super(typeof detail === "string" ? detail : `HTTP ${status}`);
  }
}

/**
 * Whether a presented secret (API key, webhook token) equals the expected one,
 * in constant time: both are hashed to equal-length digests first, so neither
 * the comparison nor a length check leaks anything about the secret.
 */
export function secretMatches(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}
