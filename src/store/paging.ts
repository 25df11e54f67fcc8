/**
 * How both stores page, in one place so SQLite and PostgreSQL answer alike:
 * the page sizes they accept, and the cursors they hand out (the sort's last
 * key and id as base64url JSON; anything that does not read back as the
 * expected form is a CursorError).
 */
import { CursorError } from "./contract/cursor.js";

/** The most traces one page holds (the viewer's list, `runs list`), on both stores. */
export const MAX_TRACE_PAGE = 500;

function encode(parts: readonly unknown[]): string {
  return Buffer.from(JSON.stringify(parts)).toString("base64url");
}

function decode(cursor: string): unknown {
  try {
    return JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    return undefined;
  }
}

/** A runs page's cursor: the last run's (start_time, id); null for a run without a start time (one a patch made before its post). */
export function encodeRunCursor(startTime: string | null, id: string): string {
  return encode([startTime, id]);
}

/** The cursor's (start_time, id); an empty start time (how such a cursor was written before) is null. */
export function decodeRunCursor(cursor: string): [string | null, string] {
  const v = decode(cursor);
  if (Array.isArray(v) && v.length === 2 && (typeof v[0] === "string" || v[0] === null) && typeof v[1] === "string")
    return [v[0] || null, v[1]];
  throw new CursorError("invalid cursor");
}

/**
 * The runs after a cursor's in (start_time, id) order with runs without a
 * start time first. `bind` gives a value's placeholder, called in the order
 * the placeholders stand in the text (positional parameters).
 */
export function afterRunCursor(t: string | null, id: string, bind: (v: string) => string): string {
  if (t === null) return `((start_time IS NULL AND id > ${bind(id)}) OR start_time IS NOT NULL)`;
  return `(start_time > ${bind(t)} OR (start_time = ${bind(t)} AND id > ${bind(id)}))`;
}

/** A traces page's cursor: the sort it was made for, the last trace's sort key and id. */
export function encodeTraceCursor(sort: string, key: unknown, id: string): string {
  return encode([sort, key, id]);
}

/** The (sort key, id) of a cursor made for `sort`. */
export function decodeTraceCursor(cursor: string, sort: string): [number | string | null, string] {
  const v = decode(cursor);
  if (Array.isArray(v) && v.length === 3 && v[0] === sort && typeof v[2] === "string") return [v[1], v[2]];
  throw new CursorError("invalid cursor");
}

/** A threads page's cursor: the last thread's (last_time, project, thread_id), the list's order. */
export function encodeThreadCursor(lastTime: string, project: string, threadId: string): string {
  return encode([lastTime, project, threadId]);
}

export function decodeThreadCursor(cursor: string): [string, string, string] {
  const v = decode(cursor);
  if (Array.isArray(v) && v.length === 3 && typeof v[0] === "string" && typeof v[1] === "string" && typeof v[2] === "string")
    return [v[0], v[1], v[2]];
  throw new CursorError("invalid cursor");
}

/**
 * The threads after a cursor's, in the list's order (last_time descending,
 * then project and thread id ascending), over the bound values of its parts.
 */
export function afterThreadCursor(t: string, p: string, id: string): string {
  return `(last_time < ${t} OR (last_time = ${t} AND (project > ${p} OR (project = ${p} AND thread_id > ${id}))))`;
}

/** A page size asked for, within 1 to `max`; `fallback` when none was asked. */
export const pageLimit = (limit: number | undefined, fallback: number, max: number) => Math.min(Math.max(limit ?? fallback, 1), max);

/** A page out of `limit + 1` rows read: the first `limit`, whether more follow, and the page's last row. */
export function splitPage<T>(rows: T[], limit: number): { page: T[]; more: boolean; last: T | undefined } {
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  return { page, more, last: page[page.length - 1] };
}
