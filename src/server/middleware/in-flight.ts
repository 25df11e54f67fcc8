/**
 * Back-pressure: at most `max` requests in flight at once (from admission
 * until their answer is sent). Past that a request is refused at once with
 * 503 and `Retry-After` instead of queued, so a burst bigger than the
 * collector can take costs it nothing but the refusals: no memory grows with
 * the queue, and the client (or the load balancer) sends the request again,
 * here later or to another collector. Nothing refused was stored, and its
 * body is not read: the answer closes the connection instead of draining it.
 */
import { HttpError } from "../http-error.js";
import type { Middleware } from "./compose.js";

/** Retry-After (s) when busy: requests in flight finish within a second or two. */
const BUSY_RETRY_AFTER_S = 1;

export interface InFlightOptions {
  /** Requests handled at once; 0 means no bound. */
  max: number;
  /** Requests that are never refused (GET /info, so a load balancer can tell busy from down). */
  exempt?: (method: string, path: string) => boolean;
}

export interface InFlightGauge {
  /** Requests in flight now, and how many were refused since start. */
  readonly inFlight: number;
  readonly refused: number;
}

export function inFlight(o: InFlightOptions): Middleware & { gauge: InFlightGauge } {
  const gauge = { inFlight: 0, refused: 0 };
  const m = (async (x, next) => {
    if (o.max <= 0 || o.exempt?.(x.method, x.url.pathname)) return next();
    if (gauge.inFlight >= o.max) {
      gauge.refused++;
      throw new HttpError(
        503,
        `the collector is busy: ${gauge.inFlight} requests in flight, its bound (serve --max-in-flight); retry after ${BUSY_RETRY_AFTER_S} s`,
        {
          "retry-after": String(BUSY_RETRY_AFTER_S),
          connection: "close",
        },
      );
    }
    gauge.inFlight++;
    // Until the answer is sent (or the connection drops): the parsed body lives that long.
    x.res.once("close", () => gauge.inFlight--);
    return next();
  }) as Middleware & { gauge: InFlightGauge };
  m.gauge = gauge;
  return m;
}
