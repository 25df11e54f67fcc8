/**
 * The Run record (DESIGN.md "Run record"): what every producer builds and every
 * sink stores. One zod schema; the type is derived from it.
 */
import { z } from "zod";
import { daysInMonth } from "../internal/calendar.js";

/** Epoch milliseconds (fractions kept to the microsecond) as an ISO 8601 string. */
function isoFromEpochMs(ms: number): string {
  const whole = Math.floor(ms);
  const micro = Math.round((ms - whole) * 1000);
  return new Date(whole).toISOString().replace(/Z$/, `${String(Math.min(micro, 999)).padStart(3, "0")}Z`);
}

/**
 * RFC 3339 date-time: `YYYY-MM-DD`, `T` (or `t` or a space), `HH:MM:SS`, an
 * optional fraction (up to 9 digits; the store keeps 6), and `Z` or an offset
 * `+HH:MM` / `+HHMM`. Without an offset the time is taken as UTC (what the
 * store assumes). Nothing else: `Date.parse` would take "hello 5" as
 * 2001-05-01 and roll 2025-02-30 over to March 2.
 */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:[Zz]|[+-](\d{2}):?(\d{2}))?$/;
const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

/** Two decimal digits at `i`, or -1. */
function twoDigits(s: string, i: number): number {
  const a = s.charCodeAt(i) - 48;
  const b = s.charCodeAt(i + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

/**
 * True when `s` is certainly a date-time dateTimeProblem accepts, read
 * character by character (no match array, no substrings, no Date): every
 * run's times pass through here. False means "ask the pattern", which alone
 * words the problem; years before 100 are left to it too (Date.UTC reads
 * them as 19xx, and its answer is the one that counts).
 */
function plainDateTime(s: string): boolean {
  const n = s.length;
  if (n < 19 || s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58) return false;
  const t = s.charCodeAt(10);
  if (t !== 84 && t !== 116 && t !== 32) return false;
  const hi = twoDigits(s, 0);
  const lo = twoDigits(s, 2);
  const month = twoDigits(s, 5);
  const day = twoDigits(s, 8);
  const hour = twoDigits(s, 11);
  const minute = twoDigits(s, 14);
  const second = twoDigits(s, 17);
  if (hi < 1 || lo < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59) return false;
  if (second < 0 || second > 59) return false;
  const year = hi * 100 + lo;
  if (day > daysInMonth(year, month)) return false;
  let i = 19;
  if (i < n && s.charCodeAt(i) === 46) {
    const start = ++i;
    while (i < n && i - start < 9 && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57) i++;
    if (i === start) return false;
  }
  if (i === n) return true;
  const z = s.charCodeAt(i);
  if (z === 90 || z === 122) return i + 1 === n;
  if (z !== 43 && z !== 45) return false;
  const offH = twoDigits(s, i + 1);
  if (offH < 0 || offH > 23) return false;
  i += 3;
  if (s.charCodeAt(i) === 58) i++;
  const offM = twoDigits(s, i);
  return offM >= 0 && offM <= 59 && i + 2 === n;
}

/** Why a string is not an accepted date-time, or undefined when it is one. */
export function dateTimeProblem(s: string): string | undefined {
  if (plainDateTime(s)) return undefined;
  const m = DATE_TIME.exec(s);
  if (!m)
    return `expected an RFC 3339 date-time such as 2026-11-22T10:15:00.123456Z, or epoch milliseconds; got ${JSON.stringify(s.length > 40 ? s.slice(0, 40) + "…" : s)}`;
  const [year, month, day, hour, minute, second, offH, offM] = m.slice(1).map((x) => (x === undefined ? 0 : Number(x))) as number[];
  if (month! < 1 || month! > 12) return `month ${month} is not 01-12`;
  const days = new Date(Date.UTC(year!, month!, 0)).getUTCDate();
  if (day! < 1 || day! > days) return `${m[1]}-${m[2]}-${m[3]} is not a calendar date (${MONTHS[month! - 1]} ${year} has ${days} days)`;
  if (hour! > 23 || minute! > 59 || second! > 59) return `${m[4]}:${m[5]}:${m[6]} is not a time of day (00:00:00-23:59:59)`;
  if (offH! > 23 || offM! > 59) return "the UTC offset is not +HH:MM with HH 00-23 and MM 00-59";
  return undefined;
}

/**
 * A run's time: an RFC 3339 date-time string (kept as sent; microseconds
 * survive), or epoch milliseconds, which become an ISO string, because that is
 * what the `langsmith` SDKs send for start_time/end_time and the collector
 * must take their runs as they are. Anything else is refused with the field's
 * location.
 */
export const Timestamp = z
  .union([z.string(), z.number()], { error: "expected an RFC 3339 date-time string or epoch milliseconds" })
  .transform((v, ctx): string => {
    if (typeof v === "number") {
      if (Number.isFinite(v) && v >= 0 && v <= 8.64e15) return isoFromEpochMs(v);
      ctx.addIssue({
        code: "invalid_format",
        format: "datetime",
        message: `epoch milliseconds must be a finite number from 0 to 8.64e15; got ${v}`,
      });
      return z.NEVER;
    }
    const problem = dateTimeProblem(v);
    if (problem === undefined) return v;
    ctx.addIssue({ code: "invalid_format", format: "datetime", message: problem });
    return z.NEVER;
  });

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
