/**
 * The one place a thrown error becomes an answer: an `HttpError` its status and
 * `{detail}`, a store that is away or saturated a 503 with `Retry-After`, a stack overflow (which the depth bound should prevent) a 422
 * blaming the request, anything else a 500 whose cause goes to the log only.
 * Being outermost, it also puts the request's reply headers on every answer
 * but a 500.
 */
import { StoreUnavailableError } from "../../errors.js";
import { HttpError } from "../http-error.js";
import { capDetail } from "../issues.js";
import type { Middleware } from "./compose.js";

/** Retry-After (s) on a 503 for a store that is away: a database restart or a failover takes seconds. */
const STORE_RETRY_AFTER_S = 1;

export interface ErrorOptions {
  /** Problems listed in a 422; the rest are counted. */
  maxListedIssues: number;
  /** Where a 500's cause is written. */
  log?: (message: string, err: unknown) => void;
}

export function errors(o: ErrorOptions): Middleware {
  const log = o.log ?? ((message, err) => console.error(message, err));
  return async (x, next) => {
    try {
      const reply = await next();
      return { ...reply, headers: { ...x.replyHeaders, ...reply.headers } };
    } catch (err) {
      // An error answered before the body was read: drain it so the connection stays usable.
      if (!x.req.complete) x.req.resume();
      if (err instanceof HttpError) {
        const capped =
          err.status === 422 && err.extra?.issue_count === undefined ? capDetail(err.detail, o.maxListedIssues) : { detail: err.detail };
        return {
          status: err.status,
          body: { detail: capped.detail, ...err.extra, ...capped.extra },
          headers: { ...x.replyHeaders, ...err.headers },
        };
      }
      if (err instanceof StoreUnavailableError) {
        // Nothing was stored, and the same request may come again once the database is back.
        return { status: 503, body: { detail: err.message }, headers: { ...x.replyHeaders, "retry-after": String(STORE_RETRY_AFTER_S) } };
      }
      if (isStackOverflow(err)) {
        return {
          status: 422,
          body: { detail: [{ loc: [], msg: "the request is nested too deeply to process", type: "json_depth" }] },
          headers: x.replyHeaders,
        };
      }
      log(`tracepipe serve: ${x.method} ${x.url.pathname} failed:`, err);
      return { status: 500, body: { detail: "internal error; see the collector's log" } };
    }
  };
}

function isStackOverflow(err: unknown): boolean {
  return (err as Error)?.name === "RangeError" && /call stack/i.test((err as Error).message);
}
