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

/** Per field of the schema: its test when present (not undefined), and whether a post must have it. */
const FIELDS: readonly [string, (v: unknown) => boolean, boolean, boolean][] = [
  // name, test, required in a post, null accepted
  ["id", uuid, true, false],
  ["trace_id", uuid, true, false],
  ["parent_run_id", uuid, false, true],
  ["dotted_order", nonEmpty, true, false],
  ["name", text, true, false],
  ["run_type", nonEmpty, true, false],
  ["start_time", time, true, false],
  ["end_time", time, false, true],
  ["inputs", plain, false, false],
  ["outputs", plain, false, true],
  ["error", text, false, true],
  ["events", events, false, false],
  ["tags", tags, false, false],
  ["extra", extra, false, false],
  ["session_name", text, false, false],
];

function quick(value: unknown, post: boolean): boolean {
  if (!plain(value)) return false;
  for (const [name, test, required, nullable] of FIELDS) {
    const v = value[name];
    if (v === undefined) {
      // A patch needs only its id.
      if (name === "id" || (required && post)) return false;
      continue;
    }
    if (v === null ? !nullable : !test(v)) return false;
  }
  return true;
}

/** The record as the Run schema would give it back, or undefined: ask the schema. */
export function quickRun(value: unknown): Run | undefined {
  return quick(value, true) ? (value as Run) : undefined;
}

/** The record as the RunPatch schema would give it back, or undefined: ask the schema. */
export function quickPatch(value: unknown): RunPatch | undefined {
  return quick(value, false) ? (value as RunPatch) : undefined;
}
