/**
 * Days in a month of the proleptic Gregorian calendar, the one Date and
 * PostgreSQL both use: the run checks and the stores judge dates by number
 * with it instead of building a Date per value.
 */
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The days of `month` (1–12) in `year`. */
export function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return DAYS_IN_MONTH[month - 1]!;
}
