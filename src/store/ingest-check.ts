/**
 * The check every store's `ingest` runs first, whichever database is behind
 * it: records as received are checked with the Run / RunPatch schemas
 * (a CheckedBatch was checked by BatchCheck with the same ones), attachments
 * must name a run by UUID. Any problem refuses the whole batch.
 */
import { ValidationError, type Issue } from "../errors.js";
import type { Run, RunPatch } from "../run/schema.js";
import { isUuid } from "../run/ids.js";
import type { CheckedBatch, IngestBatch } from "./contract/runs.js";
import { checkPatch, checkPost, isChecked } from "./validate.js";

/** The batch's posts and patches, checked; throws a ValidationError listing every problem. */
export function checkIngestBatch(batch: IngestBatch | CheckedBatch): { post: readonly Run[]; patch: readonly RunPatch[] } {
  const issues: Issue[] = [];
  let post: readonly Run[];
  let patch: readonly RunPatch[];
  if (isChecked(batch)) {
    ({ post, patch } = batch);
  } else {
    const b = batch as IngestBatch;
    const locate = b.locate ?? ((kind, i) => [kind, i]);
    const okPost: Run[] = (post = []);
    const okPatch: RunPatch[] = (patch = []);
    (b.post ?? []).forEach((r, i) => {
      const ok = checkPost(r, locate("post", i), issues);
      if (ok) okPost.push(ok);
    });
    (b.patch ?? []).forEach((r, i) => {
      const ok = checkPatch(r, locate("patch", i), issues);
      if (ok) okPatch.push(ok);
    });
  }
  for (const a of batch.attachments ?? []) {
    if (!isUuid(a.runId)) issues.push({ loc: ["attachment", a.runId, a.name], msg: `attachment for run id ${JSON.stringify(a.runId)}, which is not a UUID`, type: "uuid" });
  }
  if (issues.length) throw new ValidationError(issues);
  return { post, patch };
}
