/**
 * Deterministic run ids, so backfilling the same file twice (or resuming
 * after a crash) updates runs instead of duplicating them.
 *
 * A file is known by a fingerprint of its content, not its path: the SHA-256
 * of its first 64 KiB (as stored on disk). Moving or renaming a file keeps its
 * runs' ids; appending to it keeps the ids of the lines already there.
 * A run id is made from SHA-256(fingerprint + record key), where the key is
 * the batch `custom_id` when the format has one and the line number otherwise.
 * When the record carries its own time, the id is a UUIDv7 (the run record
 * contract) whose 48-bit timestamp is that time, so ids still sort roughly by
 * call time; a record without one gets a version-8 UUID (RFC 9562's custom
 * layout) from the hash alone, since the only other time at hand, the file's
 * mtime, changes when the file is copied and would break idempotency.
 */
import { createHash } from "node:crypto";
import { openSync, readSync, closeSync } from "node:fs";

const HEAD = 64 * 1024;

export function fileFingerprint(path: string): string {
  const fd = openSync(path, "r");
  try {
    const buf = Buffer.alloc(HEAD);
    let n = 0;
    while (n < HEAD) {
      const got = readSync(fd, buf, n, HEAD - n, n);
      if (got === 0) break;
      n += got;
    }
    return createHash("sha256").update(buf.subarray(0, n)).digest("hex").slice(0, 32);
  } finally {
    closeSync(fd);
  }
}

export function deterministicUuid(parts: string[], timeMs?: number): string {
  const h = createHash("sha256").update(parts.join("\u0000")).digest();
  if (timeMs !== undefined && Number.isFinite(timeMs) && timeMs >= 0 && timeMs < 2 ** 48) {
    const ms = Math.floor(timeMs);
    h.writeUIntBE(ms, 0, 6);
    h[6] = (h[6]! & 0x0f) | 0x70; // version 7
  } else h[6] = (h[6]! & 0x0f) | 0x80; // version 8
  h[8] = (h[8]! & 0x3f) | 0x80; // RFC 9562 variant
  const x = h.subarray(0, 16).toString("hex");
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}
