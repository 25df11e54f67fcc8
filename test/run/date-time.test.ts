/**
 * dateTimeProblem (run/schema.ts) reads the usual time character by character
 * before trying its pattern: whatever it accepts must be an RFC 3339 date-time
 * on the calendar, and everything else is still refused with the pattern's
 * words. The oracle here is independent of both: the fields, then a Date
 * built from them that must give the same fields back.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { dateTimeProblem } from "../../src/run/schema.js";

/** Accepted by the rules written out: the shape, then a real day and time of day (years from 100, where Date is proleptic Gregorian). */
function onTheCalendar(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-](\d{2}):?(\d{2}))?$/.exec(s);
  if (!m) return false;
  const [y, mo, d, h, mi, se] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return false;
  if (h > 23 || mi > 59 || se > 59) return false;
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

const two = (n: number) => String(n).padStart(2, "0");

/** Strings near the date-time grammar: fields a little out of range, separators and suffixes right or wrong. */
const nearDateTime = fc
  .record({
    year: fc.integer({ min: 100, max: 9999 }),
    month: fc.integer({ min: 0, max: 13 }),
    day: fc.integer({ min: 0, max: 32 }),
    hour: fc.integer({ min: 0, max: 25 }),
    minute: fc.integer({ min: 0, max: 61 }),
    second: fc.integer({ min: 0, max: 61 }),
    sep: fc.constantFrom("T", "t", " ", "_"),
    fraction: fc.oneof(fc.constant(""), fc.constant("."), fc.stringMatching(/^\.\d{1,11}$/)),
    zone: fc.oneof(
      fc.constantFrom("", "Z", "z", "ZZ", "+", "-05", "+0530", "+05:30", "-23:59", "+24:00", "+05:60", "+05:3", "UTC"),
      fc
        .tuple(fc.constantFrom("+", "-"), fc.integer({ min: 0, max: 99 }), fc.boolean(), fc.integer({ min: 0, max: 99 }))
        .map(([sign, h, colon, m]) => `${sign}${two(h)}${colon ? ":" : ""}${two(m)}`),
    ),
    tail: fc.constantFrom("", "", "", " ", "x", "0"),
  })
  .map(
    (p) =>
      `${String(p.year).padStart(4, "0")}-${two(p.month)}-${two(p.day)}${p.sep}${two(p.hour)}:${two(p.minute)}:${two(p.second)}${p.fraction}${p.zone}${p.tail}`,
  );

describe("dateTimeProblem", () => {
  it("accepts RFC 3339 date-times on the calendar, with or without a fraction or an offset", () => {
    for (const s of [
      "2026-11-28T14:00:00Z",
      "2026-11-28t14:00:00z",
      "2026-11-28 14:00:00",
      "2026-11-28T14:00:00.123456789+05:30",
      "2026-11-28T14:00:00.1-0800",
      "2024-02-29T23:59:59.000000Z",
      "2000-02-29T00:00:00Z",
      "0100-03-01T00:00:00Z",
    ])
      expect(dateTimeProblem(s), s).toBeUndefined();
  });

  it("refuses what is off the calendar or the grammar, in the pattern's words", () => {
    expect(dateTimeProblem("2025-02-29T00:00:00Z")).toBe("2025-02-29 is not a calendar date (February 2025 has 28 days)");
    expect(dateTimeProblem("1900-02-29T00:00:00Z")).toBe("1900-02-29 is not a calendar date (February 1900 has 28 days)");
    expect(dateTimeProblem("2026-13-01T00:00:00Z")).toBe("month 13 is not 01-12");
    expect(dateTimeProblem("2026-11-28T24:00:00Z")).toBe("24:00:00 is not a time of day (00:00:00-23:59:59)");
    expect(dateTimeProblem("2026-11-28T10:00:00+24:00")).toBe("the UTC offset is not +HH:MM with HH 00-23 and MM 00-59");
    for (const s of ["2026-11-28T10:00:00.1234567890Z", "2026-11-28T10:00:00.Z", "2026-11-28T10:00:00Z ", "2026-11-28", "hello 5"])
      expect(dateTimeProblem(s), s).toMatch(/^expected an RFC 3339 date-time/);
  });

  it("reads years before 100 as its pattern's Date.UTC does", () => {
    // Date.UTC takes years 0-99 as 1900-1999: 0004 is read as 1904, a leap year; 0000 as 1900, which is not one.
    expect(dateTimeProblem("0004-02-29T00:00:00Z")).toBeUndefined();
    expect(dateTimeProblem("0000-02-29T00:00:00Z")).toBe("0000-02-29 is not a calendar date (February 0 has 28 days)");
  });

  it("accepts exactly the strings on the calendar, near the grammar or anywhere", () => {
    fc.assert(
      fc.property(fc.oneof(nearDateTime, fc.string()), (s) => {
        expect(dateTimeProblem(s) === undefined).toBe(onTheCalendar(s));
      }),
      { numRuns: 3000 },
    );
  });
});
