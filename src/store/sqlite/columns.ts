/**
 * The `runs` table's layout as the SQLite store reads and writes it: scalar
 * columns, JSON columns (text), the derived columns, and the size from which
 * a side's native copy is derived on read rather than stored.
 */
import { PIECE_COLUMN_BYTES } from "./pieces.js";

/** Columns holding scalars, and columns holding JSON; every other field of a run goes to `other`. */
export { JSONCOL, SCALAR } from "../merge-rules.js";

/** A row of `runs` as `SELECT *` reads it. */
export interface Row {
  id: string;
  has_post: number;
  other: string | null;
  received_at: string;
  detected_format: string | null;
  normalized_inputs: string | null;
  normalized_outputs: string | null;
  normalize_error: string | null;
  first_token_time: string | null;
  pieces: string | null;
  [k: string]: unknown;
}

/**
 * A side (inputs or outputs) of an llm run whose stored JSON is larger than
 * this keeps no stored native copy; it is derived when read. Derivation is
 * pure, so reading derives exactly what writing would have stored.
 */
export const DERIVE_ON_READ_BYTES = PIECE_COLUMN_BYTES;

/** Size in bytes of a JSON column's text as stored (UTF-8). */
export function textBytes(text: unknown): number {
  return typeof text === "string" ? Buffer.byteLength(text, "utf8") : 0;
}
