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
 * writes its keys, rows and rollup deltas in one statement (new-runs.ts). Each run's part in the monitoring rollups and its
 * thread is read with the rows the merge reads and writes anyway: before,
 * from the stored row read under the lock; after, from the write's
 * RETURNING, the same SQL expressions retention subtracts with.
 *
 * Large JSON columns (over IN_ROW_BYTES) are not read for a merge that does not
 * need them, and an UPDATE names only the columns it changes: a patch that
 * sets an end time leaves a large `inputs` where PostgreSQL put it (TOAST).
 */
import type pg from "pg";
import type { Obj } from "../../internal/obj.js";
import { applyChange, completesRoot, JSONCOL, SCALAR } from "../merge-rules.js";
import { RollupDeltas } from "../rollup.js";
import { CONTRIBUTION } from "./rollups.js";
import { queueRollups } from "./rollup-queue.js";
import { prepared } from "./prepared.js";
import type { ContributionRow } from "../rollup.js";
import { ThreadDeltas, type ThreadContribution } from "../thread-rollup.js";
import { applyThreads, THREAD_PART } from "./thread-table.js";
import { newRunRows, writeNewRuns, type NewRunRows } from "./new-runs.js";
import { hasBigValue, load, runsById, toColumns, type DeriveOptions, type MergeOutcome } from "./run-state.js";
import { ROW_COLUMNS, TYPES } from "./columns.js";

/** Stored JSON up to this many bytes is read with the row; larger stays in the database until needed. */
const IN_ROW_BYTES = 4096;

/**
 * Inserts the batch's missing keys and locks the existing ones, row by row in
 * id order (ON CONFLICT DO UPDATE locks the row it meets, waiting for a
 * writer that holds it). `fresh`: the row was inserted here, so no run with
 * that id is stored (a run is never written before its key);
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
export type Part = ContributionRow & ThreadContribution;

export interface MergeOptions extends DeriveOptions {
  /** False when the caller already tried the batch as new runs (new-runs.ts) and some existed: the merge goes straight to the keys. */
  tryNewRuns?: boolean;
  /** The batch's rows as new runs, when the caller built them already. */
  newRuns?: NewRunRows;
}

/** Merge the batch's posts and patches inside the caller's transaction, and insert their projects' rows. */
export async function mergeRuns(
  client: pg.ClientBase,
  posts: readonly Obj[],
  patches: readonly Obj[],
  opts: MergeOptions,
): Promise<MergeOutcome> {
  const { byId, ids } = runsById(posts, patches);
  const outcome: MergeOutcome = { created: 0, updated: 0, completedRoots: [], projects: new Set() };
  if (ids.length === 0) return outcome;

  const now = new Date().toISOString();
  if (patches.length === 0 && opts.tryNewRuns !== false) {
    const rows = opts.newRuns ?? newRunRows(ids, byId, now, opts);
    const parts = rows && (await writeNewRuns(client, rows));
    if (parts) {
      await recordWrites(client, [], [], parts);
      return rows.outcome;
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
    if (completesRoot(state, s.posts, s.patches, prev?.has_post ?? false)) outcome.completedRoots.push(id);
    if (typeof params.session_name === "string") outcome.projects.add(params.session_name);
  }
  // The projects' rows go with the first write (a CTE of it), saving a round trip.
  const projects = new ProjectRows([...outcome.projects].sort(), now);
  const written = [...(await insertRows(client, inserts, projects))];
  for (const group of updates.values()) written.push(...(await updateRows(client, group, projects)));
  await recordWrites(client, [...stored.values()] as unknown as Part[], written);
  return outcome;
}

/**
 * The writes' parts in the monitoring rollups and the threads: what the stored rows gave is taken away, what the written ones give is added.
 * `threadsOnly`: written rows whose rollup deltas their statement queued itself (new-runs.ts).
 */
async function recordWrites(
  client: pg.ClientBase,
  before: readonly Part[],
  written: readonly Part[],
  threadsOnly: readonly ThreadContribution[] = [],
): Promise<void> {
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
  for (const r of threadsOnly) threads.add(r, 1);
  await queueRollups(client, deltas);
  await applyThreads(client, threads);
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
  const big = hasBigValue;
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
  const big = rows.some(hasBigValue);
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
