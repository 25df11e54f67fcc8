/**
 * Middleware: each cross-cutting concern of the collector (errors, shutdown,
 * auth, rate limits, body admission) is one function that may answer, add
 * to the answer, or pass the request on; `compose` chains them in order.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Reply } from "../http.js";
import type { BodyStream } from "../body.js";

/** One request on its way through the middleware. */
export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  /** Upper-case method. */
  method: string;
  url: URL;
  /** Remote address, the IP identity key for rate limits. */
  ip: string;
  /** Headers every answer to this request carries, an error's included (a 500 excepted); the errors middleware applies them. */
  replyHeaders: Record<string, string>;
  /** Opens the decoded, bounded body (set by body admission). */
  openBody?: () => BodyStream;
}

export type Next = () => Promise<Reply>;
export type Middleware = (x: Exchange, next: Next) => Promise<Reply>;
export type Terminal = (x: Exchange) => Promise<Reply>;

/** The middleware in order, the first outermost, ending in `last`. */
export function compose(middleware: readonly Middleware[], last: Terminal): Terminal {
  return (x) => {
    const step = (i: number): Promise<Reply> => {
      const m = middleware[i];
      return m ? m(x, () => step(i + 1)) : last(x);
    };
    return step(0);
  };
}

/** The exchange for a request as node:http hands it over. */
export function exchangeOf(req: IncomingMessage, res: ServerResponse): Exchange {
  return {
    req,
    res,
    method: (req.method ?? "GET").toUpperCase(),
    url: new URL(req.url ?? "/", "http://collector"),
    ip: req.socket.remoteAddress ?? "unknown",
    replyHeaders: {},
  };
}
