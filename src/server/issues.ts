/**
 * A 422's problems, bounded: the first `max` are kept and listed, the rest only
 * counted, and checking stops once `maxCounted` are found (`full`), so a
 * hostile request with hundreds of thousands of bad values costs a bounded
 * amount of work and a small answer, not a 300 MB one.
 */
import type { Issue } from "../errors.js";
import { HttpError } from "./http-error.js";

export class IssueList {
  readonly listed: Issue[] = [];
  count = 0;

  constructor(
    readonly max: number,
    readonly maxCounted = Infinity,
  ) {}

  /** Enough problems found: checking stops here, and the count is a lower bound. */
  get full(): boolean {
    return this.count >= this.maxCounted;
  }

  push(...issues: Issue[]): void {
    for (const i of issues) {
      this.count++;
      if (this.listed.length < this.max) this.listed.push(i);
    }
  }

  get length(): number {
    return this.count;
  }

  /** Throws the 422 when there is any problem. */
  throwIfAny(): void {
    if (this.count) this.fail();
  }

  fail(): never {
    throw unprocessable(this.listed, this.count, this.full);
  }
}

/**
 * The 422 of SPEC §7 (`{detail: [ValidationError]}`) with at most `listed`
 * entries; when some were left out, a last entry says how many, and
 * `issue_count` carries the total either way.
 */
export function unprocessable(listed: Issue[], count: number, stopped = false): HttpError {
  const rest = count - listed.length;
  const msg = stopped
    ? `at least ${rest} more problem(s) not listed; checking stopped after ${count}`
    : `${rest} more problem(s) not listed (${count} in all)`;
  const detail = rest > 0 ? [...listed, { loc: [], msg, type: "too_many_errors" }] : listed;
  return new HttpError(422, detail, undefined, stopped ? { issue_count: count, issue_count_complete: false } : { issue_count: count });
}

/** Caps any 422 detail list (routes that build their own) to `max` entries. */
export function capDetail(detail: unknown, max: number): { detail: unknown; extra?: Record<string, unknown> } {
  if (!Array.isArray(detail) || detail.length <= max) return { detail };
  const e = unprocessable(detail.slice(0, max) as Issue[], detail.length);
  return { detail: e.detail, extra: e.extra };
}
