/**
 * Durable progress. The checkpoint says, per input file, up to which byte and
 * line every run has been acknowledged by the sink or dead-lettered, plus the
 * running counts and how long the dead-letter file was at that moment. It is
 * written atomically (temp file, fsync, rename), so a SIGKILL at any instant
 * leaves either the old or the new one.
 *
 * A file is known by its content, not its name: an entry holds the SHA-256 of
 * the file's first `offset` decompressed bytes (see identity.ts), so a renamed,
 * recompressed or appended file finds its entry and goes on from `offset`,
 * and a different file never does.
 *
 * Resuming re-reads from the recorded offsets. Lines after the offset may
 * have been sent before the crash; run ids are deterministic, so sending them
 * again updates the same runs instead of adding copies. The dead-letter file
 * is cut back to its recorded length so its lines are not repeated either.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { ConfigError } from "../errors.js";

export interface FilePosition {
  /** Where the file was last seen (for people reading the checkpoint; matching is by content). */
  path: string;
  /** Decompressed bytes done: every line ending at or before this offset is acknowledged or dead-lettered. */
  offset: number;
  /** Number of the line ending at `offset`. */
  line: number;
  /** SHA-256 (hex) of the file's first `offset` decompressed bytes. */
  sha256: string;
}

export interface Counts {
  lines: number;
  records: number;
  sent: number;
  deadLettered: number;
  skipped: number;
  estimated: number;
  errored: number;
  /** USD summed over the runs that had a cost. */
  cost: number;
  /** llm runs sent without a cost (no usage, or a model without a price). */
  unpriced: number;
}

export interface Checkpoint {
  version: 2;
  files: FilePosition[];
  counts: Counts;
  deadLetterBytes: number;
  updatedAt: string;
}

export function emptyCounts(): Counts {
  return { lines: 0, records: 0, sent: 0, deadLettered: 0, skipped: 0, estimated: 0, errored: 0, cost: 0, unpriced: 0 };
}

export function emptyCheckpoint(deadLetterBytes: number): Checkpoint {
  return { version: 2, files: [], counts: emptyCounts(), deadLetterBytes, updatedAt: "" };
}

export function loadCheckpoint(path: string): Checkpoint | undefined {
  if (!existsSync(path)) return undefined;
  let cp: Checkpoint;
  try {
    cp = JSON.parse(readFileSync(path, "utf8")) as Checkpoint;
  } catch (err) {
    throw new ConfigError([
      { loc: ["checkpoint"], msg: `${path} is not valid JSON (${(err as Error).message}); remove it to start over`, type: "value_error" },
    ]);
  }
  if ((cp as { version?: unknown })?.version === 1) {
    throw new ConfigError([
      {
        loc: ["checkpoint"],
        msg: `${path} was written by an older tracepipe (version 1, files known by their first 64 KiB); remove it to start over`,
        type: "value_error",
      },
    ]);
  }
  if (cp?.version !== 2 || !Array.isArray(cp.files))
    throw new ConfigError([
      { loc: ["checkpoint"], msg: `${path} is not a tracepipe backfill checkpoint (version 2)`, type: "value_error" },
    ]);
  return { ...cp, counts: { ...emptyCounts(), ...cp.counts } };
}

export function saveCheckpoint(path: string, cp: Checkpoint): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp`;
  const fd = openSync(tmp, "w");
  try {
    writeSync(fd, JSON.stringify({ ...cp, updatedAt: new Date().toISOString() }, null, 1));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}
