/**
 * Run ids and times.
 *
 * - uuidv7 (RFC 9562): 48-bit Unix milliseconds, then a 12-bit counter that
 *   increases within one millisecond (seeded randomly each new millisecond), then
 *   62 random bits. Ids made by one process sort in creation order.
 * - Microsecond timestamps from performance.timeOrigin + performance.now(),
 *   forced strictly increasing, so `dotted_order` segments of siblings started in
 *   the same millisecond still sort chronologically.
 */
import { hash, randomFillSync } from "node:crypto";

const pool = new Uint8Array(256 * 16);
let poolPos = pool.length;

/** Where the next 10 random bytes start in `pool` (read in place: no view made per id). */
function random10(): number {
  if (poolPos + 10 > pool.length) {
    randomFillSync(pool);
    poolPos = 0;
  }
  const at = poolPos;
  poolPos += 10;
  return at;
}

/** The two hex digits of each byte value, as character codes. */
const HEX_CODES = new Uint8Array(512);
for (let i = 0; i < 256; i++) {
  HEX_CODES[2 * i] = "0123456789abcdef".charCodeAt(i >> 4);
  HEX_CODES[2 * i + 1] = "0123456789abcdef".charCodeAt(i & 15);
}
/**
 * The id is written as text into this buffer and read out as one string: building it from
 * sixteen two-digit strings made a string per piece for every id.
 */
const TEXT = Buffer.alloc(36, 0x2d); // the dashes stay where they are
/** Where byte i of the UUID goes in its 8-4-4-4-12 text. */
const AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];
function put(i: number, byte: number): void {
  const p = AT[i]!;
  TEXT[p] = HEX_CODES[2 * byte]!;
  TEXT[p + 1] = HEX_CODES[2 * byte + 1]!;
}

let lastMs = -1;
let counter = 0;

export function uuidv7(nowMs: number = Date.now()): string {
  let ms = Math.floor(nowMs);
  const r = random10();
  if (ms > lastMs) {
    lastMs = ms;
    counter = ((pool[r]! << 8) | pool[r + 1]!) & 0x7ff; // leave headroom so the counter rarely overflows
  } else {
    ms = lastMs;
    counter++;
    if (counter > 0xfff) {
      // Counter exhausted inside one millisecond: borrow the next millisecond, staying monotonic.
      lastMs = ++ms;
      counter = 0;
    }
  }
  put(0, Math.floor(ms / 2 ** 40) & 0xff);
  put(1, Math.floor(ms / 2 ** 32) & 0xff);
  put(2, (ms >>> 24) & 0xff);
  put(3, (ms >>> 16) & 0xff);
  put(4, (ms >>> 8) & 0xff);
  put(5, ms & 0xff);
  put(6, 0x70 | ((counter >>> 8) & 0x0f));
  put(7, counter & 0xff);
  put(8, 0x80 | (pool[r + 2]! & 0x3f));
  for (let i = 9; i < 16; i++) put(i, pool[r + i - 6]!);
  return TEXT.toString("latin1", 0, 36);
}

let lastMicros = 0;
/** Fixed for the life of the process; read once (the getter costs as much as performance.now()). */
const TIME_ORIGIN = performance.timeOrigin;

/** Microseconds since the Unix epoch, strictly increasing within this process. */
export function nowMicros(): number {
  const us = Math.floor((TIME_ORIGIN + performance.now()) * 1000);
  lastMicros = us > lastMicros ? us : lastMicros + 1;
  return lastMicros;
}

function pad(n: number, w: number): string {
  return String(n).padStart(w, "0");
}

/**
 * The date and time to the second of `us`, in both layouts. Runs come in
 * bursts within the same second (a span's start, end and dotted_order, and
 * its neighbours'), so the last second's strings are kept and only the
 * microseconds are formatted anew.
 */
let cachedSecond = NaN;
let cachedIso = "";
let cachedDotted = "";
function secondOf(us: number): number {
  const sec = Math.floor(us / 1_000_000);
  if (sec !== cachedSecond) {
    const d = new Date(sec * 1000);
    const y = d.getUTCFullYear();
    const mo = pad(d.getUTCMonth() + 1, 2);
    const day = pad(d.getUTCDate(), 2);
    const h = pad(d.getUTCHours(), 2);
    const mi = pad(d.getUTCMinutes(), 2);
    const se = pad(d.getUTCSeconds(), 2);
    cachedIso = `${y}-${mo}-${day}T${h}:${mi}:${se}`;
    cachedDotted = `${y}${mo}${day}T${h}${mi}${se}`;
    cachedSecond = sec;
  }
  return sec;
}

/** The microseconds within the second, six digits. */
function micros6(us: number, sec: number): string {
  return pad(us - sec * 1_000_000, 6);
}

/** `2026-11-22T10:15:00.123456Z` */
export function isoMicros(us: number): string {
  const sec = secondOf(us);
  return `${cachedIso}.${micros6(us, sec)}Z`;
}

/** A dotted_order segment: `YYYYMMDDTHHMMSSffffffZ` followed by the run id. */
export function dottedSegment(us: number, id: string): string {
  const sec = secondOf(us);
  return `${cachedDotted}${micros6(us, sec)}Z${id}`;
}

/**
 * A UUID that is a pure function of `parts`: SHA-256 of them, as a UUIDv7
 * whose 48-bit timestamp is `timeMs` when given (the run record contract, and
 * ids still sort by time), else as a version-8 UUID (RFC 9562's custom layout).
 * Backfill and span conversion use it so that converting the same input twice
 * yields the same runs, not duplicates.
 */
export function stableUuid(parts: string[], timeMs?: number): string {
  // crypto.hash to hex: one call, with no Buffer made for the digest (a Buffer per id cost as much as the
  // hash); the version and variant bits are set on the text. The same id as from the digest's bytes.
  const h = hash("sha256", parts.join("\u0000"), "hex");
  let head: string;
  let version: string;
  if (timeMs !== undefined && Number.isFinite(timeMs) && timeMs >= 0 && timeMs < 2 ** 48) {
    head = Math.floor(timeMs).toString(16).padStart(12, "0");
    version = "7";
  } else {
    head = h.slice(0, 12);
    version = "8"; // RFC 9562's custom layout
  }
  // The variant: the top two bits of byte 8 are 10.
  const variant = VARIANT[h.charCodeAt(16)]!;
  return `${head.slice(0, 8)}-${head.slice(8, 12)}-${version}${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** A hex digit (by its character code) with its top two bits made 10: the RFC 9562 variant nibble. */
const VARIANT: string[] = [];
for (let d = 0; d < 16; d++) VARIANT["0123456789abcdef".charCodeAt(d)] = ((d & 0x3) | 0x8).toString(16);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A UUID in its canonical 8-4-4-4-12 hex form (any version, either case). */
export function isUuid(v: unknown): v is string {
  return typeof v === "string" && UUID.test(v);
}
