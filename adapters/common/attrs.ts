/**
 * Span attributes that carry JSON as text (messages, tool calls, parameters),
 * read the same way by every span adapter.
 */
import { fail } from "./guards.js";

/** A JSON-text attribute's value; malformed JSON is a NormalizeError naming the attribute. Non-strings pass through. */
export function attrJson(attrs: Readonly<Record<string, unknown>>, key: string): unknown {
  const v = attrs[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") return v;
  try {
    return JSON.parse(v) as unknown;
  } catch (err) {
    return fail([key], `expected JSON: ${(err as Error).message}`, "json_invalid");
  }
}

/** JSON text parsed when it is JSON, else kept as the text it is (tool results, schemas, settings). */
export function jsonOrText(s: string): unknown {
  try {
    return JSON.parse(s) as unknown;
  } catch {
    return s;
  }
}
