/**
 * Posts of runs never seen (a client's first send, most of what a collector
 * receives): their keys, projects, rows and monitoring rollup deltas written
 * by ONE statement. Sent on its own (`insertNewRuns`), that statement is its
 * own transaction: all of it commits or none, and its reply comes after the
 * commit, as a COMMIT's would, so a batch of new runs costs the database one
 * round trip instead of BEGIN, writes and COMMIT.
 *
 * The runs are inserted only if every key was inserted by this statement (a
 * CTE's `fresh`, as in merge.ts's KEYS_SQL), so no stored run is ever
 * overwritten; otherwise only the keys were written (inserted, or locked
 * while the statement ran) and the caller merges the batch the usual way. A
 * key without a run reads as a run not stored yet (merge.ts inserts it).
 *
 * The rollup deltas are queued (rollup-queue.ts) by a CTE, only if the runs
 * were written: the batch's cells as the collector sums them (new-run-cells.ts,
 * RollupDeltas), or, for a row whose part only SQL can be sure of, grouped by
 * cell from the insert's RETURNING.
 * A thread's first and last turn are found again from the runs
 * (thread-table.ts), which a statement cannot see of its own inserts: inside
 * a transaction (`writeNewRuns`) the thread deltas follow in the next
 * statements; on its own the statement writes no run of a batch with a root
 * run in a thread, and such a batch takes the transaction.
 */
import type pg from "pg";
import { isObj, type Obj } from "../../internal/obj.js";
import { webhookUrlOf } from "../../run/webhook.js";
import { applyChange, completesRoot } from "../merge-rules.js";
import type { ThreadContribution } from "../thread-rollup.js";
import { ROW_COLUMNS, TYPES } from "./columns.js";
import type { PgPool } from "./pool.js";
import { prepared } from "./prepared.js";
import type { Cell } from "../rollup.js";
import { newRunCells } from "./new-run-cells.js";
import { CONTRIBUTION, ROLLUP_COLUMNS } from "./rollups.js";
import { hasBigValue, load, newRunColumns, runsById, type DeriveOptions, type MergeOutcome } from "./run-state.js";
import { THREAD_PART } from "./thread-table.js";
import { outboxUrl } from "./outbox.js";

/** A batch of posts as new runs: the rows to insert, in id order, and what the batch did if they are. */
export interface NewRunRows {
  ids: readonly string[];
  rows: readonly Obj[];
  outcome: MergeOutcome;
  /** Some root run's metadata names a thread (session_id, thread_id or conversation_id, as tracepipe_thread_key reads it). */
  threaded: boolean;
}

/** One batch's statement input: its rows and the webhook deliveries ([run id, URL]) of its completed roots. */
export interface NewRunsBatch {
  rows: NewRunRows;
  webhooks: readonly [string, string][];
}

/** Metadata keys tracepipe_thread_key reads a thread id from (migrations.ts, version 3). */
const THREAD_KEYS = ["session_id", "thread_id", "conversation_id"];

/** Whether a new row is a root whose metadata (`extra`, as the row stores it) may name a thread (any of the keys present counts). */
function mayBeThreaded(row: Obj, extra: unknown): boolean {
  if (row.parent_run_id !== null && row.parent_run_id !== undefined) return false;
  const meta = isObj(extra) && isObj(extra.metadata) ? extra.metadata : undefined;
  return !!meta && THREAD_KEYS.some((k) => meta[k] !== undefined && meta[k] !== null);
}

/**
 * The rows for `ids` as new runs (no connection needed); undefined when a value is too large for the one-statement form.
 * `extras`, when given, receives each row's `extra` as the row stores it (the object, so it is not parsed back from the text).
 */
export function newRunRows(
  ids: readonly string[],
  byId: ReadonlyMap<string, { posts: Obj[]; patches: Obj[] }>,
  now: string,
  opts: DeriveOptions,
  extras?: unknown[],
): NewRunRows | undefined {
  const outcome: MergeOutcome = { created: ids.length, updated: 0, completedRoots: [], projects: new Set() };
  const rows: Obj[] = [];
  let threaded = false;
  for (const id of ids) {
    const s = byId.get(id)!;
    const { state, texts } = load(undefined, id);
    for (const p of s.posts) applyChange(state, p, true, texts);
    const { row, extra } = newRunColumns(state, texts, now, opts);
    if (hasBigValue(row)) return undefined;
    rows.push(row);
    extras?.push(extra);
    threaded ||= mayBeThreaded(row, extra);
    if (completesRoot(state, s.posts, [], false)) outcome.completedRoots.push(id);
    if (typeof row.session_name === "string") outcome.projects.add(row.session_name);
  }
  return { ids, rows, outcome, threaded };
}

/**
 * A queued rollup row per cell of the written runs (CONTRIBUTION's columns),
 * as RollupDeltas.add sums them: a run counts in the root cell, the llm cell
 * or both; a histogram maps a bucket (as text) to its runs.
 */
function queueCte(from: string): string {
  const hist = (b: string) =>
    `coalesce((SELECT jsonb_object_agg(h.b, h.n) FROM (SELECT u.b::text AS b, count(*) AS n FROM unnest(array_agg(${b})) AS u(b)
      WHERE u.b IS NOT NULL GROUP BY u.b) h), '{}'::jsonb)`;
  return `INSERT INTO monitor_rollup_queue (${ROLLUP_COLUMNS})
    SELECT c.project, c.hour, s.scope, coalesce(c.model, ''), coalesce(c.provider, ''), coalesce(c.name, ''),
      count(*), sum(c.errors), count(c.ttft_b), coalesce(sum(c.input_tokens), 0), coalesce(sum(c.output_tokens), 0),
      coalesce(sum(c.cost), 0), sum(c.cost_runs), ${hist("c.lat_b")}, ${hist("c.ttft_b")}
    FROM ${from} c CROSS JOIN LATERAL (VALUES ('root', c.root), ('llm', c.llm)) AS s(scope, counted)
    WHERE s.counted AND c.hour IS NOT NULL AND c.project IS NOT NULL
    GROUP BY c.project, c.hour, s.scope, coalesce(c.model, ''), coalesce(c.provider, ''), coalesce(c.name, '')`;
}

/**
 * The cells' rows (one JSON parameter, `cellsJson`), queued only if the runs were
 * written. One parameter, not an array per column: each array a statement
 * unnests costs the database a tuple store of its own.
 */
function queueCellsCte(param: (type: string) => string): string {
  return `INSERT INTO monitor_rollup_queue (${ROLLUP_COLUMNS})
    SELECT ${ROLLUP_COLUMNS} FROM jsonb_to_recordset(${param("jsonb")}) AS v(project text, hour bigint, scope text, model text,
      provider text, name text, runs bigint, errors bigint, streamed bigint, input_tokens float8, output_tokens float8, cost float8,
      cost_runs bigint, latency_hist jsonb, ttft_hist jsonb)
    WHERE EXISTS (SELECT 1 FROM written)`;
}

/** Cells as queueCellsCte's parameter. */
function cellsJson(cells: readonly Cell[]): string {
  return JSON.stringify(
    cells.map((c) => ({
      project: c.project,
      hour: c.time_ms,
      scope: c.scope,
      model: c.model,
      provider: c.provider,
      name: c.name,
      runs: c.runs,
      errors: c.errors,
      streamed: c.streamed,
      input_tokens: c.input_tokens,
      output_tokens: c.output_tokens,
      cost: c.cost,
      cost_runs: c.cost_runs,
      latency_hist: c.latency,
      ttft_hist: c.ttft,
    })),
  );
}

/** Where a statement's rollup cells come from: the collector's (parameters), the database's (from RETURNING), or none (no run counts). */
type CellsFrom = "params" | "sql" | "none";

/**
 * The statement's text for its shape. `alone`: sent as its own transaction,
 * so it also refuses a batch with a root run in a thread, writes the
 * completed roots' webhook deliveries (`webhooks`) and answers only how many
 * runs it wrote; else it answers each written run's part in its thread.
 * Parameters in newRunsQuery's order: one array per row column, the ids,
 * then the projects and their creation time (`projects`), then the rollup
 * cells (cellsJson, when `cells` is "params"), then the webhook
 * deliveries' run ids and URLs (`webhooks`).
 */
function newRunsText(alone: boolean, projects: boolean, webhooks: boolean, cells: CellsFrom): string {
  let n = 0;
  const param = (type: string) => `$${++n}::${type}`;
  const cols = Object.fromEntries(ROW_COLUMNS.map((c) => [c, param(`${TYPES[c]}[]`)]));
  const ctes = [
    `keys AS (INSERT INTO run_keys AS k (id) SELECT x FROM unnest(${param("text[]")}) AS x ORDER BY x
      ON CONFLICT (id) DO UPDATE SET id = k.id RETURNING (k.xmax = 0) AS fresh)`,
  ];
  if (projects)
    ctes.push(
      `new_projects AS (INSERT INTO projects (name, created_at) SELECT unnest(${param("text[]")}), ${param("text")} ON CONFLICT DO NOTHING)`,
    );
  const threadFree = alone
    ? ` AND NOT EXISTS (SELECT 1 FROM unnest(${cols.parent_run_id}, ${cols.extra}) AS t(parent, extra)
        WHERE t.parent IS NULL AND tracepipe_thread_key(t.extra) IS NOT NULL)`
    : "";
  ctes.push(
    `written AS (INSERT INTO runs (${ROW_COLUMNS.join(", ")}) SELECT * FROM unnest(${ROW_COLUMNS.map((c) => cols[c]).join(", ")})
      WHERE NOT EXISTS (SELECT 1 FROM keys WHERE NOT fresh)${threadFree} RETURNING ${returning(alone, cells)})`,
  );
  if (cells === "sql") ctes.push(`queued AS (${queueCte("written")})`);
  if (cells === "params") ctes.push(`queued AS (${queueCellsCte(param)})`);
  if (webhooks)
    ctes.push(
      `outbox AS (INSERT INTO webhook_outbox (run_id, url, created_at, next_attempt_at)
        SELECT d.id, d.url, now(), now() FROM unnest(${param("text[]")}, ${param("text[]")}) AS d(id, url)
        WHERE EXISTS (SELECT 1 FROM written) ORDER BY d.id ON CONFLICT (run_id) DO NOTHING)`,
    );
  const answer = alone ? "SELECT count(*)::int AS written FROM written" : "SELECT project, thread_id, latency_ms FROM written";
  return `WITH ${ctes.join(",\n  ")}\n${answer}`;
}

/** What the insert answers: the contributions when SQL queues the cells, each run's thread part inside a transaction. */
function returning(alone: boolean, cells: CellsFrom): string {
  const parts = cells === "sql" ? [CONTRIBUTION] : alone ? ["1 AS one"] : ["session_name AS project"];
  if (!alone) parts.push(THREAD_PART);
  return parts.join(", ");
}

/** Each shape's text, built once (a request then only gathers its values). */
const texts = new Map<string, string>();

/** The statement for `r` (see newRunsText); `webhooks`: [run id, URL] of the completed roots to deliver. */
function newRunsQuery(r: NewRunRows, alone: boolean, webhooks: readonly [string, string][]): pg.QueryConfig {
  const values: unknown[] = ROW_COLUMNS.map((c) => r.rows.map((row) => row[c] ?? null));
  values.push(r.ids);
  const projects = [...r.outcome.projects].sort();
  if (projects.length) values.push(projects, r.rows[0]!.updated_at);
  const cells = newRunCells(r.rows);
  const from: CellsFrom = cells === undefined ? "sql" : cells.length ? "params" : "none";
  if (cells?.length) values.push(cellsJson(cells));
  if (webhooks.length)
    values.push(
      webhooks.map((w) => w[0]),
      webhooks.map((w) => w[1]),
    );
  const shape = `${alone}|${projects.length > 0}|${webhooks.length > 0}|${from}`;
  let text = texts.get(shape);
  if (text === undefined) texts.set(shape, (text = newRunsText(alone, projects.length > 0, webhooks.length > 0, from)));
  return prepared(text, values);
}

/**
 * Inside the caller's transaction: the rows as new runs, their keys,
 * projects and queued rollup deltas; each written run's part in its thread
 * (for the caller to apply), or undefined when some run exists (only the keys
 * were written then).
 */
export async function writeNewRuns(client: pg.ClientBase, r: NewRunRows): Promise<ThreadContribution[] | undefined> {
  const written = (await client.query<ThreadContribution>(newRunsQuery(r, false, []))).rows;
  return written.length === r.ids.length ? written : undefined;
}

/**
 * What `insertNewRuns` did: the batch's outcome when it wrote the runs; else, for a batch
 * with a root run in a thread, the rows it built, for the transaction to write as new runs.
 */
export type NewRunsResult = { outcome: MergeOutcome } | { outcome?: undefined; threaded?: NewRunRows };

/** Sends a batch (or a group of batches, new-runs-groups.ts) as the statement on its own; resolves to how many runs it wrote. */
export function sendNewRuns(pool: PgPool): (b: NewRunsBatch) => Promise<number> {
  return async (b) => (await pool.statement<{ written: number }>(newRunsQuery(b.rows, true, b.webhooks))).rows[0]?.written ?? 0;
}

/**
 * A batch of posts as new runs in one statement of its own transaction
 * (inside an open transaction, part of it), perhaps together with other
 * callers' batches (new-runs-groups.ts), the completed roots' webhook
 * deliveries with them when `webhookOutbox`.
 */
export async function insertNewRuns(
  /** Writes the batch's statement (new-runs-groups.ts); true when it wrote the runs, false when only their keys. */
  write: (b: NewRunsBatch) => Promise<boolean>,
  posts: readonly Obj[],
  opts: DeriveOptions & { webhookOutbox: boolean },
): Promise<NewRunsResult> {
  const { byId, ids } = runsById(posts, []);
  const extras: unknown[] = [];
  const r = ids.length ? newRunRows(ids, byId, new Date().toISOString(), opts, extras) : undefined;
  if (!r || r.threaded) return { threaded: r };
  const webhooks: [string, string][] = [];
  if (opts.webhookOutbox && r.outcome.completedRoots.length) {
    const completed = new Set(r.outcome.completedRoots);
    r.rows.forEach((row, i) => {
      const url = completed.has(row.id as string) ? webhookUrlOf({ extra: extras[i] }) : undefined;
      if (url) webhooks.push([row.id as string, outboxUrl(url)]);
    });
  }
  return (await write({ rows: r, webhooks })) ? { outcome: r.outcome } : {};
}
