/**
 * Timestamps are stored in one fixed-width form, `YYYY-MM-DDTHH:MM:SS.ffffffZ`,
 * so string order is time order (indexes, cursors) and microseconds survive
 * (Date would cut them to milliseconds).
 */
const ISO = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})(:\d{2})?(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?$/i;

const DATE = /^\d{4}-\d{2}-\d{2}$/;

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Two digits of `s` at `i` as a number (the regex has checked they are digits). */
const two = (s: string, i: number) => (s.charCodeAt(i) - 48) * 10 + s.charCodeAt(i + 1) - 48;

/** Whether `YYYY-MM-DD` and `HH:MM` (and `:SS`) name a real time: Date.parse rolls 30 February over into March. */
function inRange(date: string, hm: string, sec: string | undefined): boolean {
  const y = two(date, 0) * 100 + two(date, 2);
  const month = two(date, 5);
  const day = two(date, 8);
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  const days = month === 2 && leap ? 29 : DAYS[month - 1];
  return days !== undefined && day >= 1 && day <= days && two(hm, 0) <= 23 && two(hm, 3) <= 59 && (sec === undefined || two(sec, 1) <= 59);
}

/** The stored form itself, which canonicalTime gives back unchanged (most clients send it). */
const CANONICAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/**
 * A time without an offset is UTC, with or without its seconds: Date alone
 * would read `2026-11-20T10:00` in the process's time zone and
 * `2026-11-20T10:00:00` in UTC, so one query or run could mean two instants.
 */
export function canonicalTime(value: string): string | undefined {
  if (CANONICAL.test(value)) return value;
  const m = ISO.exec(value);
  if (!m && DATE.test(value)) return canonicalTime(`${value}T00:00:00`);
  // Each field in its range (no 25:99, no 30 February): Date would roll such a text over into another day.
  if (m && !inRange(m[1]!, m[2]!, m[3])) return undefined;
  if (m && (m[5] === undefined || m[5].toUpperCase() === "Z")) {
    return `${m[1]}T${m[2]}${m[3] ?? ":00"}.${(m[4] ?? "").padEnd(6, "0").slice(0, 6)}Z`;
  }
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) return undefined;
  // An offset: convert through Date, then put back the sub-millisecond digits it dropped.
  const micro = m?.[4] ? m[4].padEnd(6, "0").slice(3, 6) : "000";
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, `.$1${micro}Z`);
}

/** Milliseconds between two stored times, keeping the microseconds Date.parse drops. */
export function msBetween(a: string | null | undefined, b: string | null | undefined): number | null {
  if (!a || !b) return null;
  const d = Date.parse(b) - Date.parse(a);
  if (!Number.isFinite(d)) return null;
  const micro = (t: string) => Number(/\.\d{3}(\d{3})Z$/.exec(t)?.[1] ?? 0);
  return d + (micro(b) - micro(a)) / 1000;
}
