/**
 * Durable progress. The checkpoint says, per input file (by fingerprint), up
 * to which byte and line every run has been acknowledged by the sink
 * (delivered, dead-lettered by the server, or safe in the client's spool),
 * plus the running counts and how long the dead-letter file was at that
 * moment. It is written atomically (temp file, fsync, rename), so a SIGKILL
 * at any instant leaves either the old or the new one.
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
  path: string;
  offset: number;
  line: number;
  done: boolean;
}

export interface Counts {
  lines: number;
  records: number;
  sent: number;
  deadLettered: number;
  skipped: number;
  estimated: number;
  errored: number;
}

export interface Checkpoint {
  version: 1;
  files: Record<string, FilePosition>;
  counts: Counts;
  deadLetterBytes: number;
  updatedAt: string;
}

export function emptyCounts(): Counts {
  return { lines: 0, records: 0, sent: 0, deadLettered: 0, skipped: 0, estimated: 0, errored: 0 };
}

export function loadCheckpoint(path: string): Checkpoint | undefined {
  if (!existsSync(path)) return undefined;
  let cp: Checkpoint;
  try {
    cp = JSON.parse(readFileSync(path, "utf8")) as Checkpoint;
  } catch (err) {
    throw new ConfigError([{ loc: ["checkpoint"], msg: `${path} is not valid JSON (${(err as Error).message}); remove it to start over`, type: "value_error" }]);
  }
  if (cp?.version !== 1 || typeof cp.files !== "object") throw new ConfigError([{ loc: ["checkpoint"], msg: `${path} is not a tracepipe backfill checkpoint (version 1)`, type: "value_error" }]);
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
