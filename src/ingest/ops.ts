/**
 * What the client queues: one create (post) or update (patch) of a run, with
 * its approximate encoded size so memory can be bounded, and its sequence
 * number so updates of one run apply in the order they were made. Ops of one
 * id that meet (in the queue, parked behind an op in flight, or read back from
 * the spool) are merged into one, the newer fields winning.
 */
import type { Run, RunPatch } from "../run/schema.js";
import { checkSafe, DEFAULT_MAX_BYTES, makeSafe, type SafeLimits } from "../run/safe.js";
import { decodeRun, releaseEncoded, type EncodedRun } from "./encoded-run.js";

export type Attachments = Record<string, [mimeType: string, data: Uint8Array]>;

export interface Op {
  /** A run's create or update, or a feedback record (`id` is then the feedback's id; see feedbackOp). */
  kind: "post" | "patch" | "feedback";
  id: string;
  run: Record<string, unknown>;
  attachments?: Attachments;
  /** Approximate encoded size, for batching by bytes and bounding the queue. */
  bytes: number;
  /** When the op was made (later ops of a run have larger numbers, across processes too: see nextSeq). */
  seq: number;
  /** Deferred work that completes `run` in place; run by finalize() before the op is serialized. */
  prepare?: (() => void)[];
  /** `run` still holds the caller's values (its prepare steps complete them in place); finalize() makes it safe. */
  raw?: boolean;
  /**
   * With `raw`: the only fields of `run` that hold the caller's values, the rest being safe
   * copies already (an update merged into its run's queued create); every field when absent.
   */
  rawKeys?: string[];
  /**
   * With `raw`: those values are the producer's own (it built them from its own copies and never
   * touches them again: RunWriter's `owned`), so finalize() checks them and copies only what fails.
   */
  rawOwned?: boolean;
  /** Approximate JSON bytes of the fields already made safe (what finalize's copy of the rest may add to). */
  safeBytes?: number;
  /** The spool segments this op was read back from, deleted once all their ops are accounted for. */
  segments?: string[];
  /** The run as the multipart encoder writes it, when it was encoded at hand-over (see encodedOp). */
  encoded?: EncodedRun;
}

/**
 * An op whose run is held encoded: the bytes the multipart encoder would
 * write for it, not the object. Why: a queued run waits for its batch (up to
 * a thousand runs, or the flush interval), and while it waits every young
 * garbage collection copies it and then promotes it to the old generation,
 * where it dies later as garbage a full collection must sweep. For a run's few
 * dozen objects that cost the host more than encoding the run did, and even
 * its text (a string of a few KB, on V8's heap) tripled the time spent in
 * young collections against the OTLP exporter's; bytes live outside the heap
 * (in a slab shared with other runs), and the collector only moves the small
 * EncodedRun. The text is made once either way, at hand-over instead of at sending.
 *
 * Anything that reads `run` (a newer update of the run merging into it, the
 * spool, the dead-letter file) gets the object back, parsed from the text,
 * and the encoding is dropped, since whoever asked may change the object.
 */
class EncodedOp implements Op {
  private object?: Record<string, unknown>;
  /** Released before anything read its run: there is no run to read any more. */
  private released = false;
  encoded?: EncodedRun;
  attachments?: Attachments;
  segments?: string[];
  prepare?: (() => void)[];
  raw?: boolean;
  rawKeys?: string[];
  rawOwned?: boolean;
  safeBytes?: number;

  constructor(
    public kind: Op["kind"],
    public id: string,
    encoded: EncodedRun,
    public bytes: number,
    public seq: number,
    attachments: Attachments | undefined,
    segments: string[] | undefined,
  ) {
    this.encoded = encoded;
    this.attachments = attachments;
    this.segments = segments;
  }

  get run(): Record<string, unknown> {
    if (this.object === undefined) {
      if (this.released) throw new Error(`tracepipe: run ${this.id} was read after its delivery`);
      this.object = this.encoded ? decodeRun(this.encoded) : {};
    }
    this.drop();
    return this.object;
  }

  set run(v: Record<string, unknown>) {
    this.object = v;
    this.drop();
  }

  /** Done with: delivered, or its batch is otherwise finished (see released()). */
  release(): void {
    if (this.encoded) this.released = true;
    this.drop();
  }

  private drop(): void {
    if (this.encoded) releaseEncoded(this.encoded);
    this.encoded = undefined;
  }
}

/**
 * The op's batch is finished (delivered, dead-lettered or spooled; a reader
 * has its run as an object by then): bytes it holds in a shared slab may be
 * reused. Reading the run of a released op that was never read is a bug, and
 * throws rather than yield another run's bytes.
 */
export function released(op: Op): void {
  if (op instanceof EncodedOp) op.release();
}

/**
 * `op` with its run encoded by `encode`, when that is worth it: a create of a
 * complete run (it has an end time, so no update is expected to merge into
 * it) with no deferred work. Otherwise, or if encoding fails, `op` itself.
 */
export function encodedOp(op: Op, encode: (run: Record<string, unknown>) => EncodedRun): Op {
  if (op.kind !== "post" || op.prepare || op.raw || op.encoded || op.run.end_time === undefined) return op;
  let e: EncodedRun;
  try {
    e = encode(op.run);
  } catch {
    return op;
  }
  const held = new EncodedOp(op.kind, op.id, e, op.bytes, op.seq, op.attachments, op.segments);
  held.safeBytes = op.safeBytes;
  return held;
}

let lastSeq = 0;
/**
 * A sequence number that grows within a process and, being based on the
 * clock in microseconds, across processes that follow one another: an op
 * spooled by a process that exited sorts before the ops of the next one.
 */
export function nextSeq(): number {
  lastSeq = Math.max(lastSeq + 1, Date.now() * 1000);
  return lastSeq;
}

/**
 * Approximate JSON length of a value without serializing it. Bounded whatever
 * it is given: the walk stops after `budget` values and 64 levels, so a cycle
 * or a DAG with exponentially many paths costs at most the budget. Only updates with
 * deferred work are measured this way; makeSafe() sizes everything else.
 */
export function approxJsonSize(v: unknown, budget = 200_000): number {
  let nodes = 0;
  const walk = (x: unknown, depth: number): number => {
    if (++nodes > budget) return 0;
    switch (typeof x) {
      case "string":
        return x.length + 2;
      case "number":
        return 12;
      case "boolean":
        return 5;
      case "bigint":
        return 24;
      case "object":
        break;
      default:
        return 0;
    }
    if (x === null) return 4;
    if (depth > 64) return 12;
    if (ArrayBuffer.isView(x)) return x.byteLength * 2;
    let n = 2;
    try {
      if (Array.isArray(x)) for (let i = 0; i < x.length && nodes <= budget; i++) n += walk(x[i], depth + 1) + 1;
      else {
        const o = x as Record<string, unknown>;
        for (const k in o) {
          if (nodes > budget) break;
          n += k.length + 4 + walk(o[k], depth + 1);
        }
      }
    } catch {
      // a throwing getter or proxy: makeSafe will mark it; the estimate only shapes batches
    }
    return n;
  };
  return walk(v, 0);
}

/**
 * Attachments as the encoders expect them: [mime type, bytes] with real bytes.
 * Anything else (a string, a plain object, a detached view) is left out here,
 * at hand-over, rather than failing every later encoding of the batch.
 */
export function safeAttachments(a: unknown): Attachments | undefined {
  if (typeof a !== "object" || a === null) return undefined;
  const out: Attachments = {};
  let n = 0;
  try {
    for (const [name, v] of Object.entries(a)) {
      if (!Array.isArray(v)) continue;
      const [mime, data] = v as [unknown, unknown];
      if (!ArrayBuffer.isView(data) && !(data instanceof ArrayBuffer)) continue;
      const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
      out[name] = [typeof mime === "string" && mime ? mime : "application/octet-stream", bytes];
      n++;
    }
  } catch {
    return n ? out : undefined;
  }
  return n ? out : undefined;
}

function attachmentBytes(attachments?: Attachments): number {
  let n = 0;
  if (attachments) for (const k in attachments) n += attachments[k]![1].byteLength + 200;
  return n;
}

function asRecord(v: unknown, id: unknown): Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : { id: typeof id === "string" ? id : "", value: v };
}

/**
 * A create: the run is made safe here, once, when it is handed over. An
 * `owned` run (its maker never touches it again) that is already what
 * makeSafe would make of it is kept as it is: checked, not copied.
 */
export function postOp(run: Run | Record<string, unknown>, rawAttachments?: Attachments, limits?: SafeLimits, owned = false): Op {
  const checked = owned ? checkSafe(run, limits) : undefined;
  const s = checked !== undefined ? { value: run, bytes: checked } : makeSafe(run, limits);
  const attachments = safeAttachments(rawAttachments);
  const r = asRecord(s.value, (run as { id?: unknown } | null)?.id);
  return {
    kind: "post",
    id: String(r.id),
    run: r,
    attachments,
    bytes: s.bytes + 200 + attachmentBytes(attachments),
    seq: nextSeq(),
    safeBytes: s.bytes,
  };
}

/**
 * An update. Without `prepare` it is made safe here; with it, the caller's
 * objects are kept (prepare completes them in place, later) and finalize()
 * makes the run safe once prepare has run. An `owned` patch (see postOp) is
 * checked rather than copied, now or, with `prepare`, in finalize().
 */
export function patchOp(
  id: string,
  patch: Omit<RunPatch, "id"> | Record<string, unknown>,
  rawAttachments?: Attachments,
  prepare?: () => void,
  limits?: SafeLimits,
  owned = false,
): Op {
  const seq = nextSeq();
  const attachments = safeAttachments(rawAttachments);
  if (prepare) {
    // Object.assign, not `{...x, id}`: V8 (Node 20) takes a slow path for a spread followed by fields.
    const r = Object.assign({}, asRecord(patch, id), { id: String(id) });
    return {
      kind: "patch",
      id: String(id),
      run: r,
      attachments,
      bytes: approxJsonSize(r) + 200 + attachmentBytes(attachments),
      seq,
      prepare: [prepare],
      raw: true,
      rawOwned: owned,
    };
  }
  const checked = owned ? checkSafe(patch, limits) : undefined;
  const s = checked !== undefined ? { value: patch, bytes: checked } : makeSafe(patch, limits);
  const r = Object.assign({}, asRecord(s.value, id), { id: String(id) });
  return {
    kind: "patch",
    id: String(id),
    run: r,
    attachments,
    bytes: s.bytes + 200 + attachmentBytes(attachments),
    seq,
    safeBytes: s.bytes,
  };
}

/**
 * Feedback on a run: an op of its own, keyed by the feedback's id, so it goes
 * through the same queue, batches, limits and spool as runs. Re-sending a
 * feedback id merges into the queued one (newer fields win), as the store does.
 */
export function feedbackOp(record: Record<string, unknown>, limits?: SafeLimits): Op {
  const s = makeSafe(record, limits);
  const r = asRecord(s.value, record.id);
  return { kind: "feedback", id: String(r.id), run: r, bytes: s.bytes + 200, seq: nextSeq(), safeBytes: s.bytes };
}

/** Run an op's deferred work, once, then make what it completed safe. Never throws. */
export function finalize(op: Op, limits?: SafeLimits): Op {
  const steps = op.prepare;
  if (steps) {
    op.prepare = undefined;
    for (const fn of steps) {
      try {
        fn();
      } catch {
        // Deferred work only adds to a run (an estimate, say); without it the run is still whole.
      }
    }
  }
  if (op.raw) {
    op.raw = false;
    const keys = op.rawKeys;
    op.rawKeys = undefined;
    const owned = op.rawOwned === true;
    op.rawOwned = undefined;
    if (owned && keptAsOwned(op, keys, limits)) return op;
    if (keys) {
      // Only the fields that hold the caller's values are copied, within what the safe ones left of the budget.
      const part: Record<string, unknown> = {};
      for (const k of keys) part[k] = op.run[k];
      const maxBytes = Math.max(0, (limits?.maxBytes ?? DEFAULT_MAX_BYTES) - (op.safeBytes ?? 0));
      const s = makeSafe(part, { ...limits, maxBytes });
      const safe = asRecord(s.value, op.id);
      // A new object in the same key order (deleting keys would turn the run into a slow dictionary object).
      const run: Record<string, unknown> = {};
      for (const k in op.run) {
        if (!keys.includes(k)) run[k] = op.run[k];
        else if (safe[k] !== undefined) run[k] = safe[k];
      }
      for (const k in safe) if (!(k in run)) run[k] = safe[k];
      run.id = op.id;
      op.run = run;
      op.safeBytes = (op.safeBytes ?? 0) + s.bytes;
    } else {
      const s = makeSafe(op.run, limits);
      op.run = Object.assign({}, asRecord(s.value, op.id), { id: op.id });
      op.safeBytes = s.bytes;
    }
  }
  return op;
}

/**
 * finalize() of a raw op whose raw fields are the producer's own: when they are what makeSafe
 * would make of them (within what the safe fields left of the budget), they are kept as they
 * are and counted; otherwise nothing is changed and the caller copies them.
 */
function keptAsOwned(op: Op, keys: string[] | undefined, limits: SafeLimits | undefined): boolean {
  const run = op.run;
  let bytes: number | undefined;
  if (keys === undefined) bytes = checkSafe(run, limits);
  else {
    const part: Record<string, unknown> = {};
    for (const k of keys) part[k] = run[k];
    const maxBytes = Math.max(0, (limits?.maxBytes ?? DEFAULT_MAX_BYTES) - (op.safeBytes ?? 0));
    bytes = checkSafe(part, { ...limits, maxBytes });
  }
  if (bytes === undefined) return false;
  op.safeBytes = keys === undefined ? bytes : (op.safeBytes ?? 0) + bytes;
  // As makeSafe's copy would, the run leaves out fields that are undefined (an update's absent error, say).
  let absent = false;
  for (const k in run) if (run[k] === undefined) absent = true;
  if (absent) {
    const kept: Record<string, unknown> = {};
    for (const k in run) if (run[k] !== undefined) kept[k] = run[k];
    op.run = kept;
  }
  return true;
}

/**
 * Fold `other` into `into`: one op carrying both, the newer one's defined
 * fields winning whichever of the two is older, and a create if either was.
 */
export function mergeOps(into: Op, other: Op): void {
  const older = other.seq >= into.seq ? into : other;
  const newer = older === into ? other : into;
  const newerRun = newer.run;
  // The usual case, an update meeting its queued create, writes into the create's own copy
  // (every op's run is the client's, never the caller's object) instead of copying it again.
  const run: Record<string, unknown> = older === into ? into.run : { ...older.run };
  for (const k in newerRun) if (newerRun[k] !== undefined) run[k] = newerRun[k];
  // Lists are made anew only when both ops have one (an update merging into its create has none to join).
  const prepare = joined(older.prepare, newer.prepare);
  const segments = joined(older.segments, newer.segments);
  into.kind =
    older.kind === "feedback" || newer.kind === "feedback" ? "feedback" : older.kind === "post" || newer.kind === "post" ? "post" : "patch";
  into.run = run;
  into.seq = newer.seq;
  into.attachments = older.attachments || newer.attachments ? { ...older.attachments, ...newer.attachments } : undefined;
  into.prepare = prepare;
  // Which fields still hold the caller's values: those that came from a raw op (and were raw in it).
  let rawKeys: string[] | undefined;
  if (older.raw === true || newer.raw === true) {
    rawKeys = [];
    for (const k in run) {
      const from = newerRun[k] !== undefined ? newer : older;
      if (from.raw === true && (from.rawKeys === undefined || from.rawKeys.includes(k))) rawKeys.push(k);
    }
  }
  // What the merged run's safe fields took of the budget (an op made raw has none counted).
  const safeBytes = (older.safeBytes ?? 0) + (newer.safeBytes ?? 0);
  // Checked rather than copied only when every op the raw fields came from owned them (read before `into` changes).
  const owned = (older.raw !== true || older.rawOwned === true) && (newer.raw !== true || newer.rawOwned === true);
  into.raw = rawKeys !== undefined && rawKeys.length > 0;
  into.rawKeys = into.raw ? rawKeys : undefined;
  into.rawOwned = into.raw && owned ? true : undefined;
  into.safeBytes = safeBytes;
  into.segments = segments;
  into.bytes = older.bytes + newer.bytes;
}

/** Both lists in order, as a new list; one alone is copied too (it may be its op's, and ops are merged and kept apart). */
function joined<T>(a: T[] | undefined, b: T[] | undefined): T[] | undefined {
  if (!a?.length) return b?.length ? b.slice() : undefined;
  return b?.length ? a.concat(b) : a.slice();
}
