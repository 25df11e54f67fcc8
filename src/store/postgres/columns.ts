/**
 * The `runs` table's columns as the PostgreSQL store writes them, and the
 * values it keeps beside a run's payload for the viewer's queries.
 *
 * PostgreSQL text cannot hold U+0000, and its UTF-8 cannot hold a lone
 * surrogate, both of which a JSON string may carry. Payload columns are JSON
 * text, where both are escapes (`\u0000`), so they never meet the problem; a
 * scalar column (name, error, ...) holding one stores a readable copy
 * (U+FFFD in its place) for queries, and the exact value in `exact`, which
 * reads override.
 */
import type { Obj } from "../../internal/obj.js";
import { isObj } from "../../internal/obj.js";
import { daysInMonth } from "../../internal/calendar.js";
import { JSONCOL, SCALAR } from "../merge-rules.js";

/**
 * A side (inputs or outputs) of an llm run whose JSON is larger than this
 * keeps no stored native copy; it is derived when read. The same size as the
 * SQLite store's, so both stores answer alike.
 */
export const DERIVE_ON_READ_BYTES = 1024 * 1024;

/** Every column an inserted row names. */
export const ROW_COLUMNS = [
  "id",
  "trace_start",
  ...SCALAR,
  "has_post",
  ...JSONCOL,
  "other",
  "exact",
  "detected_format",
  "normalized_inputs",
  "normalized_outputs",
  "normalize_error",
  "first_token_time",
  "model",
  "provider",
  "usage",
  "total_cost",
  "latency_ms",
  "received_at",
  "updated_at",
] as const;

/** Each column's type, for casting parameters (`$1::text[]`). */
export const TYPES: Record<string, string> = Object.fromEntries(
  ROW_COLUMNS.map((c) => [
    c,
    c === "has_post"
      ? "boolean"
      : c === "trace_start"
        ? "timestamptz"
        : c === "usage"
          ? "jsonb"
          : c === "total_cost" || c === "latency_ms"
            ? "float8"
            : "text",
  ]),
);

/** `v` as PostgreSQL text can hold it: U+0000 and lone surrogates become U+FFFD (a caller keeps the exact value where it differs). */
export function storable(v: string): string {
  return UNSTORABLE.test(v) ? v.replace(UNSTORABLE_ALL, "\uFFFD") : v;
}
/** U+0000 or a surrogate without its pair. */
const UNSTORABLE_SOURCE = "\\u0000|[\\ud800-\\udbff](?![\\udc00-\\udfff])|(?<![\\ud800-\\udbff])[\\udc00-\\udfff]";
const UNSTORABLE = new RegExp(UNSTORABLE_SOURCE);
const UNSTORABLE_ALL = new RegExp(UNSTORABLE_SOURCE, "g");

/** JSON text jsonb accepts: `\u0000` and lone-surrogate escapes become U+FFFD (only in the queried copy). */
export function jsonbText(v: unknown): string {
  return JSON.stringify(v).replace(/(?<!\\)((?:\\\\)*)\\u(0000|d[89a-f][0-9a-f]{2})/gi, "$1\\ufffd");
}

const DOTTED_START = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{6})Z/;
const CANONICAL = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{6})Z$/;

/** The canonical time of these digits, or null when they name no instant (checked by number: this runs for every new run). */
function isoIfValid(y: string, mo: string, d: string, h: string, mi: string, s: string, us: string): string | null {
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  if (year === 0) return null; // PostgreSQL has no year 0
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return null;
  return `${y}-${mo}-${d}T${h}:${mi}:${s}.${us}Z`;
}

/**
 * When the run's trace started (its partition key): the root segment of its
 * dotted_order, else its own start time (a run's trace starts no later), else
 * null (the default partition).
 */
export function traceStart(state: Obj): string | null {
  const dotted = typeof state.dotted_order === "string" ? DOTTED_START.exec(state.dotted_order) : null;
  if (dotted) {
    const iso = isoIfValid(...(dotted.slice(1, 8) as [string, string, string, string, string, string, string]));
    if (iso) return iso;
  }
  const start = typeof state.start_time === "string" ? CANONICAL.exec(state.start_time) : null;
  return start ? isoIfValid(...(start.slice(1, 8) as [string, string, string, string, string, string, string])) : null;
}

/** The latency column is computed as the viewer's reads compute it (store/time.ts). */
export { msBetween } from "../time.js";

/**
 * An llm run's usage: in the first output message, of the native copy when
 * one is stored, else of the outputs as sent; else in `extra.metadata`, where
 * a run whose instrumentation recorded usage but no content keeps it (DESIGN
 * "Run record").
 */
export function usageOf(normalizedOutputs: unknown, outputs: unknown, extra: unknown): unknown {
  const first = (v: unknown) => {
    const m = isObj(v) && Array.isArray(v.messages) ? v.messages[0] : undefined;
    return isObj(m) && m.usage_metadata !== undefined && m.usage_metadata !== null ? m.usage_metadata : undefined;
  };
  const meta = isObj(extra) && isObj(extra.metadata) ? extra.metadata : undefined;
  const kept = meta?.usage_metadata;
  return first(normalizedOutputs) ?? first(outputs) ?? (kept !== undefined && kept !== null ? kept : undefined);
}
