/**
 * The store's first ingest step: run records checked with the Run / RunPatch
 * zod schemas, problems in SPEC §7's `{loc, msg, type}` shape with locations
 * relative to the request (so the collector's 422 and the embedded sink's
 * refusal name the same field).
 *
 * Two ways in, one set of schemas:
 * - `checkIngestBatch` (with `checkPost` / `checkPatch`): synchronous, what
 *   every store's `ingest` runs first, on records as received (the embedded
 *   sink) or on a batch BatchCheck already checked;
 * - `BatchCheck`: the same check, sliced (it yields through `pause` so a
 *   server keeps answering while a big body is judged), whose result is a
 *   `CheckedBatch` that `ingest` stores without checking it again. Only this
 *   module can mark a batch as checked (a WeakSet, not a flag a caller could
 *   set), so every stored record has passed the store's own check.
 *
 * A record may come with the JSON text its large fields were parsed from
 * (`RawText`); the store writes that text as is instead of re-serializing the
 * value, when the check left the value exactly as parsed.
 */
import { z } from "zod";
import { Run, RunEvent, RunPatch } from "../run/schema.js";
import { ValidationError, zodIssues, type Issue } from "../errors.js";
import { Feedback, type FeedbackRecord } from "../run/feedback.js";
import { isUuid } from "../run/ids.js";
import type { AttachmentInput } from "./contract/attachments.js";
import type { CheckedBatch, IngestBatch } from "./contract/runs.js";
import { quickPatch, quickRun } from "./run-fast-check.js";

export type Loc = Issue["loc"];
type Obj = Record<string, unknown>;

/** `value` as `schema` reads it (`quick` first: most records need no zod pass), or undefined with its issues added to `out`. */
function checked<T>(value: unknown, prefix: Loc, out: Issue[], quick: (v: unknown) => T | undefined, schema: z.ZodType<T>): T | undefined {
  const q = quick(value);
  if (q) return q;
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  out.push(...zodIssues(r.error.issues, prefix));
  return undefined;
}

export function checkPost(value: unknown, prefix: Loc, out: Issue[]): Run | undefined {
  return checked(value, prefix, out, quickRun, Run);
}

export function checkPatch(value: unknown, prefix: Loc, out: Issue[]): RunPatch | undefined {
  return checked(value, prefix, out, quickPatch, RunPatch);
}

/**
 * The records of a batch that every store's `ingest` stores: a CheckedBatch's
 * as they are (BatchCheck applied these same schemas), any other batch's once
 * each record and each attachment's run id passed. Throws a ValidationError
 * listing every problem when any failed: then nothing of the batch is stored.
 */
export function checkIngestBatch(batch: IngestBatch | CheckedBatch): { post: readonly Run[]; patch: readonly RunPatch[] } {
  const issues: Issue[] = [];
  let post: readonly Run[];
  let patch: readonly RunPatch[];
  if (isChecked(batch)) ({ post, patch } = batch);
  else {
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
    if (!isUuid(a.runId))
      issues.push({
        loc: ["attachment", a.runId, a.name],
        msg: `attachment for run id ${JSON.stringify(a.runId)}, which is not a UUID`,
        type: "uuid",
      });
  }
  if (issues.length) throw new ValidationError(issues);
  return { post, patch };
}

/** Large JSON columns whose received text can be stored as is. */
export const RAW_FIELDS = ["inputs", "outputs", "events", "extra"] as const;
export type RawField = (typeof RAW_FIELDS)[number];
/** The JSON text each large field of one record was parsed from. */
export type RawText = Partial<Record<RawField, string>>;

/** Where problems go: a bounded list on a server (checking stops once `full`), a plain array otherwise. */
export interface IssueSink {
  push(...issues: Issue[]): void;
  readonly full?: boolean;
}

/** Yields a turn of the event loop every so often (undefined: carry on). */
export type Pause = (units?: number) => Promise<void> | undefined;

const checkedBatches = new WeakSet<object>();
const rawTexts = new WeakMap<object, RawText>();

/** True only for batches made by BatchCheck.batch(). */
export function isChecked(batch: object): batch is CheckedBatch {
  return checkedBatches.has(batch);
}

/** The received text of a checked record's large fields, when it still matches the checked value. */
export function rawTextOf(record: object): RawText | undefined {
  return rawTexts.get(record);
}

async function checkArray<T>(list: unknown[], schema: z.ZodType<T>, prefix: Loc, out: IssueSink, pause: Pause): Promise<T[] | undefined> {
  const good: T[] = [];
  let ok = true;
  for (let i = 0; i < list.length; i++) {
    if (out.full) return undefined;
    const r = schema.safeParse(list[i]);
    if (r.success) good.push(r.data);
    else {
      ok = false;
      out.push(...zodIssues(r.error.issues, [...prefix, i]));
    }
    const p = pause();
    if (p) await p;
  }
  return ok ? good : undefined;
}

const Tag = z.string();

/**
 * `events` and `tags` (the arrays whose elements have a schema, and so the
 * only places a body can hold millions of separately failing values) are
 * checked element by element, pausing every so often; the rest in one parse.
 * Same schemas, so the same issues as checkPost / checkPatch.
 */
async function checkSliced<T extends Run | RunPatch>(
  schema: z.ZodType<T>,
  value: unknown,
  prefix: Loc,
  out: IssueSink,
  pause: Pause,
): Promise<T | undefined> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    const r = schema.safeParse(value);
    if (!r.success) out.push(...zodIssues(r.error.issues, prefix));
    return r.success ? r.data : undefined;
  }
  const { events, tags, ...head } = value as Obj;
  let ok = true;
  let goodEvents: unknown[] | undefined;
  let goodTags: unknown[] | undefined;
  if (Array.isArray(events)) {
    goodEvents = await checkArray(events, RunEvent, [...prefix, "events"], out, pause);
    ok &&= goodEvents !== undefined;
  } else if (events !== undefined) head.events = events; // let the schema name the wrong type
  if (Array.isArray(tags)) {
    goodTags = await checkArray(tags, Tag, [...prefix, "tags"], out, pause);
    ok &&= goodTags !== undefined;
  } else if (tags !== undefined) head.tags = tags;
  const r = schema.safeParse(head);
  await pause(20);
  if (!r.success) out.push(...zodIssues(r.error.issues, prefix));
  if (!ok || !r.success) return undefined;
  const data = r.data as Obj;
  if (goodEvents) data.events = goodEvents;
  if (goodTags) data.tags = goodTags;
  return data as T;
}

/** Which raw texts still say exactly what the checked value holds. */
function keptText(value: Obj, raw: RawText | undefined): RawText | undefined {
  if (!raw) return undefined;
  const kept: RawText = {};
  let any = false;
  for (const f of RAW_FIELDS) {
    const text = raw[f];
    if (text === undefined) continue;
    // Event times given as epoch milliseconds become ISO strings: such events are re-serialized.
    if (
      f === "events" &&
      Array.isArray(value.events) &&
      value.events.some((e) => typeof e === "object" && e !== null && typeof (e as Obj).time !== "string")
    )
      continue;
    kept[f] = text;
    any = true;
  }
  return any ? kept : undefined;
}

/** One record of a request for BatchCheck.each: the value as received, where the request holds it, its large fields' texts. */
export interface RecordToCheck {
  value: unknown;
  prefix: Loc;
  raw?: RawText | undefined;
}

/**
 * A request's records checked one by one (sliced), then handed to `ingest` as
 * a CheckedBatch. Problems go to the sink; `batch()` is only for a request
 * with none (the caller refuses the request otherwise).
 */
export class BatchCheck {
  private readonly posts: Run[] = [];
  private readonly patches: RunPatch[] = [];
  private problems = false;

  constructor(
    private readonly out: IssueSink,
    private readonly pause: Pause = () => undefined,
  ) {}

  /** Check one post; true when it is valid (it then joins the batch). */
  async post(value: unknown, prefix: Loc, raw?: RawText): Promise<boolean> {
    return this.add(Run, quickRun(value), value, prefix, raw, this.posts);
  }

  async patch(value: unknown, prefix: Loc, raw?: RawText): Promise<boolean> {
    return this.add(RunPatch, quickPatch(value), value, prefix, raw, this.patches);
  }

  /**
   * Each record of a request in turn, as post() or patch() would check it, until the sink is full: one pending
   * promise for the request's records rather than two per record (a record the quick way passes waits only when
   * the pause says so).
   */
  async each(kind: "post" | "patch", records: Iterable<RecordToCheck>): Promise<void> {
    const post = kind === "post";
    for (const { value, prefix, raw } of records) {
      if (this.out.full) return;
      if (post) {
        const quick = quickRun(value);
        if (quick) {
          const p = this.accept(quick, value, raw, this.posts);
          if (p) await p;
        } else await this.add(Run, undefined, value, prefix, raw, this.posts);
      } else {
        const quick = quickPatch(value);
        if (quick) {
          const p = this.accept(quick, value, raw, this.patches);
          if (p) await p;
        } else await this.add(RunPatch, undefined, value, prefix, raw, this.patches);
      }
    }
  }

  /** A record the quick way passed joins the batch; the pause owed for it, if any. */
  private accept<T extends Run | RunPatch>(ok: T, value: unknown, raw: RawText | undefined, into: T[]): Promise<void> | undefined {
    const kept = raw && typeof value === "object" && value !== null ? keptText(value as Obj, raw) : undefined;
    if (kept) rawTexts.set(ok, kept);
    into.push(ok);
    // As much work as the schema's slices count for it: a long batch still gives other requests their turns.
    const r = ok as Obj;
    return this.pause(20 + (Array.isArray(r.events) ? r.events.length : 0) + (Array.isArray(r.tags) ? r.tags.length : 0));
  }

  /** `quick`: the record as run-fast-check.ts gave it back, when it could; the schema decides otherwise. */
  private async add<T extends Run | RunPatch>(
    schema: z.ZodType<T>,
    quick: T | undefined,
    value: unknown,
    prefix: Loc,
    raw: RawText | undefined,
    into: T[],
  ): Promise<boolean> {
    if (quick) {
      const p = this.accept(quick, value, raw, into);
      if (p) await p;
      return true;
    }
    const kept = raw && typeof value === "object" && value !== null ? keptText(value as Obj, raw) : undefined;
    const ok = await checkSliced(schema, value, prefix, this.out, this.pause);
    if (!ok) {
      this.problems = true;
      return false;
    }
    if (kept) rawTexts.set(ok, kept);
    into.push(ok);
    return true;
  }

  /** The checked records (and the request's attachments) for `ingest`. */
  batch(attachments?: readonly AttachmentInput[]): CheckedBatch {
    if (this.problems) throw new Error("BatchCheck.batch() after a record failed its check");
    const b = { post: this.posts, patch: this.patches, attachments } as unknown as CheckedBatch;
    checkedBatches.add(b);
    return b;
  }
}

/** Feedback records checked with the one schema (run/feedback.ts), every problem listed; throws a ValidationError listing them; problems located as the caller's request names them. */
export function checkFeedback(
  records: readonly unknown[],
  locate: (index: number) => Issue["loc"] = (i) => ["feedback", i],
): FeedbackRecord[] {
  const issues: Issue[] = [];
  const ok: FeedbackRecord[] = [];
  records.forEach((r, i) => {
    const p = Feedback.safeParse(r);
    if (p.success) ok.push(p.data);
    else issues.push(...zodIssues(p.error.issues, locate(i)));
  });
  if (issues.length) throw new ValidationError(issues);
  return ok;
}
