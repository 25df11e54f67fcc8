/**
 * Run records checked with the zod schemas; problems in SPEC §7's shape with
 * request-relative locations, into a bounded IssueList.
 *
 * The work is sliced: `events` and `tags` (the arrays whose elements have a
 * schema, and so the only places a body can hold millions of separately
 * failing values) are checked element by element, and every few thousand
 * checks the loop yields, so GET /info and other requests are answered while
 * a big bad body is being judged. Checking stops once the IssueList is full.
 */
import { z } from "zod";
import { Run, RunEvent, RunPatch } from "../run/schema.js";
import type { IssueList } from "./issues.js";
import { zodIssues } from "../errors.js";
import { Slicer } from "./slicer.js";

export { Slicer };

type Loc = (string | number)[];
type Obj = Record<string, unknown>;

function add(err: z.ZodError, prefix: Loc, out: IssueList): void {
  out.push(...zodIssues(err.issues, prefix));
}

async function checkArray<T>(list: unknown[], check: (v: unknown) => { success: true; data: T } | { success: false; error: z.ZodError }, prefix: Loc, out: IssueList, slicer: Slicer): Promise<T[] | undefined> {
  const good: T[] = [];
  let ok = true;
  for (let i = 0; i < list.length; i++) {
    if (out.full) return undefined;
    const r = check(list[i]);
    if (r.success) good.push(r.data);
    else {
      ok = false;
      add(r.error, [...prefix, i], out);
    }
    const pause = slicer.tick();
    if (pause) await pause;
  }
  return ok ? good : undefined;
}

const Tag = z.string();
const checkTag = (v: unknown) => Tag.safeParse(v);

async function check<T extends Run | RunPatch>(schema: z.ZodType<T>, value: unknown, prefix: Loc, out: IssueList, slicer: Slicer): Promise<T | undefined> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    const r = schema.safeParse(value);
    if (!r.success) add(r.error, prefix, out);
    return r.success ? r.data : undefined;
  }
  const { events, tags, ...rest } = value as Obj;
  const head: Obj = rest;
  let ok = true;
  let goodEvents: unknown[] | undefined;
  let goodTags: unknown[] | undefined;
  if (Array.isArray(events)) {
    goodEvents = await checkArray(events, (v) => RunEvent.safeParse(v), [...prefix, "events"], out, slicer);
    ok &&= goodEvents !== undefined;
  } else if (events !== undefined) head.events = events; // let the schema name the wrong type
  if (Array.isArray(tags)) {
    goodTags = await checkArray(tags, checkTag, [...prefix, "tags"], out, slicer);
    ok &&= goodTags !== undefined;
  } else if (tags !== undefined) head.tags = tags;
  const r = schema.safeParse(head);
  await slicer.tick(20);
  if (!r.success) add(r.error, prefix, out);
  if (!ok || !r.success) return undefined;
  const data = r.data as Obj;
  if (goodEvents) data.events = goodEvents;
  if (goodTags) data.tags = goodTags;
  return data as T;
}

export function checkPost(value: unknown, prefix: Loc, out: IssueList, slicer: Slicer): Promise<Run | undefined> {
  return check(Run, value, prefix, out, slicer);
}

export function checkPatch(value: unknown, prefix: Loc, out: IssueList, slicer: Slicer): Promise<RunPatch | undefined> {
  return check(RunPatch, value, prefix, out, slicer);
}
