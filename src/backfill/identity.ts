/**
 * Identity, so that backfilling a file again (renamed, recompressed, grown by
 * appends, or after a crash) sends exactly the records not yet sent, and two
 * different files never take each other's run ids.
 *
 * A record is known by its own content and place: its run id is derived
 * from SHA-256 of the line's text plus its key (the batch `custom_id`, or
 * the line number). Nothing about the file enters the id, so renaming,
 * re-gzipping or appending changes no id, and two files share an id only
 * for a byte-identical line at the same line number (or with the same
 * custom_id): the same logged call, stored once. (The earlier scheme, a
 * fingerprint of the file's first 64 KiB, broke on appends and gave two
 * files with a common beginning the same ids for different records.)
 *
 * A file's progress is known by its content too: a checkpoint entry holds
 * the SHA-256 of the first `offset` decompressed bytes, and a file matches
 * the entry when its own first `offset` bytes hash the same. A file grown by
 * appends still matches and goes on from `offset`; a different file does not.
 *
 * When the record carries its own time, the id is a UUIDv7 whose 48-bit
 * timestamp is that time, so ids still sort roughly by call time; a record
 * without one gets a version-8 UUID from the hash alone (the file's mtime
 * would change when the file is copied).
 */
import { createHash, type Hash } from "node:crypto";
import type { FilePosition } from "./checkpoint.js";
import { readLines } from "./lines.js";

/** The identity of one log line's content, used as the run id's seed together with the record's key. */
export function recordIdentity(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 32);
}

export interface Identified {
  /** The checkpoint entry this file continues, if any. */
  position?: FilePosition;
  /** SHA-256 state over the file's bytes up to `position.offset` (empty when none), to be continued while reading. */
  hash: Hash;
}

/**
 * Which of the checkpoint's entries (not yet taken by another input) this file
 * continues: the one with the longest prefix whose hash matches. Reads the file
 * only as far as the longest candidate.
 */
export async function identify(
  path: string,
  entries: readonly FilePosition[],
  taken: ReadonlySet<FilePosition>,
  maxLineBytes?: number,
): Promise<Identified> {
  const candidates = entries.filter((e) => e.offset > 0 && !taken.has(e));
  if (candidates.length === 0) return { hash: createHash("sha256") };
  const byOffset = new Map<number, FilePosition[]>();
  for (const e of candidates) byOffset.set(e.offset, [...(byOffset.get(e.offset) ?? []), e]);
  const furthest = Math.max(...byOffset.keys());
  const hash = createHash("sha256");
  let best: Identified = { hash: createHash("sha256") };
  for await (const l of readLines(path, { hash, maxLineBytes })) {
    const here = byOffset.get(l.end);
    if (here) {
      const digest = hash.copy().digest("hex");
      const match = here.find((e) => e.sha256 === digest);
      if (match) best = { position: match, hash: hash.copy() };
    }
    if (l.end >= furthest) break;
  }
  return best;
}

export { stableUuid as deterministicUuid } from "../run/ids.js";
