/**
 * The collector refuses documents nested deeper than `maxJsonDepth`
 * (docs/collector-api.md, "Limits") before anything recursive sees them, with
 * a 422 whose `loc` points into the document.
 */
import { tooDeepAtSliced, tooDeepEach } from "../internal/json-depth.js";
import { Slicer } from "../internal/slicer.js";
import type { Loc } from "../internal/types.js";

/** How many leading path elements a too-deep location keeps: enough to name the run and field. */
const LOC_KEEP = 8;

/**
 * The location of the first container nested deeper than `max` levels (the
 * document itself is level 1), cut to its first elements, or undefined when
 * the value is within the bound.
 */
export async function tooDeep(value: unknown, max: number, slicer: Slicer = new Slicer()): Promise<Loc | undefined> {
  return (await tooDeepAtSliced(value, max, slicer))?.slice(0, LOC_KEEP);
}

/** tooDeep for each of a request's documents (named by their parts), one walk after another: the location of each one too deep, after its part. */
export async function documentsTooDeep(
  documents: readonly { part: string; value: unknown }[],
  max: number,
  slicer: Slicer,
  found: (loc: Loc) => void,
): Promise<void> {
  await tooDeepEach(
    documents.map((d) => d.value),
    max,
    slicer,
    (i, loc) => found([documents[i]!.part, ...loc.slice(0, LOC_KEEP)]),
  );
}

export function depthIssue(loc: Loc, max: number): { loc: Loc; msg: string; type: string } {
  return {
    loc,
    msg: `nested more than ${max} levels deep (objects and arrays); the location shows where, cut to its first ${LOC_KEEP} elements`,
    type: "json_depth",
  };
}
