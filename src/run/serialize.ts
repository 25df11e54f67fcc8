/**
 * serialize(value): a JSON-safe copy of anything a traced function takes or
 * returns. It is makeSafe() (src/run/safe.ts, where the table of
 * representations lives): one safe serializer for traceable, the wrappers and
 * the ingest Client, so every producer's values get the same markers and caps.
 */
import { makeSafe } from "./safe.js";

export function serialize(value: unknown): unknown {
  return makeSafe(value).value;
}

/** serialize() for a record field that must be an object (inputs, outputs). */
export function serializeRecord(value: unknown): Record<string, unknown> {
  const s = serialize(value);
  return typeof s === "object" && s !== null && !Array.isArray(s) ? (s as Record<string, unknown>) : { output: s };
}
