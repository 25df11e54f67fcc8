/**
 * The store's own sliced check (store/validate.ts BatchCheck) bound to a
 * request: problems into its bounded IssueList, pauses from its Slicer so GET
 * /info and other requests are answered while a big bad body is being judged.
 * What passes is a CheckedBatch the store ingests without checking it again,
 * so the collector and the embedded sink still accept and refuse the same
 * runs (one set of schemas, one check).
 */
import { BatchCheck } from "../store/validate.js";
import type { IssueList } from "./issues.js";
import { Slicer } from "../internal/slicer.js";

export function batchCheck(out: IssueList, slicer: Slicer): BatchCheck {
  return new BatchCheck(out, (units) => slicer.tick(units));
}
