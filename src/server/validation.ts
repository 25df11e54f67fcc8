/** Run records checked with the zod schemas; problems in SPEC §7's shape with request-relative locations. */
import type { z } from "zod";
import { Run, RunPatch } from "../run/schema.js";
import type { Issue } from "../errors.js";

function issues(err: z.ZodError, prefix: (string | number)[]): Issue[] {
  return err.issues.map((i) => ({ loc: [...prefix, ...(i.path as (string | number)[])], msg: i.message, type: i.code }));
}

export function checkPost(value: unknown, prefix: (string | number)[], out: Issue[]): Run | undefined {
  const r = Run.safeParse(value);
  if (r.success) return r.data;
  out.push(...issues(r.error, prefix));
  return undefined;
}

export function checkPatch(value: unknown, prefix: (string | number)[], out: Issue[]): RunPatch | undefined {
  const r = RunPatch.safeParse(value);
  if (r.success) return r.data;
  out.push(...issues(r.error, prefix));
  return undefined;
}
