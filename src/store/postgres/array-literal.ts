/**
 * A column of values as the text of a PostgreSQL array (`{"a","b",NULL}`),
 * as pg writes a JS array parameter, built in one pass: each element quoted,
 * a backslash or double quote in it escaped by one replace instead of two.
 * The new-runs statement sends tens of such columns per request, most of
 * them JSON text full of quotes, and the database reads the text the same
 * way whichever side built it.
 */

/** Backslashes and double quotes, escaped inside an array element. */
const SPECIAL = /["\\]/g;

/** The array text of `row[column]` for each row (null or undefined: NULL). */
export function arrayLiteral(rows: readonly Record<string, unknown>[], column: string): string {
  let out = "{";
  for (let i = 0; i < rows.length; i++) {
    if (i > 0) out += ",";
    const v = rows[i]![column];
    if (v === null || v === undefined) out += "NULL";
    else {
      const text = typeof v === "string" ? v : typeof v === "number" || typeof v === "boolean" ? String(v) : JSON.stringify(v);
      out += `"${text.replace(SPECIAL, "\\$&")}"`;
    }
  }
  return out + "}";
}
