/**
 * How both stores read a stored run back from its row, so SQLite and
 * PostgreSQL answer alike: unknown fields from `other`, the scalar and JSON
 * columns, exact copies of text the database could not hold, and a native
 * copy too large to have been stored (DERIVE_ON_READ_BYTES) derived now,
 * exactly as ingest would have. Each store says only how it reads a JSON
 * column's text and how large a side is.
 */
import { isObj, type Obj } from "../internal/obj.js";
import type { StoredRun } from "./contract/runs.js";
import { deriveLlm } from "./derive.js";
import { JSONCOL, SCALAR, type JsonColumn } from "./merge-rules.js";

export interface RunRowReads {
  /** A JSON column's text, null when the run has none. */
  json(column: JsonColumn): string | null | undefined;
  /** Whether a side's JSON is larger than the store keeps a native copy for. */
  large(side: "inputs" | "outputs"): boolean;
}

export function storedRunOf(row: Obj, reads: RunRowReads): StoredRun {
  const out: Obj = { id: row.id };
  if (row.other) Object.assign(out, JSON.parse(row.other as string));
  for (const c of SCALAR) if (row[c] !== null) out[c] = row[c];
  if (row.exact) Object.assign(out, JSON.parse(row.exact as string));
  for (const c of JSONCOL) {
    const text = reads.json(c);
    if (text != null) out[c] = JSON.parse(text);
  }
  out.detected_format = row.detected_format;
  out.normalized_inputs = row.normalized_inputs ? JSON.parse(row.normalized_inputs as string) : null;
  out.normalized_outputs = row.normalized_outputs ? JSON.parse(row.normalized_outputs as string) : null;
  out.normalize_error = row.normalize_error;
  const deferIn = row.normalized_inputs === null && reads.large("inputs");
  const deferOut = row.normalized_outputs === null && reads.large("outputs");
  if (row.run_type === "llm" && row.detected_format !== null && row.normalize_error === null && (deferIn || deferOut)) {
    const extra = out.extra;
    const d = deriveLlm(out.inputs, out.outputs, isObj(extra) && isObj(extra.metadata) ? extra.metadata : undefined);
    if (deferIn) out.normalized_inputs = d.normalized_inputs;
    if (deferOut) out.normalized_outputs = d.normalized_outputs;
  }
  out.first_token_time = row.first_token_time;
  return out as unknown as StoredRun;
}
