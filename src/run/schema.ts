/**
 * The Run record (DESIGN.md "Run record"): what every producer builds and every
 * sink stores. One zod schema; the type is derived from it.
 */
import { z } from "zod";

/** Epoch milliseconds (fractions kept to the microsecond) as an ISO 8601 string. */
function isoFromEpochMs(ms: number): string {
  const whole = Math.floor(ms);
  const micro = Math.round((ms - whole) * 1000);
  return new Date(whole).toISOString().replace(/Z$/, `${String(Math.min(micro, 999)).padStart(3, "0")}Z`);
}

/**
 * ISO 8601 timestamp; microsecond precision is kept when present. Epoch
 * milliseconds are accepted too and become ISO strings, because that is what
 * the `langsmith` SDKs send for start_time/end_time and the collector must take
 * their runs as they are.
 */
export const Timestamp = z.union([
  z.string().refine((s) => !Number.isNaN(Date.parse(s)), { message: "expected an ISO 8601 timestamp" }),
  z.number().finite().nonnegative().max(8.64e15).transform(isoFromEpochMs),
]);

export const RunEvent = z.looseObject({
  name: z.string(),
  time: Timestamp,
  kwargs: z.record(z.string(), z.unknown()).optional(),
});

export const RunType = z.string().min(1).describe("llm, chain, tool, retriever, embedding, prompt, parser, ...");

export const RunExtra = z.looseObject({
  metadata: z.record(z.string(), z.unknown()).optional(),
});

/** A complete run as a `post` carries it. */
export const Run = z.looseObject({
  id: z.uuid(),
  trace_id: z.uuid(),
  parent_run_id: z.uuid().nullable().optional(),
  dotted_order: z.string().min(1),
  name: z.string(),
  run_type: RunType,
  start_time: Timestamp,
  end_time: Timestamp.nullable().optional(),
  inputs: z.record(z.string(), z.unknown()).optional(),
  outputs: z.record(z.string(), z.unknown()).nullable().optional(),
  error: z.string().nullable().optional(),
  events: z.array(RunEvent).optional(),
  tags: z.array(z.string()).optional(),
  extra: RunExtra.optional(),
  session_name: z.string().optional(),
});

/** An update: the id plus whatever changed (usually end_time, outputs, error, events). */
export const RunPatch = Run.partial().extend({ id: z.uuid() });

export type RunEvent = z.infer<typeof RunEvent>;
export type Run = z.infer<typeof Run>;
export type RunPatch = z.infer<typeof RunPatch>;
