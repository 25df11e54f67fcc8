/**
 * DESIGN "Mapping decisions": nothing a vendor sent is dropped; a field with no
 * native home goes into `extras`, on its block or its message. This is the one
 * place a block or message receives extras. The modes differ only in how new
 * extras meet ones the target already has:
 * - `replace`: the given extras become the target's (targets are fresh, so there are none yet);
 * - `replace-nonempty`: the same, an empty object ignored (no `extras: {}` in the output);
 * - `merge`: laid over the target's own (the given win a clash), in a new object,
 *   so extras shared between blocks are never changed through one of them;
 * - `merge-owned`: the same in place, for callers whose extras objects are all
 *   fresh and handed over (the hot part paths, where a copy per block costs).
 * Fields left over from a vendor object are found with `leftovers` (guards.ts).
 */
import type { ContentBlock, Message } from "../../src/format/schema.js";
import type { Obj } from "./guards.js";
import { put } from "./guards.js";

export type ExtrasMode = "replace" | "replace-nonempty" | "merge" | "merge-owned";

/** Whether `o` has an enumerable key (without building the list of keys). */
export function hasKeys(o: Obj): boolean {
  for (const _ in o) return true;
  return false;
}

export function withExtras<T extends ContentBlock | Message>(target: T, extras: Obj | undefined, mode: ExtrasMode): T {
  if (!extras) return target;
  const t = target as { extras?: Obj };
  switch (mode) {
    case "replace":
      t.extras = extras;
      break;
    case "replace-nonempty":
      if (hasKeys(extras)) t.extras = extras;
      break;
    case "merge":
      if (hasKeys(extras)) t.extras = { ...t.extras, ...extras };
      break;
    case "merge-owned":
      if (!hasKeys(extras)) break;
      if (!t.extras) t.extras = extras;
      else for (const k in extras) put(t.extras, k, extras[k]);
      break;
  }
  return target;
}

/** A spread copy of `o` (own keys only, a plain object), or undefined: the first object assignOwned lays others over. */
export function copyOf(o: Obj | undefined): Obj | undefined {
  return o && { ...o };
}

/**
 * `extra`'s own keys laid over `own` in place, as a spread of the two would lay
 * them (`own` must be the caller's plain object, made by copyOf or a literal;
 * `extra` is copied, never kept), for hot paths that would otherwise spread
 * objects into objects. Nearly always both are undefined, and nothing is made.
 */
export function assignOwned(own: Obj | undefined, extra: Obj | undefined): Obj | undefined {
  if (!extra) return own;
  if (!own) return { ...extra };
  for (const k in extra) if (Object.hasOwn(extra, k)) put(own, k, extra[k]);
  return own;
}

/**
 * `b` laid over `a` in place (b's values win, a's key order first), for callers
 * whose extras objects are all their own: `a` when there is no `b`, `b` itself
 * when there is no `a`.
 */
export function layOver(a: Obj | undefined, b: Obj | undefined): Obj | undefined {
  if (!b) return a;
  if (!a) return b;
  for (const k in b) put(a, k, b[k]);
  return a;
}
