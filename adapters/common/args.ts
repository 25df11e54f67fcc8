/**
 * Tool-call arguments are always an object in the native format (DESIGN):
 * JSON text is parsed; `""` is `{}`; unparseable text (or JSON that is not an
 * object) keeps `args: {}` and records `extras.raw_args` and `extras.args_error`.
 */
import { readFlatObject } from "./flat-json.js";

export interface ParsedArgs {
  args: Record<string, unknown>;
  extras?: { raw_args: unknown; args_error: string };
}

export function parseToolArgs(raw: unknown): ParsedArgs {
  if (raw === undefined || raw === null) return { args: {} };
  if (typeof raw === "object" && !Array.isArray(raw)) return { args: raw as Record<string, unknown> };
  if (typeof raw !== "string") {
    return {
      args: {},
      extras: { raw_args: raw, args_error: `arguments must be a JSON object, got ${Array.isArray(raw) ? "array" : typeof raw}` },
    };
  }
  if (raw.length === 0) return { args: {} };
  const flat = readFlatObject(raw);
  if (flat !== undefined) return { args: flat };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    // Blank text is "no arguments"; asked only after parsing failed, so JSON is never copied by trim().
    if (raw.trim() === "") return { args: {} };
    return { args: {}, extras: { raw_args: raw, args_error: `invalid JSON: ${(err as Error).message}` } };
  }
  if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) return { args: parsed as Record<string, unknown> };
  return {
    args: {},
    extras: {
      raw_args: raw,
      args_error: `arguments must be a JSON object, got ${Array.isArray(parsed) ? "array" : parsed === null ? "null" : typeof parsed}`,
    },
  };
}
