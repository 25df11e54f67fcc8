/**
 * Back-pressure: at most `max` requests in flight at once (from admission
 * until their answer is sent). Past that a request is refused at once with
 * 503 and `Retry-After` instead of queued, so a burst bigger than the
 * collector can take costs it nothing but the refusals: no memory grows with
 * the queue, and the client (or the load balancer) sends the request again,
 * here later or to another collector. Nothing refused was stored, and its
 * body is read only to be thrown away after the answer: a connection closed
 * with the body still arriving is reset, and a client still writing its body
 * would see the reset instead of the 503. When the body stops arriving for
 * REFUSED_DRAIN_IDLE_MS the collector closes its side of the connection (FIN
 * after the answer, still reading): a client that paused because its own
 * process was starved still finds the 503 before the end of the stream, where
 * a reset would have thrown away the answer waiting unread in its socket.
 * After REFUSED_DRAIN_MS in all the connection is dropped: one that never
 * stops sending holds nothing for long.
 *
 * The bound is one budget (InFlightBudget) that the OTLP/gRPC receiver draws
 * on too, so a collector's whole work in flight is bounded whichever way it
 * arrives.
 */
import { HttpError } from "../http-error.js";
import type { Middleware } from "./compose.js";

/** Retry-After (s) when busy: requests in flight finish within a second or two. */
export const BUSY_RETRY_AFTER_S = 1;

/** How long a refused request's body may go on arriving (and be thrown away) after the answer before its connection is dropped. */
export const REFUSED_DRAIN_MS = 10_000;
/** How long a refused request's body may pause before its connection is dropped. */
export const REFUSED_DRAIN_IDLE_MS = 2000;

export interface InFlightGauge {
  /** Requests in flight now, and how many were refused since start. */
  readonly inFlight: number;
  readonly refused: number;
}

/** Requests in flight across every receiver of one collector, at most `max` (0: no bound). */
export class InFlightBudget implements InFlightGauge {
  inFlight = 0;
  refused = 0;
  constructor(readonly max: number) {}

  /** Take a place; false (and counted as refused) when all `max` are taken. Every true is paired with one leave(). */
  tryEnter(): boolean {
    if (this.max > 0 && this.inFlight >= this.max) {
      this.refused++;
      return false;
    }
    this.inFlight++;
    return true;
  }

  leave(): void {
    this.inFlight--;
  }
}

export interface InFlightOptions {
  /** The budget shared with the collector's other receivers. */
  budget: InFlightBudget;
  /** Requests that are never refused (GET /info, so a load balancer can tell busy from down). */
  exempt?: (method: string, path: string) => boolean;
  /** The longest a refused body is drained after the answer (REFUSED_DRAIN_MS). */
  refusedDrainMs?: number;
}

export function inFlight(o: InFlightOptions): Middleware & { gauge: InFlightGauge } {
  const budget = o.budget;
  const drainMs = o.refusedDrainMs ?? REFUSED_DRAIN_MS;
  const m = (async (x, next) => {
    if (budget.max <= 0 || o.exempt?.(x.method, x.url.pathname)) return next();
    if (!budget.tryEnter()) {
      // The errors middleware resumes the unread body, which throws it away as it arrives.
      x.res.once("finish", () => {
        if (x.req.complete) return;
        const socket = x.req.socket;
        const destroy = () => socket.destroy();
        let chunks = 0;
        // A timer can fire before the I/O that arrived while the process was starved is read: the
        // idle bound looks once more after this turn's reads (setImmediate) before it closes anything.
        const idle = setTimeout(
          () => {
            const seen = chunks;
            setImmediate(() => seen === chunks && socket.end());
          },
          Math.min(REFUSED_DRAIN_IDLE_MS, drainMs),
        );
        const cap = setTimeout(destroy, drainMs);
        idle.unref();
        cap.unref();
        const arriving = () => {
          chunks++;
          idle.refresh();
        };
        const done = () => {
          clearTimeout(idle);
          clearTimeout(cap);
          x.req.off("data", arriving);
        };
        x.req.on("data", arriving);
        x.req.once("end", done);
        socket.once("close", done);
      });
      throw new HttpError(
        503,
        `the collector is busy: ${budget.inFlight} requests in flight, its bound (serve --max-in-flight); retry after ${BUSY_RETRY_AFTER_S} s`,
        { "retry-after": String(BUSY_RETRY_AFTER_S) },
      );
    }
    // Until the answer is sent (or the connection drops): the parsed body lives that long.
    x.res.once("close", () => budget.leave());
    return next();
  }) as Middleware & { gauge: InFlightGauge };
  m.gauge = budget;
  return m;
}
