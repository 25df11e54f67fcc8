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
  /** The spool segment this op was replayed from, so the segment is deleted once all its ops are delivered. */
  segment?: string;
}

/** Size estimate without serializing twice: JSON length of the run plus attachment bytes. */
export function sizeOf(run: Record<string, unknown>, attachments?: Attachments): number {
  let n = JSON.stringify(run).length + 200;
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

/** Fold an update into a queued create: the update's non-undefined fields win. */
export function mergeInto(post: Op, patch: Op): void {
  for (const k in patch.run) if (patch.run[k] !== undefined) post.run[k] = patch.run[k];
  if (patch.attachments) post.attachments = { ...post.attachments, ...patch.attachments };
  post.bytes += patch.bytes;
}
