/**
 * What a backfill has durably done: the checkpoint (positions and counts),
 * the dead-letter file, and the check that every run handed to the client
 * was acknowledged before a position is saved.
 *
 * The rules that make a killed backfill lose and repeat nothing:
 * - A position is saved only after `client.flush()` and only when nothing
 *   handed over since the last save went to the client's spool: flush
 *   resolves once every run is delivered, refused by the server (dead-lettered
 *   by the client), or spooled, so "nothing spooled" means "every run
 *   acknowledged or dead-lettered". After a spool the positions stay where
 *   they were for the rest of the process; a rerun sends those records again
 *   (same ids, so no copies).
 * - The dead-letter file is fsynced before the checkpoint that counts its
 *   length, and cut back to that length on resume: lines read after the last
 *   checkpoint are read, and dead-lettered, again. A fresh run with a
 *   checkpoint path saves a checkpoint before reading anything, so a process
 *   killed before its first periodic save is cut back too.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, statSync, truncateSync, writeSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { Hash } from "node:crypto";
import { ValidationError, type Issue } from "../errors.js";
import type { Client } from "../ingest/client.js";
import { emptyCheckpoint, loadCheckpoint, saveCheckpoint, type Checkpoint, type FilePosition } from "./checkpoint.js";
import { lockPath } from "./lock.js";
import type { BadLine } from "./reader.js";

function reasonOf(err: unknown): { reason: string; errors?: Issue[] } {
  if (err instanceof ValidationError) return { reason: err.message, errors: err.issues };
  return { reason: err instanceof Error ? err.message : String(err) };
}

/** Acknowledgement of runs handed to the client, from its public counters. */
class Acks {
  private spooledAt: number;
  private stuck = false;
  /** Runs handed over since the last time all were acknowledged. */
  pending = 0;

  constructor(private readonly client: Client) {
    this.spooledAt = client.stats.spooled;
  }

  /** Flush; true when every run handed over so far is acknowledged or dead-lettered. */
  async settle(): Promise<boolean> {
    await this.client.flush();
    if (this.client.stats.spooled !== this.spooledAt) this.stuck = true;
    if (this.stuck) return false;
    this.pending = 0;
    return true;
  }
}

export interface LedgerOptions {
  checkpointPath?: string;
  deadLetterPath: string;
  /** Write nothing durable but the dead letters. */
  dryRun?: boolean;
  client?: Client;
}

export class Ledger {
  readonly checkpoint: Checkpoint;
  readonly resumed: boolean;
  private readonly fd: number;
  private readonly acks?: Acks;
  private deadLetterBytes: number;
  /** The dead-letter file's length when the current position was reached: what a checkpoint may count. */
  private deadLetterBytesAtPosition: number;
  private current?: { pos: FilePosition; hash: Hash; synced: boolean };

  private readonly unlock: (() => void)[] = [];

  constructor(private readonly o: LedgerOptions) {
    const path = o.checkpointPath && !o.dryRun ? o.checkpointPath : undefined;
    let previous: Checkpoint | undefined;
    let bytes: number;
    try {
      // Before anything is read or cut back: another process may be using these files.
      if (path) this.unlock.push(lockPath(path, "checkpoint"));
      this.unlock.push(lockPath(o.deadLetterPath, "dead-letter"));
      previous = path ? loadCheckpoint(path) : undefined;
      mkdirSync(dirname(resolve(o.deadLetterPath)), { recursive: true });
      bytes = existsSync(o.deadLetterPath) ? statSync(o.deadLetterPath).size : 0;
      if (previous && bytes > previous.deadLetterBytes) {
        // Lines dead-lettered after the last checkpoint will be read, and dead-lettered, again.
        truncateSync(o.deadLetterPath, previous.deadLetterBytes);
        bytes = previous.deadLetterBytes;
      }
      this.fd = openSync(o.deadLetterPath, "a");
    } catch (err) {
      this.releaseLocks();
      throw err;
    }
    this.deadLetterBytes = bytes;
    this.deadLetterBytesAtPosition = bytes;
    this.resumed = previous !== undefined;
    this.checkpoint = previous ?? emptyCheckpoint(bytes);
    this.acks = o.client && !o.dryRun ? new Acks(o.client) : undefined;
    if (path && !previous) saveCheckpoint(path, this.checkpoint);
  }

  private releaseLocks(): void {
    for (const release of this.unlock.splice(0)) release();
  }

  get counts() {
    return this.checkpoint.counts;
  }

  /** Runs handed over but not yet known to be acknowledged. */
  get unacknowledged(): number {
    return this.acks?.pending ?? 0;
  }

  deadLetter(file: string, bad: BadLine): void {
    const text = JSON.stringify({ file, line: bad.line, ...reasonOf(bad.error), raw: bad.raw }) + "\n";
    this.deadLetterBytes += writeSync(this.fd, text);
    this.counts.deadLettered++;
  }

  handedOver(): void {
    if (this.acks) this.acks.pending++;
  }

  /** The position entry an input continues (from the checkpoint), or a new one. */
  track(path: string, existing: FilePosition | undefined, hash: Hash): FilePosition {
    this.seal();
    let pos = existing;
    if (!pos) this.checkpoint.files.push((pos = { path, offset: 0, line: 0, sha256: "" }));
    pos.path = path;
    this.current = { pos, hash, synced: true };
    return pos;
  }

  /**
   * The current file's reader yielded an item: with `done`, everything up to
   * that position is handed over (and the reader's hash stands exactly
   * there); without, the hash has moved past the saved position.
   */
  at(done: { offset: number; line: number } | undefined): void {
    const cur = this.current!;
    if (done) {
      cur.pos.offset = done.offset;
      cur.pos.line = done.line;
      this.deadLetterBytesAtPosition = this.deadLetterBytes;
    }
    cur.synced = done !== undefined;
  }

  /**
   * Make progress durable: flush the client; when every run is acknowledged,
   * fsync the dead letters and save the checkpoint. Returns whether it did.
   */
  async commit(): Promise<boolean> {
    if (this.acks && !(await this.acks.settle())) return false;
    if (!this.o.checkpointPath || this.o.dryRun) return true;
    this.seal();
    fsyncSync(this.fd);
    // Lines dead-lettered past the saved position will be read, and dead-lettered, again on resume.
    saveCheckpoint(this.o.checkpointPath, { ...this.checkpoint, deadLetterBytes: this.deadLetterBytesAtPosition });
    return true;
  }

  /** The current file's identity up to its position: its reader is paused right after that position (or done). */
  private seal(): void {
    const cur = this.current;
    if (cur?.synced && cur.pos.offset > 0) cur.pos.sha256 = cur.hash.copy().digest("hex");
  }

  close(): void {
    closeSync(this.fd);
    this.releaseLocks();
  }
}
