/**
 * The on-disk spool: append-only JSONL segment files of queued ops, so a run is
 * never dropped when memory is full, the endpoint stays down, or the process
 * exits. A segment is claimed for replay by an atomic rename (so two processes
 * sharing a spool never replay the same file) and deleted only after every op
 * in it was delivered or dead-lettered. A crash mid-replay leaves the claimed
 * file, which the next start takes over once its owner is gone; replaying it
 * again is safe because the server is idempotent by run id.
 */
import { appendFileSync, closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import type { Attachments, Op } from "./ops.js";

const SEGMENT_BYTES = 8 * 1024 * 1024;

interface Line {
  kind: Op["kind"];
  id: string;
  run: Record<string, unknown>;
  attachments?: Record<string, [string, string]>;
}

function encode(op: Op): string {
  const line: Line = { kind: op.kind, id: op.id, run: op.run };
  if (op.attachments) {
    line.attachments = {};
    for (const [k, [mime, data]] of Object.entries(op.attachments)) line.attachments[k] = [mime, Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("base64")];
  }
  return JSON.stringify(line) + "\n";
}

function decode(text: string, segment: string): Op[] {
  const ops: Op[] = [];
  for (const raw of text.split("\n")) {
    if (raw === "") continue;
    let line: Line;
    try {
      line = JSON.parse(raw) as Line;
    } catch {
      continue; // a torn last line from a crash mid-append: its op was also still in memory or in flight
    }
    let attachments: Attachments | undefined;
    if (line.attachments) {
      attachments = {};
      for (const [k, [mime, b64]] of Object.entries(line.attachments)) attachments[k] = [mime, Buffer.from(b64, "base64")];
    }
    ops.push({ kind: line.kind, id: line.id, run: line.run, attachments, bytes: raw.length, segment });
  }
  return ops;
}

function alive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

export class Spool {
  private current?: { path: string; fd: number; bytes: number };

  constructor(readonly dir: string) {}

  private ensureDir(): void {
    mkdirSync(this.dir, { recursive: true });
  }

  private segmentFor(bytes: number): { path: string; fd: number; bytes: number } {
    if (this.current && this.current.bytes + bytes <= SEGMENT_BYTES) return this.current;
    this.seal();
    this.ensureDir();
    const path = join(this.dir, `segment-${Date.now()}-${process.pid}-${randomBytes(4).toString("hex")}.jsonl.open`);
    this.current = { path, fd: openSync(path, "a"), bytes: 0 };
    return this.current;
  }

  /** Close the segment being written and make it visible to replay. */
  seal(): void {
    const c = this.current;
    if (!c) return;
    this.current = undefined;
    try {
      fsyncSync(c.fd);
    } finally {
      closeSync(c.fd);
    }
    if (c.bytes === 0) unlinkSync(c.path);
    else renameSync(c.path, c.path.replace(/\.open$/, ""));
  }

  /** Append ops synchronously (also usable from a process 'exit' handler). */
  append(ops: readonly Op[]): void {
    if (ops.length === 0) return;
    const text = ops.map(encode).join("");
    const seg = this.segmentFor(text.length);
    writeSync(seg.fd, text);
    seg.bytes += text.length;
  }

  /**
   * Write ops as a sealed segment of their own, replayable from `delayMs` from now
   * (the time is in the file name, so segments sort by when they may be retried).
   * Used for batches that kept failing, and on the exit path.
   */
  appendSealed(ops: readonly Op[], delayMs = 0): void {
    if (ops.length === 0) return;
    this.ensureDir();
    const path = join(this.dir, `segment-${Date.now() + delayMs}-${process.pid}-${randomBytes(4).toString("hex")}.jsonl`);
    const tmp = path + ".open";
    appendFileSync(tmp, ops.map(encode).join(""));
    renameSync(tmp, path);
  }

  /** Claim the oldest replayable segment: sealed ones, or ones claimed by a process that is gone. */
  claim(): { segment: string; ops: Op[] } | undefined {
    if (!existsSync(this.dir)) return undefined;
    const names = readdirSync(this.dir).sort();
    const now = Date.now();
    for (const name of names) {
      const due = /^segment-(\d+)-/.exec(name);
      if (due && Number(due[1]) > now) continue; // a failed batch waiting for its retry time
      let from: string | undefined;
      if (/^segment-.*\.jsonl$/.test(name)) from = name;
      else {
        const m = /^segment-.*\.jsonl\.replaying-(\d+)$/.exec(name);
        if (m && !alive(Number(m[1]))) from = name;
      }
      if (!from) continue;
      const base = from.replace(/\.replaying-\d+$/, "");
      const target = join(this.dir, `${base}.replaying-${process.pid}`);
      try {
        renameSync(join(this.dir, from), target);
      } catch {
        continue; // another process took it first
      }
      return { segment: target, ops: decode(readFileSync(target, "utf8"), target) };
    }
    return undefined;
  }

  /** Every op of this segment is accounted for. */
  release(segment: string): void {
    try {
      unlinkSync(segment);
    } catch {
      // already gone
    }
  }

  /** Bytes waiting on disk (sealed and in-progress segments, not counting claimed ones). */
  pendingBytes(): number {
    if (!existsSync(this.dir)) return 0;
    let n = 0;
    for (const name of readdirSync(this.dir)) if (/^segment-.*\.jsonl(\.open)?$/.test(name)) n += statSync(join(this.dir, name)).size;
    return n;
  }
}
