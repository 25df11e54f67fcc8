/** The one error a handler or middleware throws to choose the answer's status. */
import { TracepipeError } from "../errors.js";

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
