/**
 * The trace viewer's and `tracepipe runs`' queries in SQLite (TraceStore):
 * pages of trace summaries by cursor, the runs of one trace.
 *
 * Speed: the newest-first list walks the partial indexes on root runs
 * (migration 3) and stops after one page, so its cost does not grow with the
 * store. Per-trace totals are computed for the page's traces only, through
 * the (trace_id, dotted_order) index. Filters that look inside a trace
 * (model, provider, errors, text) are checked per candidate root while walking;
 * a filter that matches rarely walks further (text search is a scan by nature).
 */
import type { SqliteHandle } from "./handle.js";
import { canonicalTime } from "../time.js";
import { CursorError } from "../contract/cursor.js";
import type { TraceFilter, TracePage, TraceRun, TraceSummary } from "../contract/traces.js";
import { metadataConditions } from "./metadata.js";
import { TRACE_FEEDBACK_SQL } from "./feedback.js";
import type { FeedbackSummary } from "../contract/feedback.js";

function encode(v: unknown[]): string {
  return Buffer.from(JSON.stringify(v)).toString("base64url");
}

function decode(cursor: string, kind: string): [number | string | null, string] {
  try {
    const v = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (Array.isArray(v) && v.length === 3 && v[0] === kind && typeof v[2] === "string") return [v[1], v[2]];
  } catch {
    // fall through
  }
  throw new CursorError("invalid cursor");
}

interface RootRow {
  id: string;
  name: string | null;
  run_type: string | null;
  session_name: string | null;
  start_time: string | null;
  end_time: string | null;
  error: string | null;
  v_latency_ms: number | null;
}

interface AggRow {
  run_count: number;
  error_count: number;
  first_error: string | null;
  models: string | null;
  providers: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  total_tokens: number | null;
  total_cost: number | null;
  estimated: number;
  first_token_time: string | null;
}

const AGG_SQL = `
  SELECT count(*) AS run_count,
    count(error) AS error_count,
    (SELECT error FROM runs e WHERE e.trace_id = @id AND e.error IS NOT NULL ORDER BY e.dotted_order LIMIT 1) AS first_error,
    group_concat(DISTINCT v_model) AS models,
    group_concat(DISTINCT v_provider) AS providers,
    sum(json_extract(v_usage, '$.input_tokens')) AS input_tokens,
    sum(json_extract(v_usage, '$.output_tokens')) AS output_tokens,
    sum(json_extract(v_usage, '$.total_tokens')) AS total_tokens,
    sum(json_extract(v_usage, '$.total_cost')) AS total_cost,
    coalesce(max(json_extract(v_usage, '$.estimated')), 0) AS estimated,
    min(CASE WHEN run_type = 'llm' THEN first_token_time END) AS first_token_time
  FROM runs WHERE trace_id = @id`;

/** Milliseconds between two stored times, keeping the microseconds Date.parse drops (julianday's float would blur them). */
function msBetween(a: string | null, b: string | null): number | null {
  if (!a || !b) return null;
  const d = Date.parse(b) - Date.parse(a);
  if (!Number.isFinite(d)) return null;
  const micro = (t: string) => Number(/\.\d{3}(\d{3})Z$/.exec(t)?.[1] ?? 0);
  return d + (micro(b) - micro(a)) / 1000;
}

/** A run's cost, written as migration 4's index is, so SQLite reads it from the index. */
const RUN_COST = "json_extract(c.v_usage, '$.total_cost')";

export function listTraces(db: SqliteHandle, f: TraceFilter): TracePage {
  const where = ["r.parent_run_id IS NULL"];
  const args: Record<string, unknown> = {};
  if (f.project) {
    where.push("r.session_name = @project");
    args.project = f.project;
  }
  if (f.name) {
    where.push("instr(lower(r.name), lower(@name)) > 0");
    args.name = f.name;
  }
  if (f.run_type) {
    where.push("r.run_type = @run_type");
    args.run_type = f.run_type;
  }
  if (f.start_time_gte) {
    where.push("r.start_time >= @gte");
    args.gte = canonicalTime(f.start_time_gte) ?? f.start_time_gte;
  }
  if (f.start_time_lt) {
    where.push("r.start_time < @lt");
    args.lt = canonicalTime(f.start_time_lt) ?? f.start_time_lt;
  }
  // Trace-wide filters: the root's own row first (cheap), then its runs through the trace index.
  if (f.model) {
    where.push("(r.v_model = @model OR EXISTS (SELECT 1 FROM runs c WHERE c.trace_id = r.id AND c.v_model = @model))");
    args.model = f.model;
  }
  if (f.provider) {
    where.push("(r.v_provider = @provider OR EXISTS (SELECT 1 FROM runs c WHERE c.trace_id = r.id AND c.v_provider = @provider))");
    args.provider = f.provider;
  }
  // Runs in error are few: their traces come from a small partial index, looked up once.
  if (f.errors_only) where.push("r.id IN (SELECT trace_id FROM runs WHERE error IS NOT NULL)");
  if (f.q) {
    where.push(
      "EXISTS (SELECT 1 FROM runs c WHERE c.trace_id = r.id AND (instr(lower(c.inputs), lower(@q)) > 0 OR instr(lower(c.outputs), lower(@q)) > 0 OR instr(lower(c.error), lower(@q)) > 0" +
        // Inputs or outputs stored in pieces (pieces.ts): each piece with the start of the next, so a match across two is found.
        " OR (c.pieces IS NOT NULL AND EXISTS (SELECT 1 FROM run_pieces p WHERE p.run_id = c.id AND p.col IN ('inputs', 'outputs') AND instr(lower(p.text || coalesce((SELECT substr(n.text, 1, length(@q) - 1) FROM run_pieces n WHERE n.run_id = p.run_id AND n.col = p.col AND n.seq = p.seq + 1), '')), lower(@q)) > 0))))",
    );
    args.q = f.q;
  }
  let bound = 0;
  const bind = (v: unknown) => {
    const name = `m${bound++}`;
    args[name] = v;
    return `@${name}`;
  };
  for (const cond of metadataConditions("c", bind, f.metadata, f.tags))
    where.push(`EXISTS (SELECT 1 FROM runs c WHERE c.trace_id = r.id AND ${cond})`);
  if (f.feedback_key) {
    where.push("r.id IN (SELECT c.trace_id FROM feedback fb JOIN runs c ON c.id = fb.run_id WHERE fb.key = @feedback_key)");
    args.feedback_key = f.feedback_key;
  }
  // A trace's cost from the (trace_id, cost) index of migration 4, never from the runs' JSON.
  const traceCost = `(SELECT sum(${RUN_COST}) FROM runs c WHERE c.trace_id = r.id AND ${RUN_COST} IS NOT NULL)`;
  if (f.min_cost !== undefined) {
    where.push(`${traceCost} >= @min_cost`);
    args.min_cost = f.min_cost;
  }
  if (f.max_cost !== undefined) {
    where.push(`${traceCost} <= @max_cost`);
    args.max_cost = f.max_cost;
  }
  const desc = (f.order ?? "desc") === "desc";
  const cmp = desc ? "<" : ">";
  const dir = desc ? "DESC" : "ASC";
  const sort = f.sort ?? "start_time";
  // Latency sorts rows without an end time last either way (coalesce to -1 / +inf).
  // Cost sorts traces without a cost last either way too. Sorting by cost reads every root
  // (a trace's total is not known before its runs are summed), from indexes only.
  const key =
    sort === "latency"
      ? `coalesce(r.v_latency_ms, ${desc ? -1 : 1e18})`
      : sort === "cost"
        ? `coalesce(${traceCost}, ${desc ? -1 : 1e18})`
        : "r.start_time";
  if (f.cursor) {
    const [v, id] = decode(f.cursor, sort);
    where.push(`(${key} ${cmp} @cv OR (${key} = @cv AND r.id ${cmp} @cid))`);
    args.cv = v;
    args.cid = id;
  }
  const limit = Math.min(Math.max(f.limit ?? 50, 1), 500);
  const sql = `SELECT r.id, r.name, r.run_type, r.session_name, r.start_time, r.end_time, r.error, r.v_latency_ms, ${key} AS k
    FROM runs r WHERE ${where.join(" AND ")} ORDER BY ${key} ${dir}, r.id ${dir} LIMIT @limit`;
  const rows = db.prepare(sql).all({ ...args, limit: limit + 1 }) as (RootRow & { k: number | string })[];
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  const agg = db.prepare(AGG_SQL);
  const fb = db.prepare(TRACE_FEEDBACK_SQL);
  const traces = page.map((r): TraceSummary => {
    const a = agg.get({ id: r.id }) as AggRow;
    return {
      trace_id: r.id,
      name: r.name,
      run_type: r.run_type,
      project: r.session_name,
      start_time: r.start_time,
      end_time: r.end_time,
      latency_ms: msBetween(r.start_time, r.end_time),
      error: r.error ?? a.first_error,
      error_count: a.error_count,
      run_count: a.run_count,
      models: a.models ? a.models.split(",") : [],
      providers: a.providers ? a.providers.split(",") : [],
      input_tokens: a.input_tokens,
      output_tokens: a.output_tokens,
      total_tokens: a.total_tokens,
      total_cost: a.total_cost,
      estimated: a.estimated === 1,
      ttft_ms: msBetween(r.start_time, a.first_token_time),
      feedback: fb.all(r.id) as FeedbackSummary[],
    };
  });
  const last = page[page.length - 1];
  return { traces, cursor: more && last ? encode([sort, last.k, last.id]) : null };
}

interface TraceRunRow {
  id: string;
  parent_run_id: string | null;
  dotted_order: string | null;
  name: string | null;
  run_type: string | null;
  start_time: string | null;
  end_time: string | null;
  first_token_time: string | null;
  error: string | null;
  v_model: string | null;
  v_provider: string | null;
  v_latency_ms: number | null;
  input_tokens: number | null;
  output_tokens: number | null;
  total_tokens: number | null;
  total_cost: number | null;
  estimated: number | null;
}

/** Every run of one trace in tree order (dotted_order), without payloads. Empty when the trace is unknown. */
export function traceRuns(db: SqliteHandle, traceId: string): TraceRun[] {
  const rows = db
    .prepare(
      `SELECT id, parent_run_id, dotted_order, name, run_type, start_time, end_time, first_token_time, error, v_model, v_provider, v_latency_ms,
        json_extract(v_usage, '$.input_tokens') AS input_tokens, json_extract(v_usage, '$.output_tokens') AS output_tokens,
        json_extract(v_usage, '$.total_tokens') AS total_tokens, json_extract(v_usage, '$.total_cost') AS total_cost,
        json_extract(v_usage, '$.estimated') AS estimated
      FROM runs WHERE trace_id = ? ORDER BY dotted_order, id`,
    )
    .all(traceId) as TraceRunRow[];
  return rows.map((r) => ({
    id: r.id,
    parent_run_id: r.parent_run_id,
    dotted_order: r.dotted_order,
    name: r.name,
    run_type: r.run_type,
    start_time: r.start_time,
    end_time: r.end_time,
    latency_ms: msBetween(r.start_time, r.end_time),
    first_token_time: r.first_token_time,
    error: r.error,
    model: r.v_model,
    provider: r.v_provider,
    input_tokens: r.input_tokens,
    output_tokens: r.output_tokens,
    total_tokens: r.total_tokens,
    total_cost: r.total_cost,
    estimated: r.estimated === 1,
  }));
}
