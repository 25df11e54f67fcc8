/** A collector that is closing refuses new requests with 503, so clients retry elsewhere or later. */
import { HttpError } from "../http-error.js";
import type { Middleware } from "./compose.js";

export function refuseWhileClosing(closing: () => boolean): Middleware {
  return (_x, next) => {
    if (closing()) throw new HttpError(503, "the collector is shutting down", { "retry-after": "1" });
    return next();
  };
}
