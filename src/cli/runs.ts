/**
 * `tracepipe runs list|show|tail`: the terminal view of stored traces,
 * over the embedded store (`--db` or `--store`, default TRACEPIPE_STORE_URL, else TRACEPIPE_DB) or a collector
 * (`--endpoint`, default TRACEPIPE_ENDPOINT, through the viewer API with X-Api-Key).
 *
 *   tracepipe runs list --project default --errors
 *   tracepipe runs show <trace id>
 *   tracepipe runs tail --json
 */
import { existsSync } from "node:fs";
import { type Command, InvalidArgumentError } from "commander";
import { envValue, isStoreUrl, storeTargetFrom } from "../env.js";
import type { TraceFilter, TracePage, TraceRun, TraceSummary } from "../store/contract/traces.js";
import { EXIT_USAGE } from "./exit.js";
import { writeLine } from "./io.js";
import { positiveInt, timeArg } from "./options.js";
import { MAX_TRACE_PAGE } from "../store/paging.js";

interface SourceOptions {
  db?: string;
  store?: string;
  endpoint?: string;
  apiKey?: string;
}

interface Source {
  traces(filter: TraceFilter): Promise<TracePage>;
  /** Runs of a trace in tree order; empty when the trace is unknown. */
  trace(id: string): Promise<TraceRun[]>;
  close(): Promise<void>;
}

/** A problem the user can fix (no store, endpoint refused the key): exit 2 with the message. */
class RunsError extends Error {}

async function openSource(o: SourceOptions): Promise<Source> {
  const endpoint = o.endpoint ?? envValue("TRACEPIPE_ENDPOINT");
  if (endpoint && o.db === undefined && o.store === undefined)
    return httpSource(endpoint.replace(/\/+$/, ""), o.apiKey ?? envValue("TRACEPIPE_API_KEY"));
  if (o.db !== undefined && o.store !== undefined) throw new RunsError("give --db or --store, not both");
  const target = storeTargetFrom(o);
  if (!isStoreUrl(target) && target !== ":memory:" && !existsSync(target))
    throw new RunsError(`no trace store at ${target} (set --db, --store, TRACEPIPE_DB, TRACEPIPE_STORE_URL, or --endpoint)`);
  // Loaded here so `tracepipe runs --endpoint` never loads a database driver.
  const { openStore } = await import("../store/open.js");
  let store: Awaited<ReturnType<typeof openStore>>;
  try {
    store = await openStore(target);
  } catch (err) {
    throw new RunsError(`cannot open the store: ${(err as Error).message}`);
  }
  return { traces: (f) => store.listTraces(f), trace: (id) => store.traceRuns(id), close: () => store.close() };
}

function httpSource(base: string, apiKey: string | undefined): Source {
  const get = async (path: string, params: Record<string, unknown> = {}) => {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) {
      if (v === undefined || v === null || v === false) continue;
      // The viewer API's repeated filters: metadata=key=value, tag=name.
      if (k === "metadata") for (const [mk, mv] of Object.entries(v as Record<string, string>)) qs.append("metadata", `${mk}=${mv}`);
      else if (k === "tags") for (const t of v as string[]) qs.append("tag", t);
      else qs.set(k, String(v));
    }
    let res: Response;
    try {
      res = await fetch(`${base}${path}${qs.size ? `?${qs}` : ""}`, { headers: apiKey ? { "x-api-key": apiKey } : {} });
    } catch (err) {
      throw new RunsError(`cannot reach ${base}: ${(err as Error).message}`);
    }
    if (res.status === 401 || res.status === 403)
      throw new RunsError(`${base} refused the API key (${res.status}); pass --api-key or set TRACEPIPE_API_KEY`);
    const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    if (res.status === 404) return undefined;
    if (!res.ok) throw new RunsError(`${base}${path}: HTTP ${res.status} ${JSON.stringify(body.detail ?? body)}`);
    return body;
  };
  return {
    traces: async (f) => (await get("/api/viewer/traces", { ...f })) as unknown as TracePage,
    trace: async (id) => ((await get(`/api/viewer/traces/${encodeURIComponent(id)}`)) as { runs: TraceRun[] } | undefined)?.runs ?? [],
    close: async () => {},
  };
}

function ms(v: number | null): string {
  if (v === null) return "-";
  return v < 1000 ? `${Math.round(v)}ms` : `${(v / 1000).toFixed(2)}s`;
}

function tokens(n: number | null, estimated: boolean): string {
  return n === null ? "-" : `${n}${estimated ? "~" : ""}`;
}

function status(t: { error: string | null; end_time: string | null }): string {
  return t.error ? "error" : t.end_time ? "ok" : "running";
}

/** Control characters in names and errors would move the terminal's cursor: show them escaped. */
function clean(s: string | null, max = 60): string {
  // eslint-disable-next-line no-control-regex
  const t = (s ?? "").replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) =>
    c === "\n" ? " " : `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`,
  );
  return t.length > max ? t.slice(0, max - 1) + "…" : t;
}

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd(),
  );
}

function summaryRow(t: TraceSummary): string[] {
  return [
    t.start_time?.slice(0, 19).replace("T", " ") ?? "-",
    clean(t.name, 40),
    status(t),
    ms(t.latency_ms),
    tokens(t.total_tokens, t.estimated),
    String(t.run_count),
    clean(t.models.join(","), 30) || "-",
    t.trace_id,
  ];
}

const HEADER = ["START (UTC)", "NAME", "STATUS", "LATENCY", "TOKENS", "RUNS", "MODEL", "TRACE ID"];

/** One trace as an indented tree: name, type, duration, tokens, error. */
export function treeLines(runs: TraceRun[]): string[] {
  const ids = new Set(runs.map((r) => r.id));
  const depth = new Map<string, number>();
  const out: string[] = [];
  // dotted_order puts every parent before its children, so depths resolve in one pass.
  for (const r of runs) {
    const d = r.parent_run_id && ids.has(r.parent_run_id) ? (depth.get(r.parent_run_id) ?? 0) + 1 : 0;
    depth.set(r.id, d);
    const parts = [`${"  ".repeat(d)}${clean(r.name, 80)} (${r.run_type ?? "run"})`, ms(r.latency_ms)];
    if (r.total_tokens !== null) parts.push(`${tokens(r.total_tokens, r.estimated)} tok`);
    if (r.model) parts.push(clean(r.model, 40));
    if (r.error) parts.push(`ERROR ${clean(r.error, 100)}`);
    out.push(parts.join("  "));
  }
  return out;
}

/** `--metadata key=value`, collected; a value without `=` is a usage error naming the option. */
function keyValue(v: string, all: string[]): string[] {
  if (v.indexOf("=") <= 0) throw new InvalidArgumentError(`--metadata expects key=value, got ${JSON.stringify(v)}`);
  return [...all, v];
}

interface ListOptions extends SourceOptions {
  project?: string;
  name?: string;
  runType?: string;
  model?: string;
  errors?: boolean;
  search?: string;
  since?: string;
  metadata?: string[];
  tag?: string[];
  limit: number;
  json?: boolean;
  interval?: number;
}

function filterOf(o: ListOptions): TraceFilter {
  const metadata = o.metadata?.length
    ? Object.fromEntries(o.metadata.map((m) => [m.slice(0, m.indexOf("=")), m.slice(m.indexOf("=") + 1)]))
    : undefined;
  return {
    project: o.project,
    name: o.name,
    run_type: o.runType,
    model: o.model,
    errors_only: o.errors,
    q: o.search,
    start_time_gte: o.since,
    metadata,
    tags: o.tag?.length ? o.tag : undefined,
    limit: o.limit,
  };
}

/** Run an action with its source; user-fixable problems print one line and exit 2. */
function withSource<A extends unknown[]>(fn: (src: Source, ...args: A) => Promise<void>) {
  return async (...args: A) => {
    const cmd = args[args.length - 1] as Command;
    let src: Source | undefined;
    try {
      src = await openSource(cmd.optsWithGlobals() as SourceOptions);
      await fn(src, ...args);
    } catch (err) {
      if (!(err instanceof RunsError)) throw err;
      process.stderr.write(`tracepipe runs: ${err.message}\n`);
      process.exitCode = EXIT_USAGE;
    } finally {
      await src?.close();
    }
  };
}

function filterOptions(cmd: Command): Command {
  return cmd
    .option("--project <name>", "only this project")
    .option("--name <text>", "root run name contains this")
    .option("--run-type <type>", "root run type")
    .option("--model <model>", "a run of the trace used this model")
    .option("--errors", "only traces with an error")
    .option("--search <text>", "text in any run's inputs or outputs")
    .option("--since <time>", "traces started at or after this ISO time", timeArg("--since"))
    .option("--metadata <key=value>", "a run of the trace has this metadata (repeat for more)", keyValue, [])
    .option("--tag <tag>", "a run of the trace has this tag (repeat for more)", (v: string, all: string[]) => [...all, v], [])
    .option("--limit <n>", `how many traces, at most ${MAX_TRACE_PAGE}`, positiveInt("--limit", MAX_TRACE_PAGE), 20)
    .option("--json", "one JSON object per line instead of a table");
}

export function register(program: Command): void {
  const runs = program
    .command("runs")
    .summary("look at stored traces in the terminal")
    .description(
      "Recent traces, one trace as a tree, or new traces as they arrive, from the embedded store (--db or --store) or a collector (--endpoint).",
    )
    .option("--db <path>", "SQLite store (default TRACEPIPE_DB or .tracepipe/traces.db)")
    .option("--store <url>", "PostgreSQL store, a postgres:// URL (default TRACEPIPE_STORE_URL)")
    .option("--endpoint <url>", "a `tracepipe serve` collector instead of the file (default TRACEPIPE_ENDPOINT)")
    .option("--api-key <key>", "X-Api-Key for --endpoint (default TRACEPIPE_API_KEY)");

  filterOptions(runs.command("list").summary("recent traces as a table, newest first")).action(
    withSource(async (src, o: ListOptions) => {
      const { traces } = await src.traces(filterOf(o));
      if (o.json) {
        for (const t of traces) await writeLine(process.stdout, JSON.stringify(t));
        return;
      }
      if (traces.length === 0) return void process.stdout.write("no traces\n");
      for (const line of table([HEADER, ...traces.map(summaryRow)])) await writeLine(process.stdout, line);
    }),
  );

  runs
    .command("show")
    .summary("one trace as an indented tree with durations and tokens")
    .argument("<trace-id>")
    .option("--json", "the runs as one JSON object per line")
    .action(
      withSource(async (src, id: string, o: { json?: boolean }) => {
        const list = await src.trace(id);
        if (list.length === 0) throw new RunsError(`trace ${id} not found`);
        for (const line of o.json ? list.map((r) => JSON.stringify(r)) : treeLines(list)) await writeLine(process.stdout, line);
      }),
    );

  filterOptions(runs.command("tail").summary("follow new traces as they arrive (Ctrl-C stops)"))
    .option("--interval <ms>", "how often to look", positiveInt("--interval"), 1000)
    .action(
      withSource(async (src, o: ListOptions) => {
        // A trace is printed when first seen and again when its state changes (running -> ok/error).
        const seen = new Map<string, string>();
        const first = await src.traces({ ...filterOf(o), limit: 100 });
        for (const t of first.traces) seen.set(t.trace_id, status(t));
        // With --json, stdout holds nothing but traces: the line saying it follows goes to stderr.
        (o.json ? process.stderr : process.stdout).write(`following new traces (${first.traces.length} already stored are not shown)\n`);
        let stop = false;
        process.once("SIGINT", () => (stop = true));
        process.once("SIGTERM", () => (stop = true));
        while (!stop) {
          await new Promise((r) => setTimeout(r, o.interval));
          const { traces } = await src.traces({ ...filterOf(o), limit: 100 });
          for (const t of [...traces].reverse()) {
            const s = status(t);
            if (seen.get(t.trace_id) === s) continue;
            seen.set(t.trace_id, s);
            await writeLine(process.stdout, o.json ? JSON.stringify(t) : table([summaryRow(t)])[0]!);
          }
        }
      }),
    );
}
