/**
 * Bounded nesting. JSON.parse takes any depth, but what comes after it
 * (zod, normalization, JSON.stringify in the store) recurses and overflows the
 * stack somewhere past a few thousand levels: a 500 instead of an answer. The
 * collector therefore refuses documents nested deeper than `maxJsonDepth`
 * (README "Collector limits") before anything recursive sees them. The walk
 * here is iterative, so it cannot overflow itself, and sliced (it yields to
 * the event loop every few thousand nodes).
 */
import { Slicer } from "./slicer.js";

type Loc = (string | number)[];

/** How many leading path elements a too-deep location keeps: enough to name the run and field. */
const LOC_KEEP = 8;

interface Frame {
  value: object;
  depth: number;
  key: string | number;
  parent: Frame | undefined;
}

/**
 * The location of the first container nested deeper than `max` levels (the
 * document itself is level 1), cut to its first elements, or undefined when
 * the value is within the bound.
 */
export async function tooDeep(value: unknown, max: number, slicer: Slicer = new Slicer()): Promise<Loc | undefined> {
  if (typeof value !== "object" || value === null || max === Infinity) return undefined;
  const stack: Frame[] = [{ value, depth: 1, key: "", parent: undefined }];
  while (stack.length) {
    const pause = slicer.tick();
    if (pause) await pause; // a walk over millions of nodes must not hold the event loop
    const f = stack.pop()!;
    if (f.depth > max) {
      const path: Loc = [];
      for (let p: Frame | undefined = f; p?.parent; p = p.parent) path.push(p.key);
      return path.reverse().slice(0, LOC_KEEP);
    }
    if (Array.isArray(f.value)) {
      for (let i = f.value.length - 1; i >= 0; i--) {
        const v: unknown = f.value[i];
        if (typeof v === "object" && v !== null) stack.push({ value: v, depth: f.depth + 1, key: i, parent: f });
      }
    } else {
      for (const k in f.value) {
        const v = (f.value as Record<string, unknown>)[k];
        if (typeof v === "object" && v !== null) stack.push({ value: v, depth: f.depth + 1, key: k, parent: f });
      }
    }
  }
  return undefined;
}

export function depthIssue(loc: Loc, max: number): { loc: Loc; msg: string; type: string } {
  return { loc, msg: `nested more than ${max} levels deep (objects and arrays); the location shows where, cut to its first ${LOC_KEEP} elements`, type: "json_depth" };
}
