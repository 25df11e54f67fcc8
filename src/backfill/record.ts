/**
 * One log line to a value the readers can use, or a ValidationError naming
 * what is wrong, so the line is dead-lettered like any other bad record.
 */
import { ConfigError, ValidationError, zodIssues } from "../errors.js";
import type { Line } from "./lines.js";
import { Run } from "../run/schema.js";
import type { Run as RunT } from "../run/schema.js";
import { tooDeepAt } from "../internal/json-depth.js";
import type { Obj } from "../internal/types.js";

/**
 * Deepest JSON nesting a record may have. V8 parses any depth, but every
 * later step (the schema, the client's encoder, the store) recurses, and a
 * few thousand levels overflow the stack there: such a line is refused here,
 * where it can still be dead-lettered with its number.
 */
export const MAX_DEPTH = 1000;

/** A log line as a JSON object: malformed JSON, a non-object or too deep a record is a ValidationError. */
export function parseRecord(text: string): Obj {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw new ValidationError([{ loc: [], msg: `malformed JSON: ${(err as Error).message}`, type: "json_invalid" }]);
  }
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw new ValidationError([{ loc: [], msg: "expected a JSON object", type: "object_type" }]);
  // Nesting n levels takes at least 2n bytes, so only long lines need the walk.
  if (text.length > 2 * MAX_DEPTH && tooDeepAt(v, MAX_DEPTH) !== undefined) {
    throw new ValidationError([{ loc: [], msg: `nested deeper than ${MAX_DEPTH} levels`, type: "too_deep" }]);
  }
  return v as Obj;
}

/** A native run record as read from a log, checked against the Run schema; `project` fills a missing session_name. */
export function checkedRun(v: Obj, project: string | undefined): RunT {
  const r = Run.safeParse(v);
  if (!r.success) throw new ValidationError(zodIssues(r.error.issues));
  return r.data.session_name === undefined && project ? { ...r.data, session_name: project } : r.data;
}

/** The record a line holds; a line over the maximum size throws the error its dead letter carries. */
export function lineRecord(l: Line, max: number | undefined): Obj {
  if (l.tooLong) throw lineTooLong(l, max);
  return parseRecord(l.text);
}

/** A line over the maximum line size, as the error its dead letter carries. */
export function lineTooLong(l: Line, max: number | undefined): ValidationError {
  return new ValidationError([
    {
      loc: [],
      msg: `line is ${l.end - l.offset} bytes, over the maximum line size of ${max} bytes (--max-line-bytes)`,
      type: "line_too_long",
    },
  ]);
}

/**
 * A last line with no newline that is not a whole record is most likely one a
 * writer is still appending: it is neither dead-lettered nor passed by the
 * checkpoint, but reported like a file unreadable from that line on, so a
 * rerun once the line is finished reads it (and only it) again.
 */
export function unfinishedLine(path: string, l: Line): ConfigError {
  return new ConfigError([
    {
      loc: ["files"],
      msg: `${path}: line ${l.line} has no newline and is not a whole record (a writer still appending to the file?); it was not read, rerun to read it once it is finished`,
      type: "file_unreadable",
    },
  ]);
}
