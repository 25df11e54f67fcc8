/**
 * A quick way through the Run / RunPatch schemas (run/schema.ts) for the
 * usual record: ids that are UUIDs, times as RFC 3339 strings, plain objects
 * where the schema wants records, short event and tag lists. Such a record is
 * exactly what the schema would give back (its checks accept it and change
 * nothing in it), so it is given back as it is. Anything else, valid or not,
 * is declined (undefined) and goes through the schema itself, which alone
 * transforms values (epoch-millisecond times) and names problems: the quick
 * way decides no refusal and writes no issue, so what is accepted and every
 * `{loc, msg, type}` stay the schema's.
 */
import { regexes } from "zod";
import { dateTimeProblem } from "../run/schema.js";
import type { Run, RunPatch } from "../run/schema.js";

type Obj = Record<string, unknown>;

/** The schema's own UUID pattern (z.uuid()). */
const UUID = regexes.uuid();
/** Longer event or tag lists go through the schema, which checks them in slices (validate.ts). */
const MAX_QUICK_ITEMS = 256;

/**
 * A plain object (what JSON.parse makes) the schema keeps as it is: an object
 * or record check accepts it. An own `__proto__` key (JSON.parse makes one)
 * is one the schema drops from its copy: declined.
 */
function plain(v: unknown): v is Obj {
  if (typeof v !== "object" || v === null) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return (proto === Object.prototype || proto === null) && !Object.hasOwn(v, "__proto__");
}

const uuid = (v: unknown) => typeof v === "string" && UUID.test(v);
const time = (v: unknown) => typeof v === "string" && dateTimeProblem(v) === undefined;
const text = (v: unknown) => typeof v === "string";
const nonEmpty = (v: unknown) => typeof v === "string" && v.length > 0;

function events(v: unknown): boolean {
  if (!Array.isArray(v) || v.length > MAX_QUICK_ITEMS) return false;
  for (const e of v) {
    if (!plain(e) || typeof e.name !== "string" || !time(e.time)) return false;
    if (e.kwargs !== undefined && !plain(e.kwargs)) return false;
  }
  return true;
}

function tags(v: unknown): boolean {
  if (!Array.isArray(v) || v.length > MAX_QUICK_ITEMS) return false;
  for (const t of v) if (typeof t !== "string") return false;
  return true;
}

const extra = (v: unknown) => plain(v) && (v.metadata === undefined || plain(v.metadata));

/**
 * A field of the schema: absent (undefined) is fine unless `required`, null unless not `nullable`, any other value
 * must pass `test`.
 */
function field(v: unknown, test: (v: unknown) => boolean, required: boolean, nullable: boolean): boolean {
  if (v === undefined) return !required;
  return v === null ? nullable : test(v);
}

/**
 * Each field of the schema read by name (a record's fields are then read where its shape says, not looked up by a
 * key that differs on each turn of a loop). A patch needs only its id; a post, every field marked required here.
 */
function quick(value: unknown, post: boolean): boolean {
  if (!plain(value)) return false;
  return (
    field(value.id, uuid, true, false) &&
    field(value.trace_id, uuid, post, false) &&
    field(value.parent_run_id, uuid, false, true) &&
    field(value.dotted_order, nonEmpty, post, false) &&
    field(value.name, text, post, false) &&
    field(value.run_type, nonEmpty, post, false) &&
    field(value.start_time, time, post, false) &&
    field(value.end_time, time, false, true) &&
    field(value.inputs, plain, false, false) &&
    field(value.outputs, plain, false, true) &&
    field(value.error, text, false, true) &&
    field(value.events, events, false, false) &&
    field(value.tags, tags, false, false) &&
    field(value.extra, extra, false, false) &&
    field(value.session_name, text, false, false)
  );
}

/** The record as the Run schema would give it back, or undefined: ask the schema. */
export function quickRun(value: unknown): Run | undefined {
  return quick(value, true) ? (value as Run) : undefined;
}

/** The record as the RunPatch schema would give it back, or undefined: ask the schema. */
export function quickPatch(value: unknown): RunPatch | undefined {
  return quick(value, false) ? (value as RunPatch) : undefined;
}
