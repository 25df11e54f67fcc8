/**
 * The store's own sliced check (store/validate.ts BatchCheck) bound to a
 * request: problems into its bounded IssueList, pauses from its Slicer so GET
 * /info and other requests are answered while a big bad body is being judged.
 * What passes is a CheckedBatch the store ingests without checking it again,
 * so the collector and the embedded sink still accept and refuse the same
 * runs (one set of schemas, one check).
 */
import type { Run, RunPatch } from "../run/schema.js";
import { BatchCheck } from "../store/validate.js";
import type { IssueList } from "./issues.js";
import { Slicer } from "./slicer.js";

export { Slicer };

type Loc = (string | number)[];

export function batchCheck(out: IssueList, slicer: Slicer): BatchCheck {
  return new BatchCheck(out, (units) => slicer.tick(units));
}

/** One post checked on its own (the checked record, or undefined with its problems in `out`). */
export async function checkPost(value: unknown, prefix: Loc, out: IssueList, slicer: Slicer): Promise<Run | undefined> {
  const c = batchCheck(out, slicer);
  return (await c.post(value, prefix)) ? c.batch().post[0] : undefined;
}

export async function checkPatch(value: unknown, prefix: Loc, out: IssueList, slicer: Slicer): Promise<RunPatch | undefined> {
  const c = batchCheck(out, slicer);
  return (await c.patch(value, prefix)) ? c.batch().patch[0] : undefined;
}
