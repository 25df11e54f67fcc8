/**
 * The merge rules every store applies to a run's stored state (idempotent by
 * id, order-independent for one post and its patches):
 * - a post fills the fields that are still empty; it never overwrites what a
 *   patch (or an earlier post) already set, so a duplicate post changes
 *   nothing and a post arriving after its patch does not undo the patch;
 * - a patch overwrites the fields it carries with non-null values (end_time,
 *   outputs, error, events, ...): it is the later state of the run;
 * - a patch before its post creates a partial row that the post completes.
 * Posts of one batch are applied before its patches: posts only fill gaps, so
 * the order gives the same state either way.
 *
 * The state is a plain object of the known columns plus `__other` (members the
 * schema lets through that have no column). A JSON column a store left in the
 * database (too large to read for a merge that does not need it) is any
 * object the store likes; it counts as set.
 */
import { canonicalTime } from "./time.js";
import { rawTextOf } from "./validate.js";
import { put, type Obj } from "../internal/obj.js";

/** Columns holding scalars, and columns holding JSON; everything else goes to `__other`. */
export const SCALAR = [
  "trace_id",
  "parent_run_id",
  "dotted_order",
  "name",
  "run_type",
  "session_name",
  "start_time",
  "end_time",
  "error",
] as const;
export const JSONCOL = ["inputs", "outputs", "events", "tags", "extra", "serialized"] as const;
export type JsonColumn = (typeof JSONCOL)[number];
const TIME = new Set<string>(["start_time", "end_time"]);
const KNOWN = new Set<string>(["id", ...SCALAR, ...JSONCOL]);
const JSONCOL_SET = new Set<string>(JSONCOL);

/** Per JSON column, the text that already says what the state holds (as received or as read), so it is written without JSON.stringify. */
export type Texts = Partial<Record<string, string>>;

/** Apply one post or patch to a run's state (in memory). True when it set inputs, outputs, run_type or extra (what derivation and usage read: the metadata names the model and may hold the usage). */
export function applyChange(state: Obj, change: Obj, isPost: boolean, texts: Texts): boolean {
  let messages = false;
  const raw = rawTextOf(change) as Texts | undefined;
  for (const k in change) {
    if (k === "id") continue;
    let v = change[k];
    if (v === undefined) continue;
    if (TIME.has(k) && typeof v === "string") v = canonicalTime(v) ?? v;
    const target = KNOWN.has(k) ? state : ((state.__other as Obj) ??= {});
    const current = Object.hasOwn(target, k) ? target[k] : undefined;
    const set = isPost ? current === undefined || current === null : v !== null;
    if (!set) continue;
    put(target, k, v);
    if (target === state && JSONCOL_SET.has(k)) texts[k] = raw?.[k];
    if (k === "inputs" || k === "outputs" || k === "run_type" || k === "extra") messages = true;
  }
  return messages;
}

/** True when one of the changes gives the run an end time. */
export function endsRun(changes: readonly Obj[]): boolean {
  return changes.some((c) => c.end_time !== undefined && c.end_time !== null);
}

/**
 * True when one run's posts and patches of a batch complete it as a root (reported once per such batch; the
 * webhook outbox keeps one delivery however often). `state` is the run after them; `hadPost`: a post of it was
 * stored before. Only a post says a run has no parent (a patch may leave `parent_run_id` out), so a run whose
 * patch came first completes when its post arrives, and a patch of a run not yet posted completes nothing.
 */
export function completesRoot(state: Obj, posts: readonly Obj[], patches: readonly Obj[], hadPost: boolean): boolean {
  if (!state.end_time || state.parent_run_id) return false;
  if (!hadPost && posts.length === 0) return false;
  return endsRun(posts) || endsRun(patches) || !hadPost;
}
