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

export { stableUuid as deterministicUuid } from "../run/ids.js";
