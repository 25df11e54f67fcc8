/**
 * A fresh body of `bodies` through the collector's own parsing and checks, as
 * the ingest route does before the store write: what the store benchmarks
 * hand to the store, so they time the write alone.
 */
import { Readable } from "node:stream";
import type { RunBodies } from "./run-bodies.js";
import { parseMultipart } from "../src/server/multipart.js";
import { batchCheck } from "../src/server/validation.js";
import { IssueList } from "../src/server/issues.js";
import { Slicer } from "../src/internal/slicer.js";
import type { CheckedBatch } from "../src/store/contract/runs.js";

const LIMITS = { maxPartBytes: 64 << 20, maxParts: 10_000, maxRuns: 1000 };

export async function checkedBatch(bodies: RunBodies): Promise<CheckedBatch> {
  const issues = new IssueList(100, 10_000);
  const parsed = await parseMultipart(Readable.from([bodies.fresh()]), { "content-type": bodies.contentType }, LIMITS, issues);
  const check = batchCheck(issues, new Slicer());
  for (const [id, r] of parsed.post) await check.post(r, [`post.${id}`], parsed.raw.get(r));
  return check.batch(parsed.attachments);
}
