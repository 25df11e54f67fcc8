/**
 * The PostgreSQL store's merge: one ingest batch in one transaction, with the
 * merge rules every store applies (store/merge-rules.ts), safe when several
 * connections (or collectors) write the same runs at once.
 *
 * Concurrency: every run id has a row in `run_keys`. A batch inserts or locks
 * its ids' key rows in one statement, in id order (so two batches never wait
 * on each other in a circle), and reads the stored runs under those locks. A
 * post and a patch of one run arriving on two connections at the same moment
 * are therefore applied one after the other (the run is read only once its
 * key is locked): the second reads what the first wrote, and the result is
 * one complete run with the newest update winning, as in one process.
 *
 * Round trips do not grow with the batch: the keys, the stored runs (only
 * when some key already existed), one multi-row write per kind of write, the
 * queued rollup deltas. A batch of posts of new runs (a client's first send)
 * writes its keys and rows in one statement (insertIfAllNew). Each run's part in the monitoring rollups and its
 * thread is read with the rows the merge reads and writes anyway: before,
 * from the stored row read under the lock; after, from the write's
 * RETURNING, the same SQL expressions retention subtracts with.
 *
 * Large JSON columns (over IN_ROW_BYTES) are not read for a merge that does not
 * need them, and an UPDATE names only the columns it changes: a patch that
 * sets an end time leaves a large `inputs` where PostgreSQL put it (TOAST).
 */
import type pg from "pg";
import { isObj, type Obj } from "../../internal/obj.js";
import { deriveLlm, firstTokenTime } from "../derive.js";
import { applyChange, endsRun, JSONCOL, SCALAR, type Texts } from "../merge-rules.js";
import { RollupDeltas } from "../rollup.js";
import { CONTRIBUTION } from "./rollups.js";
import { queueRollups } from "./rollup-queue.js";
import { prepared } from "./prepared.js";
import type { ContributionRow } from "../rollup.js";
import { ThreadDeltas, type ThreadContribution } from "../thread-rollup.js";
import { applyThreads, THREAD_PART } from "./thread-table.js";
import { ROW_COLUMNS, TYPES, DERIVE_ON_READ_BYTES, msBetween, scalarColumn, traceStart, usageOf, jsonbText } from "./columns.js";

/** Stored JSON up to this many bytes is read with the row; larger stays in the database until needed. */
const IN_ROW_BYTES = 4096;
/** Rows with a column larger than this are inserted one by one (an array literal would copy it again). */
const BIG_VALUE_CHARS = 256 * 1024;

/** A JSON column left in the database: counts as set; read only when the derivation needs it. */
class InDb {
  constructor(
    readonly id: string,
    readonly column: string,
    readonly bytes: number,
  ) {}
}

interface Loaded {
  state: Obj;
  texts: Texts;
  /** The stored row's bookkeeping, when the run exists. */
  prev?: { has_post: boolean; received_at: string; trace_start: string | null; exact: Obj | undefined };
}

/**
 * Inserts the batch's missing keys and locks the existing ones, row by row in
 * id order (ON CONFLICT DO UPDATE locks the row it meets, waiting for a
 * writer that holds it). `fresh`: the row was inserted here, so no run with
 * that id is stored (a run is written with its key, in one transaction);
 * xmax is 0 only on a row version that no transaction has locked or updated,
 * which the conflict path always does.
 *
 * The runs are read by a statement of their own: under READ COMMITTED each
 * statement reads as of its start, and this one may wait for a lock, so a
 * read inside it would miss the update it waited for.
 */
const KEYS_SQL = `INSERT INTO run_keys AS k (id) SELECT x FROM unnest($1::text[]) AS x ORDER BY x
  ON CONFLICT (id) DO UPDATE SET id = k.id RETURNING id, (k.xmax = 0) AS fresh`;

/** What to read of a stored run, and its part in the rollups and its thread before this write. */
const LOAD_SQL = `SELECT r.id, r.has_post, r.other, r.exact, r.received_at,
  to_char(r.trace_start AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS trace_start,
  ${SCALAR.map((c) => `r.${c}`).join(", ")},
  ${JSONCOL.map((c) => `octet_length(r.${c}) AS "${c}:bytes", CASE WHEN octet_length(r.${c}) <= ${IN_ROW_BYTES} THEN r.${c} END AS ${c}`).join(", ")},
  ${CONTRIBUTION}, ${THREAD_PART}
  FROM runs r WHERE r.id = ANY($1::text[])`;

/** What a write returns of each run it wrote: its part in the rollups and its thread after the write. */
const WRITTEN = `RETURNING ${CONTRIBUTION}, ${THREAD_PART}`;
type Part = ContributionRow & ThreadContribution;

function load(row: Obj | undefined, id: string): Loaded {
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

export interface MergeOptions {
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

/** Merge the batch's posts and patches inside the caller's transaction, and insert their projects' rows. */
export async function mergeRuns(
  client: pg.ClientBase,
  posts: readonly Obj[],
  patches: readonly Obj[],
  opts: MergeOptions,
): Promise<MergeOutcome> {
  const byId = new Map<string, { posts: Obj[]; patches: Obj[] }>();
  const slot = (id: string) => {
    let s = byId.get(id);
    if (!s) byId.set(id, (s = { posts: [], patches: [] }));
    return s;
  };
  for (const p of posts) slot(p.id as string).posts.push(p);
  for (const p of patches) slot(p.id as string).patches.push(p);
  const ids = [...byId.keys()].sort();
  const outcome: MergeOutcome = { created: 0, updated: 0, completedRoots: [], projects: new Set() };
  if (ids.length === 0) return outcome;

  const now = new Date().toISOString();
  if (patches.length === 0) {
    const fresh = await insertIfAllNew(client, ids, byId, now, opts);
    if (fresh) {
      await recordWrites(client, [], fresh.written);
      return fresh.outcome;
    }
  }
  const keys = (await client.query<{ id: string; fresh: boolean }>(prepared(KEYS_SQL, [ids]))).rows;
  const known = keys.filter((k) => !k.fresh).map((k) => k.id);
  const stored = new Map(
    known.length ? ((await client.query(prepared(LOAD_SQL, [known]))).rows as Obj[]).map((r) => [r.id as string, r]) : [],
  );
  const inserts: Obj[] = [];
  const updates = new Map<string, Obj[]>();
  for (const id of ids) {
    const s = byId.get(id)!;
    const { state, texts, prev } = load(stored.get(id), id);
    let changed = false;
    for (const p of s.posts) changed = applyChange(state, p, true, texts) || changed;
    for (const p of s.patches) changed = applyChange(state, p, false, texts) || changed;
    const params = await toColumns(client, state, texts, prev, s.posts.length > 0, now, changed || !prev, opts);
    if (prev) {
      outcome.updated++;
      const key = Object.keys(params).join(",");
      const group = updates.get(key);
      if (group) group.push(params);
      else updates.set(key, [params]);
    } else {
      outcome.created++;
      inserts.push(params);
    }
    if (endsRun([...s.posts, ...s.patches]) && state.end_time && !state.parent_run_id) outcome.completedRoots.push(id);
    if (typeof params.session_name === "string") outcome.projects.add(params.session_name);
  }
  // The projects' rows go with the first write (a CTE of it), saving a round trip.
  const projects = new ProjectRows([...outcome.projects].sort(), now);
  const written = [...(await insertRows(client, inserts, projects))];
  for (const group of updates.values()) written.push(...(await updateRows(client, group, projects)));
  await recordWrites(client, [...stored.values()] as unknown as Part[], written);
  return outcome;
}

/** The writes' parts in the monitoring rollups and the threads: what the stored rows gave is taken away, what the written ones give is added. */
async function recordWrites(client: pg.ClientBase, before: readonly Part[], written: readonly Part[]): Promise<void> {
  const deltas = new RollupDeltas();
  const threads = new ThreadDeltas();
  for (const r of before) {
    deltas.add(r, -1);
    threads.add(r, -1);
  }
  for (const r of written) {
    deltas.add(r, 1);
    threads.add(r, 1);
  }
  await queueRollups(client, deltas);
  await applyThreads(client, threads);
}

/**
 * A batch of posts only, most often of runs never seen (a client's first
 * send): their keys and rows in ONE statement, a round trip fewer than
 * inserting the keys first. The rows are built as new ones; the insert
 * happens only if every key was inserted by this statement (the CTE's
 * `fresh`, as in KEYS_SQL), so no stored run can be overwritten. Otherwise
 * nothing but the keys was written (locked or inserted, as KEYS_SQL would)
 * and the caller merges the usual way, in the same transaction. Undefined
 * then, and for batches with a value too large for the array form.
 */
async function insertIfAllNew(
  client: pg.ClientBase,
  ids: readonly string[],
  byId: ReadonlyMap<string, { posts: Obj[]; patches: Obj[] }>,
  now: string,
  opts: MergeOptions,
): Promise<{ outcome: MergeOutcome; written: Part[] } | undefined> {
  const outcome: MergeOutcome = { created: 0, updated: 0, completedRoots: [], projects: new Set() };
  const rows: Obj[] = [];
  for (const id of ids) {
    const s = byId.get(id)!;
    const { state, texts } = load(undefined, id);
    for (const p of s.posts) applyChange(state, p, true, texts);
    const params = await toColumns(client, state, texts, undefined, true, now, true, opts);
    if (JSONCOL.some((c) => typeof params[c] === "string" && (params[c] as string).length > BIG_VALUE_CHARS)) return undefined;
    rows.push(params);
    if (endsRun(s.posts) && state.end_time && !state.parent_run_id) outcome.completedRoots.push(id);
    if (typeof params.session_name === "string") outcome.projects.add(params.session_name);
  }
  const cols = ROW_COLUMNS;
  const n = cols.length;
  const names = [...outcome.projects].sort();
  const sql = `WITH keys AS (INSERT INTO run_keys AS k (id) SELECT x FROM unnest($${n + 1}::text[]) AS x ORDER BY x
      ON CONFLICT (id) DO UPDATE SET id = k.id RETURNING (k.xmax = 0) AS fresh)${
        names.length
          ? `, new_projects AS (INSERT INTO projects (name, created_at) SELECT unnest($${n + 2}::text[]), $${n + 3}::text ON CONFLICT DO NOTHING)`
          : ""
      }
    INSERT INTO runs (${cols.join(", ")}) SELECT * FROM unnest(${cols.map((c, i) => `$${i + 1}::${TYPES[c]}[]`).join(", ")})
    WHERE NOT EXISTS (SELECT 1 FROM keys WHERE NOT fresh) ${WRITTEN}`;
  const params: unknown[] = [...cols.map((c) => rows.map((r) => r[c] ?? null)), ids, ...(names.length ? [names, now] : [])];
  const written = (await client.query(prepared(sql, params))).rows as Part[];
  if (written.length !== ids.length) return undefined;
  outcome.created = ids.length;
  return { outcome, written };
}

/** A JSON column's value, read from the database when it was left there. */
async function valueOf(client: pg.ClientBase, v: unknown): Promise<unknown> {
  if (!(v instanceof InDb)) return v;
  const r = await client.query(`SELECT ${v.column} AS v FROM runs WHERE id = $1`, [v.id]);
  const text = r.rows[0]?.v as string | null | undefined;
  return text == null ? undefined : JSON.parse(text);
}

/** The columns to write for one run's merged state: every column for a new row, only those that changed for a stored one. */
async function toColumns(
  client: pg.ClientBase,
  state: Obj,
  texts: Texts,
  prev: Loaded["prev"],
  posted: boolean,
  now: string,
  messagesChanged: boolean,
  opts: MergeOptions,
): Promise<Obj> {
  const params: Obj = { id: state.id, has_post: (prev?.has_post ?? false) || posted, updated_at: now };
  if (!prev) params.received_at = now;
  const exact: Obj = {};
  for (const c of SCALAR) {
    const v = state[c] ?? null;
    params[c] = typeof v === "string" ? scalarColumn(v, () => (exact[c] = v)) : v;
  }
  if (Object.keys(exact).length || prev?.exact) params.exact = Object.keys(exact).length ? JSON.stringify(exact) : null;
  const ts = traceStart(state);
  if (!prev || ts !== prev.trace_start) params.trace_start = ts;
  params.latency_ms = msBetween(state.start_time as string | undefined, state.end_time as string | undefined);
  const bytes: Record<string, number> = {};
  for (const c of JSONCOL) {
    const v = state[c];
    if (v instanceof InDb) {
      bytes[c] = v.bytes;
      continue;
    }
    const text = v === undefined ? null : (texts[c] ?? JSON.stringify(v));
    params[c] = text;
    bytes[c] = text === null ? 0 : Buffer.byteLength(text, "utf8");
  }
  params.other = state.__other ? JSON.stringify(state.__other) : null;
  if (!(state.events instanceof InDb)) params.first_token_time = firstTokenTime(state.events);
  const llm = state.run_type === "llm";
  // Nothing the derivation or usage reads (messages, run type, metadata) changed: those columns stay.
  const rederive = !prev || messagesChanged;
  // The derivation and the usage read the metadata: a large `extra` left in the database is read for them.
  let extra = rederive && llm ? await valueOf(client, state.extra) : state.extra;
  if (rederive) {
    let normalizedOutputs: unknown = null;
    const outputs = llm ? await valueOf(client, state.outputs) : undefined;
    if (opts.normalizeOnIngest && llm) {
      const d = deriveLlm(await valueOf(client, state.inputs), outputs, isObj(extra) && isObj(extra.metadata) ? extra.metadata : undefined);
      // The model identity the run builder gives an llm run sent without one goes into its stored metadata (derive.ts).
      if (d.metadata) {
        extra = { ...(isObj(extra) ? extra : {}), metadata: d.metadata };
        params.extra = JSON.stringify(extra);
      }
      params.detected_format = d.detected_format;
      // A large side's native copy is derived when read (see toStored), as the SQLite store does.
      params.normalized_inputs = d.normalized_inputs && bytes.inputs! <= DERIVE_ON_READ_BYTES ? JSON.stringify(d.normalized_inputs) : null;
      params.normalized_outputs =
        d.normalized_outputs && bytes.outputs! <= DERIVE_ON_READ_BYTES ? JSON.stringify(d.normalized_outputs) : null;
      params.normalize_error = d.normalize_error;
      normalizedOutputs = params.normalized_outputs === null ? null : d.normalized_outputs;
    } else {
      params.detected_format = params.normalized_inputs = params.normalized_outputs = params.normalize_error = null;
    }
    const usage = llm ? usageOf(normalizedOutputs, outputs, extra) : undefined;
    params.usage = usage === undefined ? null : jsonbText(usage);
    const cost = (usage as Obj | undefined)?.total_cost;
    params.total_cost = typeof cost === "number" && Number.isFinite(cost) ? cost : null;
  }
  if (!(extra instanceof InDb)) {
    const meta = isObj(extra) && isObj(extra.metadata) ? extra.metadata : undefined;
    params.model = metaText(meta?.trace_model_name);
    params.provider = metaText(meta?.trace_provider);
  }
  return params;
}

/** Model and provider as the viewer filters them: a string as it is, another scalar as its text. */
function metaText(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  const text = typeof v === "string" ? v : JSON.stringify(v);
  return scalarColumn(text, () => undefined);
}

/**
 * The batch's projects, inserted (ON CONFLICT DO NOTHING) by a CTE of the
 * first write statement that runs; later statements add nothing.
 */
class ProjectRows {
  constructor(
    private names: string[],
    private readonly createdAt: string,
  ) {}

  /** `sql` (whose parameters are `params`) with the insert in front when it is still due. */
  prefix(sql: string, params: unknown[]): [string, unknown[]] {
    if (this.names.length === 0) return [sql, params];
    const n = params.length;
    const out: [string, unknown[]] = [
      `WITH new_projects AS (INSERT INTO projects (name, created_at) SELECT unnest($${n + 1}::text[]), $${n + 2}::text ON CONFLICT DO NOTHING) ${sql}`,
      [...params, this.names, this.createdAt],
    ];
    this.names = [];
    return out;
  }
}

/** Runs the write; `named` for texts of a fixed few (the inserts), not the updates, whose text follows the columns a patch changes. */
async function written(client: pg.ClientBase, projects: ProjectRows, sql: string, params: unknown[], named = false): Promise<Part[]> {
  const [text, values] = projects.prefix(`${sql} ${WRITTEN}`, params);
  return (await (named ? client.query(prepared(text, values)) : client.query(text, values))).rows as Part[];
}

async function insertRows(client: pg.ClientBase, rows: Obj[], projects: ProjectRows): Promise<Part[]> {
  const out: Part[] = [];
  if (rows.length === 0) return out;
  const cols = ROW_COLUMNS;
  const big = (r: Obj) => JSONCOL.some((c) => typeof r[c] === "string" && (r[c] as string).length > BIG_VALUE_CHARS);
  const batch = rows.filter((r) => !big(r));
  for (const r of rows.filter(big)) {
    out.push(
      ...(await written(
        client,
        projects,
        `INSERT INTO runs (${cols.join(", ")}) VALUES (${cols.map((c, i) => `$${i + 1}::${TYPES[c]}`).join(", ")})`,
        cols.map((c) => r[c] ?? null),
      )),
    );
  }
  if (batch.length === 0) return out;
  out.push(
    ...(await written(
      client,
      projects,
      `INSERT INTO runs (${cols.join(", ")}) SELECT * FROM unnest(${cols.map((c, i) => `$${i + 1}::${TYPES[c]}[]`).join(", ")})`,
      cols.map((c) => batch.map((r) => r[c] ?? null)),
      true,
    )),
  );
  return out;
}

/**
 * One UPDATE for runs whose changed columns are the same set. \`r.id = ANY\` as
 * well as the join: it lets every partition find its rows by index, where the
 * join alone may be planned as a scan of every partition. The new values are
 * named v_<column>, so RETURNING's unqualified columns are the run's.
 */
async function updateRows(client: pg.ClientBase, rows: Obj[], projects: ProjectRows): Promise<Part[]> {
  const cols = Object.keys(rows[0]!).filter((c) => c !== "id");
  const big = rows.some((r) => JSONCOL.some((c) => typeof r[c] === "string" && (r[c] as string).length > BIG_VALUE_CHARS));
  if (big || rows.length === 1) {
    const out: Part[] = [];
    for (const r of rows) {
      out.push(
        ...(await written(
          client,
          projects,
          `UPDATE runs SET ${cols.map((c, i) => `${c} = $${i + 2}::${TYPES[c]}`).join(", ")} WHERE id = $1`,
          [r.id, ...cols.map((c) => r[c] ?? null)],
        )),
      );
    }
    return out;
  }
  const all = ["id", ...cols];
  return written(
    client,
    projects,
    `UPDATE runs AS r SET ${cols.map((c) => `${c} = v.v_${c}`).join(", ")}
     FROM unnest(${all.map((c, i) => `$${i + 1}::${TYPES[c]}[]`).join(", ")}) AS v(${all.map((c) => `v_${c}`).join(", ")})
     WHERE r.id = v.v_id AND r.id = ANY($1::text[])`,
    all.map((c) => rows.map((r) => r[c] ?? null)),
  );
}
