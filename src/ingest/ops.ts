/**
 * What the client queues: one create (post) or update (patch) of a run, with
 * its serialized size so memory can be bounded. A create and an update for the
 * same id that meet in the queue are merged into one post (issue "Deliver").
 */
import type { Run, RunPatch } from "../run/schema.js";

export type Attachments = Record<string, [mimeType: string, data: Uint8Array]>;

export interface Op {
  kind: "post" | "patch";
  id: string;
  run: Record<string, unknown>;
  attachments?: Attachments;
  /** Approximate encoded size, for batching by bytes and bounding the queue. */
  bytes: number;
  /** Deferred work that completes `run` in place; run by finalize() before the op is serialized. */
  prepare?: (() => void)[];
  /** The spool segment this op was replayed from, so the segment is deleted once all its ops are delivered. */
  segment?: string;
}

/**
 * Approximate JSON length of a value, by walking it rather than serializing it:
 * it runs on every createRun/updateRun, on the caller's path, where a
 * JSON.stringify would cost about ten times more. Escapes and non-ASCII are not
 * counted exactly; the figure only bounds the queue and shapes batches (the
 * server's 413 is still handled by splitting).
 */
export function approxJsonSize(v: unknown, depth = 0): number {
  switch (typeof v) {
    case "string":
      return v.length + 2;
    case "number":
      return 12;
    case "boolean":
      return 5;
    case "object": {
      if (v === null) return 4;
      if (depth > 64) return jsonLength(v); // pathological nesting: measure it the slow, exact way
      let n = 2;
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) n += approxJsonSize(v[i], depth + 1) + 1;
        return n;
      }
      if (ArrayBuffer.isView(v)) return v.byteLength * 4;
      const o = v as Record<string, unknown>;
      for (const k in o) {
        const x = o[k];
        if (x !== undefined && typeof x !== "function") n += k.length + 4 + approxJsonSize(x, depth + 1);
      }
      return n;
    }
    case "bigint":
      return 24;
    default:
      return 0;
  }
}

function jsonLength(v: unknown): number {
  try {
    return JSON.stringify(v)?.length ?? 0;
  } catch {
    return 0;
  }
}

/** Size estimate: approximate JSON length of the run plus attachment bytes. */
export function sizeOf(run: Record<string, unknown>, attachments?: Attachments): number {
  let n = approxJsonSize(run) + 200;
  if (attachments) for (const k in attachments) n += attachments[k]![1].byteLength + 200;
  return n;
}

export function postOp(run: Run | Record<string, unknown>, attachments?: Attachments): Op {
  const r = run as Record<string, unknown>;
  return { kind: "post", id: String(r.id), run: r, attachments, bytes: sizeOf(r, attachments) };
}

export function patchOp(id: string, patch: Omit<RunPatch, "id"> | Record<string, unknown>, attachments?: Attachments): Op {
  const r = { ...(patch as Record<string, unknown>), id };
  return { kind: "patch", id, run: r, attachments, bytes: sizeOf(r, attachments) };
}

/** Run an op's deferred work, once. A failing step leaves the run as it was; delivery goes on. */
export function finalize(op: Op): Op {
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
  return op;
}

/** Fold an update into a queued create: the update's non-undefined fields win. */
export function mergeInto(post: Op, patch: Op): void {
  if (patch.prepare) (post.prepare ??= []).push(...patch.prepare);
  for (const k in patch.run) if (patch.run[k] !== undefined) post.run[k] = patch.run[k];
  if (patch.attachments) post.attachments = { ...post.attachments, ...patch.attachments };
  post.bytes += patch.bytes;
}
