/**
 * Named statements for the ingest path. A query sent with parameters and no
 * name is parsed and planned again on every execution; named after its text,
 * each connection parses it once and, after a few executions, reuses a
 * generic plan. The ingest statements are large (tens of unnest arrays,
 * CTEs, RETURNING expressions), so planning them is a real share of the
 * database's CPU per request.
 *
 * Only for texts built from the store's own fixed parts (their number is
 * small and bounded), never from values: each distinct text is a statement
 * kept on every connection for its life.
 */
import { createHash } from "node:crypto";
import type pg from "pg";

const names = new Map<string, string>();

/** `text` with `values`, as a statement named after the text. */
export function prepared(text: string, values: unknown[]): pg.QueryConfig {
  let name = names.get(text);
  if (name === undefined) {
    name = `tp_${createHash("sha1").update(text).digest("hex").slice(0, 24)}`;
    names.set(text, name);
  }
  return { name, text, values };
}
