/**
 * The trace list's filters as SQL conditions on a root run `r`, and its
 * order and cursor, written once so SQLite and PostgreSQL filter and page
 * alike; each store supplies only the SQL that differs between them (its
 * columns, substring test, text search and error lookup).
 */
import type { TraceFilter } from "./contract/traces.js";
import { decodeTraceCursor } from "./paging.js";
import { canonicalTime } from "./time.js";

export interface TraceFilterSql {
  /** A placeholder bound to `v`; `float8` marks a number where the store needs the type said. */
  bind(v: unknown, type?: "float8"): string;
  /** True when the text `needle` is in `haystack`, case-insensitively. */
  contains(haystack: string, needle: string): string;
  /** A run's model and provider columns. */
  model: string;
  provider: string;
  /** True when a run of `r`'s trace is in error. */
  errorsOnly: string;
  /** True when a run of `r`'s trace holds the bound text `q` in its inputs, outputs or error. */
  textSearch(q: string): string;
  /** The metadata and tag conditions on one run aliased `alias`. */
  metadata(alias: string, bind: (v: unknown) => string, metadata?: Record<string, string>, tags?: readonly string[]): string[];
  /** `r`'s trace's summed cost. */
  traceCost: string;
  /** True when run `c` is in `r`'s trace, where the store's trace index needs it said otherwise than `c.trace_id = r.id`. */
  inRootTrace?: string;
}

export function traceConditions(f: TraceFilter, sql: TraceFilterSql): string[] {
  const { bind } = sql;
  const inTrace = sql.inRootTrace ?? "c.trace_id = r.id";
  const where = ["r.parent_run_id IS NULL"];
  if (f.project) where.push(`r.session_name = ${bind(f.project)}`);
  if (f.name) where.push(sql.contains("r.name", bind(f.name)));
  if (f.run_type) where.push(`r.run_type = ${bind(f.run_type)}`);
  if (f.start_time_gte) where.push(`r.start_time >= ${bind(canonicalTime(f.start_time_gte) ?? f.start_time_gte)}`);
  if (f.start_time_lt) where.push(`r.start_time < ${bind(canonicalTime(f.start_time_lt) ?? f.start_time_lt)}`);
  // Trace-wide filters: the root's own row first (cheap), then its runs through the trace index.
  for (const [value, column] of [
    [f.model, sql.model],
    [f.provider, sql.provider],
  ] as const) {
    if (!value) continue;
    const v = bind(value);
    where.push(`(r.${column} = ${v} OR EXISTS (SELECT 1 FROM runs c WHERE ${inTrace} AND c.${column} = ${v}))`);
  }
  if (f.errors_only) where.push(sql.errorsOnly);
  if (f.q) {
    const forms = searchForms(f.q);
    where.push(forms.length === 1 ? sql.textSearch(bind(forms[0]!)) : `(${forms.map((n) => sql.textSearch(bind(n))).join(" OR ")})`);
  }
  for (const cond of sql.metadata("c", (v) => bind(v), f.metadata, f.tags))
    where.push(`EXISTS (SELECT 1 FROM runs c WHERE ${inTrace} AND ${cond})`);
  if (f.feedback_key)
    where.push(`r.id IN (SELECT c.trace_id FROM feedback fb JOIN runs c ON c.id = fb.run_id WHERE fb.key = ${bind(f.feedback_key)})`);
  if (f.min_cost !== undefined) where.push(`${sql.traceCost} >= ${bind(f.min_cost, "float8")}`);
  if (f.max_cost !== undefined) where.push(`${sql.traceCost} <= ${bind(f.max_cost, "float8")}`);
  return where;
}

/**
 * The texts `q` may stand as in stored JSON: itself, as JSON writes it inside
 * a string (quotes, backslashes and control characters escaped), and with
 * every non-ASCII character as a \uXXXX escape, as clients that write ASCII
 * JSON send it (a multipart part's text is kept as the client wrote it).
 */
export function searchForms(q: string): string[] {
  const escaped = JSON.stringify(q).slice(1, -1);
  const ascii = escaped.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  return [...new Set([q, escaped, ascii])];
}

export interface TraceOrder {
  sort: NonNullable<TraceFilter["sort"]>;
  /** The sort key's expression, selected beside each root so the page's cursor can carry it. */
  key: string;
  /** The ORDER BY list. */
  orderBy: string;
  /** The condition that starts the page after the cursor's trace, when a cursor was given. */
  after: string | null;
}

/**
 * The page's order: by start time, latency (`latency`, a root's column) or
 * cost, ties by trace id in the same direction. `nullsLast` says NULLS
 * LAST / FIRST where the database would not sort NULL start times as SQLite does.
 */
export function traceOrder(
  f: TraceFilter,
  sql: Pick<TraceFilterSql, "bind" | "traceCost"> & { latency: string; nullsLast: boolean },
): TraceOrder {
  const desc = (f.order ?? "desc") === "desc";
  const sort = f.sort ?? "start_time";
  // Latency and cost sort traces without one last, in either direction (coalesce to -1 / 1e18).
  const key =
    sort === "latency"
      ? `coalesce(${sql.latency}, ${desc ? -1 : 1e18})`
      : sort === "cost"
        ? `coalesce(${sql.traceCost}, ${desc ? -1 : 1e18})`
        : "r.start_time";
  const dir = desc ? "DESC" : "ASC";
  const nulls = sql.nullsLast ? (desc ? " NULLS LAST" : " NULLS FIRST") : "";
  let after: string | null = null;
  if (f.cursor) {
    const [v, id] = decodeTraceCursor(f.cursor, sort);
    const cmp = desc ? "<" : ">";
    if (v === null) {
      // A root without a start time (a patch came before its post): those sort last going down, first going up.
      after = `((${key} IS NULL AND r.id ${cmp} ${sql.bind(id)})${desc ? "" : ` OR ${key} IS NOT NULL`})`;
    } else {
      const cv = sql.bind(v, sort === "start_time" ? undefined : "float8");
      const nullsAfter = desc && sort === "start_time" ? ` OR ${key} IS NULL` : "";
      after = `(${key} ${cmp} ${cv} OR (${key} = ${cv} AND r.id ${cmp} ${sql.bind(id)})${nullsAfter})`;
    }
  }
  return { sort, key, orderBy: `${key} ${dir}${nulls}, r.id ${dir}`, after };
}
