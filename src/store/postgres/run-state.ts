/**
 * One run's state as the PostgreSQL merge works on it: read from a stored
 * row (`load`), changed by the merge rules, and turned back into the columns
 * to write (`toColumns`), with what the store derives on ingest (native
 * format, usage, cost, model and provider). A JSON column too large to read
 * with the row stays in the database (InDb) until the derivation needs it.
 * Also what a batch's write did (MergeOutcome), which merge.ts and
 * new-runs.ts both answer.
 */
import type pg from "pg";
import { isObj, type Obj } from "../../internal/obj.js";
import { deriveLlm, firstTokenTime } from "../derive.js";
import { JSONCOL, SCALAR, type Texts } from "../merge-rules.js";
import { DERIVE_ON_READ_BYTES, msBetween, storable, traceStart, usageOf, jsonbText } from "./columns.js";

/** What the store derives on ingest. */
export interface DeriveOptions {
  normalizeOnIngest: boolean;
}

/** What one batch did (IngestResult without attachments). */
export interface MergeOutcome {
  created: number;
  updated: number;
  completedRoots: string[];
  /** Projects the batch's runs are in (their rows inserted with the runs). */
  projects: Set<string>;
}

/** Rows with a column larger than this are inserted one by one (an array literal would copy it again). */
export const BIG_VALUE_CHARS = 256 * 1024;

/** Whether a row to write has a column too large for the array form. */
export const hasBigValue = (r: Obj): boolean => JSONCOL.some((c) => typeof r[c] === "string" && (r[c] as string).length > BIG_VALUE_CHARS);

/** A JSON column left in the database: counts as set; read only when the derivation needs it. */
export class InDb {
  constructor(
    readonly id: string,
    readonly column: string,
    readonly bytes: number,
  ) {}
}

export interface Loaded {
  state: Obj;
  texts: Texts;
  /** The stored row's bookkeeping, when the run exists. */
  prev?: { has_post: boolean; received_at: string; trace_start: string | null; exact: Obj | undefined };
}

/** A run's state from its stored row (LOAD_SQL's columns in merge.ts), or a new one when there is none. */
export function load(row: Obj | undefined, id: string): Loaded {
  const state: Obj = { id };
  const texts: Texts = {};
  if (!row) return { state, texts };
  for (const c of SCALAR) if (row[c] !== null) state[c] = row[c];
  const exact = row.exact ? (JSON.parse(row.exact as string) as Obj) : undefined;
  if (exact) Object.assign(state, exact);
  for (const c of JSONCOL) {
    const bytes = row[`${c}:bytes`] as number | null;
    if (bytes === null) continue;
    const text = row[c] as string | null;
    if (text === null) state[c] = new InDb(id, c, bytes);
    else {
      state[c] = JSON.parse(text);
      texts[c] = text;
    }
  }
  if (row.other) state.__other = JSON.parse(row.other as string);
  return {
    state,
    texts,
    prev: {
      has_post: row.has_post as boolean,
      received_at: row.received_at as string,
      trace_start: row.trace_start as string | null,
      exact,
    },
  };
}

/** A JSON column's value, read from the database when it was left there. */
async function valueOf(client: pg.ClientBase | undefined, v: unknown): Promise<unknown> {
  if (!(v instanceof InDb)) return v;
  if (!client) throw new Error(`run ${v.id}: ${v.column} is stored in the database, and no connection was given to read it`);
  const r = await client.query(`SELECT ${v.column} AS v FROM runs WHERE id = $1`, [v.id]);
  const text = r.rows[0]?.v as string | null | undefined;
  return text == null ? undefined : JSON.parse(text);
}

/** The JSON columns the derivation reads (the stored ones read from the database when left there), for `columnsOf`. */
interface Read {
  inputs: unknown;
  outputs: unknown;
  extra: unknown;
}

/**
 * The columns to write for one run's merged state: every column for a new row, only those that changed for a stored one.
 * `client` reads the JSON columns a stored row left in the database; a new run has none, so it needs no connection
 * (`newRunColumns` answers it without awaiting).
 */
export async function toColumns(
  client: pg.ClientBase | undefined,
  state: Obj,
  texts: Texts,
  prev: Loaded["prev"],
  posted: boolean,
  now: string,
  messagesChanged: boolean,
  opts: DeriveOptions,
): Promise<Obj> {
  // Nothing the derivation or usage reads (messages, run type, metadata) changed: those columns stay.
  const rederive = !prev || messagesChanged;
  let read: Read | undefined;
  if (rederive) {
    // The derivation and the usage read the metadata: a large `extra` left in the database is read for them.
    const llm = state.run_type === "llm";
    read = {
      extra: llm ? await valueOf(client, state.extra) : state.extra,
      outputs: llm ? await valueOf(client, state.outputs) : undefined,
      inputs: opts.normalizeOnIngest && llm ? await valueOf(client, state.inputs) : undefined,
    };
  }
  return columnsOf(state, texts, prev, posted, now, read, opts).row;
}

/** toColumns for a new run's state (nothing of it is left in the database, so nothing is awaited), and its `extra` as the row stores it. */
export function newRunColumns(state: Obj, texts: Texts, now: string, opts: DeriveOptions): { row: Obj; extra: unknown } {
  const llm = state.run_type === "llm";
  const read = {
    extra: state.extra,
    outputs: llm ? state.outputs : undefined,
    inputs: opts.normalizeOnIngest && llm ? state.inputs : undefined,
  };
  return columnsOf(state, texts, undefined, true, now, read, opts);
}

/** A JSON column's text as it is written: as received or read when known, else encoded. */
const textOf = (state: Obj, texts: Texts, c: string): string | null => {
  const v = state[c];
  return v === undefined ? null : (texts[c] ?? JSON.stringify(v));
};

/** The bytes of a JSON column as written (a column left in the database knows its size). */
function bytesOf(state: Obj, params: Obj, c: string): number {
  const v = state[c];
  if (v instanceof InDb) return v.bytes;
  return typeof params[c] === "string" ? Buffer.byteLength(params[c] as string, "utf8") : 0;
}

/** toColumns once the JSON columns the derivation reads are at hand (`read`: undefined when the derived columns stay); also the `extra` written. */
function columnsOf(
  state: Obj,
  texts: Texts,
  prev: Loaded["prev"],
  posted: boolean,
  now: string,
  read: Read | undefined,
  opts: DeriveOptions,
): { row: Obj; extra: unknown } {
  const params: Obj = { id: state.id, has_post: (prev?.has_post ?? false) || posted, updated_at: now };
  if (!prev) params.received_at = now;
  let exact: Obj | undefined;
  for (const c of SCALAR) {
    const v = state[c] ?? null;
    if (typeof v === "string") {
      const s = storable(v);
      if (s !== v) (exact ??= {})[c] = v;
      params[c] = s;
    } else params[c] = v;
  }
  if (exact || prev?.exact) params.exact = exact ? JSON.stringify(exact) : null;
  const ts = traceStart(state);
  if (!prev || ts !== prev.trace_start) params.trace_start = ts;
  params.latency_ms = msBetween(state.start_time as string | undefined, state.end_time as string | undefined);
  for (const c of JSONCOL) if (!(state[c] instanceof InDb)) params[c] = textOf(state, texts, c);
  params.other = state.__other ? JSON.stringify(state.__other) : null;
  if (!(state.events instanceof InDb)) params.first_token_time = firstTokenTime(state.events);
  const llm = state.run_type === "llm";
  let extra = read ? read.extra : state.extra;
  if (read) {
    let normalizedOutputs: unknown = null;
    if (opts.normalizeOnIngest && llm) {
      const d = deriveLlm(read.inputs, read.outputs, isObj(extra) && isObj(extra.metadata) ? extra.metadata : undefined);
      // The model identity the run builder gives an llm run sent without one goes into its stored metadata (derive.ts).
      if (d.metadata) {
        extra = { ...(isObj(extra) ? extra : {}), metadata: d.metadata };
        params.extra = JSON.stringify(extra);
      }
      params.detected_format = d.detected_format;
      // A large side's native copy is derived when read (see toStored), as the SQLite store does.
      params.normalized_inputs =
        d.normalized_inputs && bytesOf(state, params, "inputs") <= DERIVE_ON_READ_BYTES ? JSON.stringify(d.normalized_inputs) : null;
      params.normalized_outputs =
        d.normalized_outputs && bytesOf(state, params, "outputs") <= DERIVE_ON_READ_BYTES ? JSON.stringify(d.normalized_outputs) : null;
      params.normalize_error = d.normalize_error;
      normalizedOutputs = params.normalized_outputs === null ? null : d.normalized_outputs;
    } else {
      params.detected_format = params.normalized_inputs = params.normalized_outputs = params.normalize_error = null;
    }
    const usage = llm ? usageOf(normalizedOutputs, read.outputs, extra) : undefined;
    params.usage = usage === undefined ? null : jsonbText(usage);
    const cost = (usage as Obj | undefined)?.total_cost;
    params.total_cost = typeof cost === "number" && Number.isFinite(cost) ? cost : null;
  }
  if (!(extra instanceof InDb)) {
    const meta = isObj(extra) && isObj(extra.metadata) ? extra.metadata : undefined;
    params.model = metaText(meta?.trace_model_name);
    params.provider = metaText(meta?.trace_provider);
  }
  return { row: params, extra };
}

/** Model and provider as the viewer filters them: a string as it is, another scalar as its text. */
function metaText(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  const text = typeof v === "string" ? v : JSON.stringify(v);
  return storable(text);
}

/** A batch's posts and patches by run id, and the ids in order (the order every batch locks keys in). */
export function runsById(
  posts: readonly Obj[],
  patches: readonly Obj[],
): { byId: Map<string, { posts: Obj[]; patches: Obj[] }>; ids: string[] } {
  const byId = new Map<string, { posts: Obj[]; patches: Obj[] }>();
  const slot = (id: string) => {
    let s = byId.get(id);
    if (!s) byId.set(id, (s = { posts: [], patches: [] }));
    return s;
  };
  for (const p of posts) slot(p.id as string).posts.push(p);
  for (const p of patches) slot(p.id as string).patches.push(p);
  return { byId, ids: [...byId.keys()].sort() };
}
