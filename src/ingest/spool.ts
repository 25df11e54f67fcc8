/**
 * The on-disk spool: append-only JSONL segment files of queued ops, so a run is
 * never dropped when memory is full, the endpoint stays down, or the process
 * exits. A segment is claimed for replay by an atomic rename (so two processes
 * sharing a spool never replay the same file) and deleted only after every op
 * in it was delivered or dead-lettered. A crash mid-replay leaves the claimed
 * file, which the next start takes over once its owner is gone; replaying it
 * again is safe because the server is idempotent by run id.
 *
 * A segment's name says when it may be replayed, the sequence number of its
 * oldest op and how many ops it holds:
 * `segment-<due ms>-<seq>-<count>-<pid>-<random>.jsonl`. Names sort by due
 * time, then sequence, so segments holding older updates of a run replay first.
 *
 * Disk trouble never reaches the host: a directory that
 * cannot be created or written is given up for one under os.tmpdir(); when that
 * fails too, the write reports false and the caller counts the runs as dropped.
 */
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createHash, randomBytes } from "node:crypto";
import { makeSafe } from "../run/safe.js";
import type { Attachments, Op } from "./ops.js";

const SEGMENT_BYTES = 8 * 1024 * 1024;

interface Line {
  kind: Op["kind"];
  id: string;
  seq?: number;
  run: Record<string, unknown>;
  attachments?: Record<string, [string, string]>;
}

/** One op as a JSON line. The run was made safe when it was handed over; the fallback only guards against a bug elsewhere. */
export function encodeLine(op: Op): string {
  const line: Line = { kind: op.kind, id: op.id, seq: op.seq, run: op.run };
  if (op.attachments) {
    line.attachments = {};
    for (const [k, [mime, data]] of Object.entries(op.attachments))
      line.attachments[k] = [mime, Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("base64")];
  }
  try {
    return JSON.stringify(line) + "\n";
  } catch {
    return JSON.stringify(makeSafe(line).value) + "\n";
  }
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
    if (typeof line?.id !== "string" || typeof line.run !== "object" || line.run === null) continue;
    let attachments: Attachments | undefined;
    if (line.attachments) {
      attachments = {};
      for (const [k, [mime, b64]] of Object.entries(line.attachments)) attachments[k] = [mime, Buffer.from(b64, "base64")];
    }
    ops.push({
      kind: line.kind === "patch" || line.kind === "feedback" ? line.kind : "post",
      id: line.id,
      seq: typeof line.seq === "number" ? line.seq : 0,
      run: line.run,
      attachments,
      bytes: raw.length,
      segments: [segment],
    });
  }
  return ops;
}

function countLines(path: string): number {
  try {
    const text = readFileSync(path, "utf8");
    let n = 0;
    for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
    return n;
  } catch {
    return 0;
  }
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

const NAME = /^segment-(\d+)-(\d+)-(\d+)-(\d+)-[0-9a-f]+\.jsonl(\.open|\.replaying-(\d+))?$/;
/** Segments written before names carried a sequence and a count: `segment-<due>-<pid>-<random>.jsonl`. */
const OLD_NAME = /^segment-(\d+)-(\d+)-([0-9a-f]+)\.jsonl(\.open|\.replaying-(\d+))?$/;

/** An old name as a NAME match: sequence 0, count -1 (unknown: pendingOps counts its lines). */
function oldMatch(name: string): RegExpExecArray | undefined {
  const o = OLD_NAME.exec(name);
  if (!o) return undefined;
  const m = [name, o[1]!, "0", "-1", o[2]!, o[4], o[5]] as unknown as RegExpExecArray;
  return m;
}

/** A segment's identity across the renames of sealing and claiming: its random part. */
export function keyOf(path: string): string {
  return /-([0-9a-f]{8})\.jsonl/.exec(path)?.[1] ?? path;
}

function segmentName(due: number, seq: number, count: number): string {
  return `segment-${String(Math.max(0, Math.floor(due))).padStart(13, "0")}-${String(seq).padStart(17, "0")}-${count}-${process.pid}-${randomBytes(4).toString("hex")}.jsonl`;
}

export interface SpoolOptions {
  /** Told once per directory given up, and once when no directory works. */
  warn?: (msg: string) => void;
  /** The fallback directory. Default: one under os.tmpdir() named after `dir`. */
  fallbackDir?: string;
}

export class Spool {
  private current?: { path: string; fd: number; bytes: number; count: number; dir: string; due: number };
  /** Directories to write to, in order; the first one that works is used until it fails. */
  private readonly dirs: string[];
  private active = 0;
  /** When the earliest segment not yet due may be replayed (set by claim()). */
  nextDueAt?: number;

  constructor(
    readonly dir: string,
    private readonly opts: SpoolOptions = {},
  ) {
    const fallback =
      opts.fallbackDir ?? join(tmpdir(), `tracepipe-spool-${createHash("sha256").update(resolve(dir)).digest("hex").slice(0, 16)}`);
    this.dirs = resolve(fallback) === resolve(dir) ? [dir] : [dir, fallback];
  }

  /** The directory written to now, or undefined when none works. */
  get writeDir(): string | undefined {
    return this.dirs[this.active];
  }

  /** Whether a spool directory can be made now (giving up those that cannot, as a write would). */
  usable(): boolean {
    return this.withDir(() => true) === true;
  }

  /** Run `fn` against the active directory; on an I/O error give that directory up and try the next. */
  private withDir<T>(fn: (dir: string) => T): T | undefined {
    while (this.active < this.dirs.length) {
      const dir = this.dirs[this.active]!;
      try {
        mkdirSync(dir, { recursive: true });
        return fn(dir);
      } catch (err) {
        this.active++;
        const next = this.dirs[this.active];
        this.opts.warn?.(
          next
            ? `tracepipe: spool directory ${dir} is not writable (${(err as Error).message}); using ${next}`
            : `tracepipe: no writable spool directory (${dir}: ${(err as Error).message}); runs that cannot be delivered now are dropped and counted in client.stats.dropped`,
        );
      }
    }
    return undefined;
  }

  /** Close the segment being written and make it visible to replay. */
  seal(): void {
    const c = this.current;
    if (!c) return;
    this.current = undefined;
    try {
      fsyncSync(c.fd);
    } catch {
      // best effort: the rename below still makes what reached the file replayable
    }
    try {
      closeSync(c.fd);
      if (c.bytes === 0) unlinkSync(c.path);
      else renameSync(c.path, c.path.replace(/-0-(\d+-[0-9a-f]+\.jsonl)\.open$/, `-${c.count}-$1`));
    } catch {
      // An .open file left behind is claimed once this process is gone.
    }
  }

  /**
   * Append ops synchronously to the open segment (also usable from a process
   * 'exit' handler). Returns the segment's due time and key (see keyOf), or
   * undefined when no directory works.
   */
  append(ops: readonly Op[]): { due: number; key: string } | undefined {
    if (ops.length === 0) return undefined;
    const text = ops.map(encodeLine).join("");
    if (this.current && this.current.bytes + text.length > SEGMENT_BYTES) this.seal();
    return this.withDir((dir) => {
      if (this.current && this.current.dir !== dir) this.seal();
      if (!this.current) {
        const due = Date.now();
        const path = join(dir, `${segmentName(due, ops[0]!.seq, 0)}.open`);
        this.current = { path, fd: openSync(path, "a"), bytes: 0, count: 0, dir, due };
      }
      const c = this.current;
      try {
        writeSync(c.fd, text);
      } catch (err) {
        this.seal();
        throw err;
      }
      c.bytes += text.length;
      c.count += ops.length;
      return { due: c.due, key: keyOf(c.path) };
    });
  }

  /**
   * Write ops as a sealed segment of their own, replayable from `dueAt`
   * (default now). Used for batches that kept failing, and on the exit path.
   * False when no directory works.
   */
  appendSealed(ops: readonly Op[], dueAt = Date.now(), hold = false): boolean {
    if (ops.length === 0) return true;
    const text = ops.map(encodeLine).join("");
    let seq = ops[0]!.seq;
    for (const o of ops) seq = Math.min(seq, o.seq);
    const ok = this.withDir((dir) => {
      const name = segmentName(dueAt, seq, ops.length);
      const path = join(dir, name);
      writeFileSync(path + ".open", text);
      renameSync(path + ".open", path);
      if (hold) this.held.add(name);
      return true;
    });
    return ok === true;
  }

  /**
   * Segments written with `hold` (a batch that failed while a flush waited)
   * are not claimed by this process until releaseHeld(), even once due: read
   * back at once they would fail again, and the client would never go idle,
   * so the flush spun on a down endpoint (a backfill test made 19,000
   * connection attempts for 300 runs, and its flushes took 1 to 60 s
   * depending on the disk). Other processes may claim them.
   */
  private readonly held = new Set<string>();

  /** Let this process claim the held segments again; false when none was held. */
  releaseHeld(): boolean {
    if (this.held.size === 0) return false;
    this.held.clear();
    return true;
  }

  private listAll(): { dir: string; name: string; m: RegExpExecArray }[] {
    const out: { dir: string; name: string; m: RegExpExecArray }[] = [];
    for (const dir of this.dirs) {
      let names: string[];
      try {
        if (!existsSync(dir)) continue;
        names = readdirSync(dir);
      } catch {
        continue;
      }
      for (const name of names) {
        const m = NAME.exec(name) ?? oldMatch(name);
        if (m) out.push({ dir, name, m });
      }
    }
    return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** A segment another process left that nobody is writing or replaying any more, or a sealed one. */
  private replayable(m: RegExpExecArray): boolean {
    if (m[5] === undefined) return true;
    if (m[5] === ".open") return Number(m[4]) !== process.pid && !alive(Number(m[4]));
    return !alive(Number(m[6]));
  }

  /**
   * Claim replayable segments that are due, oldest first, until they hold at
   * least `minOps` ops (one listing of the directory for all of them); sets
   * nextDueAt to the earliest segment that is not due yet.
   */
  claim(minOps = 1): { segment: string; ops: Op[] }[] {
    const now = Date.now();
    const out: { segment: string; ops: Op[] }[] = [];
    let n = 0;
    this.nextDueAt = undefined;
    for (const { dir, name, m } of this.listAll()) {
      if (!this.replayable(m) || this.held.has(name)) continue;
      const due = Number(m[1]);
      if (due > now) {
        // A failed batch waiting for its retry time; names sort by due time, so all later ones wait too.
        this.nextDueAt = due;
        break;
      }
      if (n >= minOps) break;
      const base = name.replace(/(\.open|\.replaying-\d+)$/, "");
      const target = join(dir, `${base}.replaying-${process.pid}`);
      try {
        renameSync(join(dir, name), target);
      } catch {
        continue; // another process took it first
      }
      let text = "";
      try {
        text = readFileSync(target, "utf8");
      } catch {
        continue; // unreadable now; the rename leaves it for the next process
      }
      const ops = decode(text, target);
      out.push({ segment: target, ops });
      n += ops.length;
    }
    return out;
  }

  /** Every op of this segment is accounted for. */
  release(segment: string): void {
    try {
      unlinkSync(segment);
    } catch {
      // already gone
    }
  }

  /** Ops waiting in the spool (due or not, this process's open segment included; not those claimed by a live process). */
  pendingOps(): number {
    let n = this.current?.count ?? 0;
    for (const { dir, name, m } of this.listAll()) {
      if (!this.replayable(m)) continue;
      const count = Number(m[3]);
      // A dead process's open segment, or an old name: the count is not in the name.
      n += m[5] === ".open" || count < 0 ? countLines(join(dir, name)) : count;
    }
    return n;
  }
}
