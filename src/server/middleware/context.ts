/**
 * The end of the chain: the route for the method and path (404, or 405 naming
 * the allowed methods), and the `RequestContext` its handler reads the request
 * through, with the body read lazily, once, and JSON parsed within the depth bound.
 */
import { HttpError } from "../http-error.js";
import type { RequestContext } from "../http.js";
import type { Router } from "../router.js";
import { parseBoundedJson, readAll, type BodyStream } from "../body.js";
import type { Exchange, Terminal } from "./compose.js";

export interface DispatchOptions {
  /** Deepest nesting accepted in a JSON body (422 past it). */
  maxJsonDepth: number;
}

export function dispatch(router: Router, o: DispatchOptions): Terminal {
  return async (x) => {
    const found = router.match(x.method, x.url.pathname);
    if (!found) throw new HttpError(404, `no endpoint ${x.method} ${x.url.pathname}`);
    if ("allowed" in found)
      throw new HttpError(405, `${x.method} is not allowed on ${x.url.pathname}; allowed: ${found.allowed.join(", ")}`, {
        allow: found.allowed.join(", "),
      });
    return found.handler(requestContext(x, found.params, o));
  };
}

export function requestContext(x: Exchange, params: Record<string, string>, o: DispatchOptions): RequestContext {
  let stream: BodyStream | undefined;
  let body: Promise<Buffer> | undefined;
  const ctx: RequestContext = {
    method: x.method,
    path: x.url.pathname,
    params,
    query: x.url.searchParams,
    headers: x.req.headers,
    ip: x.ip,
    req: x.req,
    stream: () => {
      if (!x.openBody) throw new Error("no body admission on this collector's middleware chain");
      return (stream ??= x.openBody());
    },
    body: () => (body ??= readAll(ctx.stream())),
    parse: (text) => parseBoundedJson(text, o.maxJsonDepth),
    json: async () => ctx.parse(await ctx.body()),
  };
  return ctx;
}
