/**
 * Bounded nesting. JSON.parse takes any depth, but what comes after it (zod,
 * normalization, JSON.stringify in the store) recurses and overflows the stack
 * somewhere past a few thousand levels. The walk here is iterative, so it
 * cannot overflow itself, and it can be run in slices that let the event loop in.
 */
import type { Loc } from "./types.js";
import { Slicer } from "./slicer.js";

interface Frame {
  value: object;
  depth: number;
  key: string | number;
  parent: Frame | undefined;
}

/** A depth-first walk for the first container nested deeper than `max` levels (the document itself is level 1). */
class DepthWalk {
  private readonly stack: Frame[];
  /** Where the too-deep container is, once found. */
  found: Loc | undefined;

  constructor(
    value: unknown,
    private readonly max: number,
  ) {
    this.stack = typeof value === "object" && value !== null && max !== Infinity ? [{ value, depth: 1, key: "", parent: undefined }] : [];
  }

  get done(): boolean {
    return this.found !== undefined || this.stack.length === 0;
  }

  /** Visits up to `nodes` containers; returns how many it visited. */
  step(nodes: number): number {
    let n = 0;
    for (; n < nodes && !this.done; n++) {
      const f = this.stack.pop()!;
      if (f.depth > this.max) {
        const path: Loc = [];
        for (let p: Frame | undefined = f; p?.parent; p = p.parent) path.push(p.key);
        this.found = path.reverse();
        return n + 1;
      }
      if (Array.isArray(f.value)) {
        for (let i = f.value.length - 1; i >= 0; i--) {
          const v: unknown = f.value[i];
          if (typeof v === "object" && v !== null) this.stack.push({ value: v, depth: f.depth + 1, key: i, parent: f });
        }
      } else {
        for (const k in f.value) {
          const v = (f.value as Record<string, unknown>)[k];
          if (typeof v === "object" && v !== null) this.stack.push({ value: v, depth: f.depth + 1, key: k, parent: f });
        }
      }
    }
    return n;
  }
}

/** The location of the first container nested deeper than `max` levels, or undefined when `value` is within the bound. */
export function tooDeepAt(value: unknown, max: number): Loc | undefined {
  const walk = new DepthWalk(value, max);
  walk.step(Infinity);
  return walk.found;
}

/** How many containers a walk visits between two chances for the event loop (with `slicer`'s own count). */
const NODES_PER_STEP = 256;

/** tooDeepAt, giving the event loop a turn whenever `slicer` says (a walk over millions of nodes must not hold it). */
export async function tooDeepAtSliced(value: unknown, max: number, slicer: Slicer = new Slicer()): Promise<Loc | undefined> {
  const walk = new DepthWalk(value, max);
  while (!walk.done) {
    // The work done, not the step's size: a request of many small documents is not paused for work it did not do.
    const pause = slicer.tick(walk.step(NODES_PER_STEP));
    if (pause) await pause;
  }
  return walk.found;
}

/**
 * tooDeepAt for each value in turn, sliced as tooDeepAtSliced, in one call: a
 * request's many small documents cost one pending promise, not one per document.
 * `found` is told each value nested too deep (its index and location).
 */
export async function tooDeepEach(
  values: readonly unknown[],
  max: number,
  slicer: Slicer,
  found: (index: number, loc: Loc) => void,
): Promise<void> {
  for (let i = 0; i < values.length; i++) {
    const walk = new DepthWalk(values[i], max);
    while (!walk.done) {
      const pause = slicer.tick(walk.step(NODES_PER_STEP));
      if (pause) await pause;
    }
    if (walk.found) found(i, walk.found);
  }
}
