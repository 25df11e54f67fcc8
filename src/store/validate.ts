/**
 * The store's first ingest step: run records checked with the Run / RunPatch
 * zod schemas, problems in SPEC §7's `{loc, msg, type}` shape with locations
 * relative to the request (so the collector's 422 and the embedded sink's
 * refusal name the same field).
 */
import { Run, RunPatch } from "../run/schema.js";
import { zodIssues, type Issue } from "../errors.js";

export type Loc = (string | number)[];


export function checkPost(value: unknown, prefix: Loc, out: Issue[]): Run | undefined {
  const r = Run.safeParse(value);
  if (r.success) return r.data;
  out.push(...zodIssues(r.error.issues, prefix));
  return undefined;
}

export function checkPatch(value: unknown, prefix: Loc, out: Issue[]): RunPatch | undefined {
  const r = RunPatch.safeParse(value);
  if (r.success) return r.data;
  out.push(...zodIssues(r.error.issues, prefix));
  return undefined;
}
