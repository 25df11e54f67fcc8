/**
 * Numbered schema migrations. Each runs once, in order, inside a transaction;
 * `schema_migrations` records what ran. Add new steps at the end, never edit old ones.
 */
import type { SqliteHandle } from "./handle.js";
import { rebuildRollups } from "./rollups.js";
import { rebuildThreads } from "./thread-table.js";

/** Runs over which a file's upgrade says what it is doing while it builds what the migration adds from them. */
const LARGE_FILE_RUNS = 100_000;

export const MIGRATIONS: readonly { version: number; name: string; sql: string; after?: (db: SqliteHandle) => void }[] = [
  {
    version: 1,
    name: "runs, projects, attachments, otel spans",
    sql: `
      CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        trace_id TEXT,
        parent_run_id TEXT,
        dotted_order TEXT,
        name TEXT,
        run_type TEXT,
        session_name TEXT,
        start_time TEXT,
        end_time TEXT,
        has_post INTEGER NOT NULL DEFAULT 0,
        inputs TEXT,
        outputs TEXT,
        error TEXT,
        events TEXT,
        tags TEXT,
        extra TEXT,
        serialized TEXT,
        other TEXT,
        detected_format TEXT,
        normalized_inputs TEXT,
        normalized_outputs TEXT,
        normalize_error TEXT,
        first_token_time TEXT,
        received_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX runs_trace ON runs (trace_id, dotted_order);
      CREATE INDEX runs_project_start ON runs (session_name, start_time, id);
      CREATE INDEX runs_start ON runs (start_time, id);
      CREATE TABLE projects (name TEXT PRIMARY KEY, created_at TEXT NOT NULL);
      CREATE TABLE attachments (
        run_id TEXT NOT NULL,
        name TEXT NOT NULL,
        content_type TEXT,
        size INTEGER NOT NULL,
        sha256 TEXT NOT NULL,
        data BLOB NOT NULL,
        PRIMARY KEY (run_id, name)
      );
      CREATE TABLE otel_spans (
        trace_id TEXT NOT NULL,
        span_id TEXT NOT NULL,
        parent_span_id TEXT,
        name TEXT,
        kind INTEGER,
        start_time TEXT,
        end_time TEXT,
        resource TEXT,
        scope TEXT,
        attributes TEXT,
        events TEXT,
        links TEXT,
        status TEXT,
        received_at TEXT NOT NULL,
        PRIMARY KEY (trace_id, span_id)
      );
    `,
  },
  {
    version: 2,
    name: "deployments and revisions (control plane)",
    sql: `
      CREATE TABLE deployments (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        body TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE TABLE revisions (
        id TEXT PRIMARY KEY,
        deployment_id TEXT NOT NULL REFERENCES deployments (id),
        body TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE INDEX revisions_deployment ON revisions (deployment_id, created_at);
    `,
  },
  {
    version: 3,
    name: "trace viewer: summary columns and root-run indexes",
    // Virtual columns cost no storage; they give the viewer's list and filters plain
    // column names, and the partial indexes make "newest traces first" an index walk
    // whatever the store's size. Usage sits in the first output message (DESIGN "Run record"),
    // in the native copy when the run was stored as a vendor payload.
    sql: `
      ALTER TABLE runs ADD COLUMN v_model TEXT GENERATED ALWAYS AS (json_extract(extra, '$.metadata.trace_model_name')) VIRTUAL;
      ALTER TABLE runs ADD COLUMN v_provider TEXT GENERATED ALWAYS AS (json_extract(extra, '$.metadata.trace_provider')) VIRTUAL;
      ALTER TABLE runs ADD COLUMN v_usage TEXT GENERATED ALWAYS AS (
        CASE WHEN run_type = 'llm' THEN coalesce(
          json_extract(normalized_outputs, '$.messages[0].usage_metadata'),
          CASE WHEN json_valid(outputs) THEN json_extract(outputs, '$.messages[0].usage_metadata') END)
        END) VIRTUAL;
      ALTER TABLE runs ADD COLUMN v_latency_ms REAL GENERATED ALWAYS AS ((julianday(end_time) - julianday(start_time)) * 86400000.0) VIRTUAL;
      CREATE INDEX runs_roots_start ON runs (start_time, id) WHERE parent_run_id IS NULL;
      CREATE INDEX runs_roots_project_start ON runs (session_name, start_time, id) WHERE parent_run_id IS NULL;
      CREATE INDEX runs_errors ON runs (trace_id) WHERE error IS NOT NULL;
    `,
  },
  {
    version: 4,
    name: "trace list: filter and sort by cost",
    // A partial index of (trace, cost) over the runs that have a cost: a trace's total is then
    // summed from the index alone, no row or JSON read, which is what filtering and sorting every
    // root by its trace's cost needs. An index on the expression rather than on a virtual column:
    // SQLite reads the row to compute a virtual column even when it is indexed, but answers the
    // same expression straight from its index (store/sqlite/traces.ts writes it exactly so).
    sql: `
      CREATE INDEX runs_trace_cost ON runs (trace_id, json_extract(v_usage, '$.total_cost')) WHERE json_extract(v_usage, '$.total_cost') IS NOT NULL;
    `,
  },
  {
    version: 5,
    name: "large JSON columns in pieces",
    // See store/sqlite/pieces.ts: a JSON column over 1 MiB is written as pieces of at most 256 Ki
    // characters, so writing it never holds more than one piece's copies in SQLite's memory.
    // \`pieces\` on the run says which columns are there ({"inputs": bytes, ...}); old rows keep
    // their large columns inline and read as before.
    sql: `
      ALTER TABLE runs ADD COLUMN pieces TEXT;
      CREATE TABLE run_pieces (
        run_id TEXT NOT NULL,
        col TEXT NOT NULL,
        seq INTEGER NOT NULL,
        text TEXT NOT NULL,
        PRIMARY KEY (run_id, col, seq)
      );
    `,
  },
  {
    version: 6,
    name: "otel spans: remote parents, traces waiting for a root",
    // parent_remote: 1 when the exporter flagged the span's parent as remote (another process: the span
    // is the root of this process's part of the trace), 0 when local, NULL when not said.
    // otel_rootless: traces with spans stored but no root yet, and when their newest span came; the
    // collector converts one once it has been quiet that long (routes/otel.ts). Filled here with the
    // traces already stored without a root, which until now never made runs.
    sql: `
      ALTER TABLE otel_spans ADD COLUMN parent_remote INTEGER;
      CREATE TABLE otel_rootless (trace_id TEXT PRIMARY KEY, last_received_at TEXT NOT NULL);
      CREATE INDEX otel_rootless_quiet ON otel_rootless (last_received_at);
      INSERT INTO otel_rootless (trace_id, last_received_at)
        SELECT trace_id, max(received_at) FROM otel_spans GROUP BY trace_id
        HAVING sum(parent_span_id IS NULL OR parent_span_id = '') = 0;
    `,
  },
  {
    version: 7,
    name: "feedback, threads, monitoring indexes",
    // feedback: one row per feedback id (store/sqlite/feedback.ts). runs_threads: root runs by their
    // conversation id (session_id, thread_id or conversation_id in metadata, LangSmith's keys), so
    // the threads list groups an index, not the runs. runs_roots_monitor / runs_llm_monitor: every
    // value the monitoring charts read, as expressions in the index, so the aggregates over a time
    // range read the index alone, no row and no JSON (store/sqlite/monitor.ts writes them exactly so).
    // Each index also holds the column of its own WHERE: SQLite reads the row to test that term
    // otherwise, partial index or not.
    sql: `
      CREATE TABLE feedback (
        id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL,
        trace_id TEXT,
        key TEXT NOT NULL,
        score REAL,
        value TEXT,
        comment TEXT,
        source TEXT,
        source_metadata TEXT,
        extra TEXT,
        created_at TEXT,
        received_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX feedback_run ON feedback (run_id, key);
      CREATE INDEX feedback_key ON feedback (key, run_id);
      CREATE INDEX runs_threads ON runs (
        session_name,
        coalesce(json_extract(extra, '$.metadata.session_id'), json_extract(extra, '$.metadata.thread_id'), json_extract(extra, '$.metadata.conversation_id')),
        start_time, parent_run_id)
        WHERE parent_run_id IS NULL;
      CREATE INDEX runs_roots_monitor ON runs (
        session_name, start_time, (julianday(end_time) - julianday(start_time)) * 86400000.0, error IS NOT NULL, name, parent_run_id)
        WHERE parent_run_id IS NULL;
      CREATE INDEX runs_llm_monitor ON runs (
        session_name, start_time, (julianday(end_time) - julianday(start_time)) * 86400000.0, error IS NOT NULL, name,
        json_extract(extra, '$.metadata.trace_model_name'), json_extract(extra, '$.metadata.trace_provider'),
        (julianday(first_token_time) - julianday(start_time)) * 86400000.0,
        json_extract(v_usage, '$.input_tokens'), json_extract(v_usage, '$.output_tokens'), json_extract(v_usage, '$.total_cost'), run_type)
        WHERE run_type = 'llm';
    `,
  },
  {
    version: 8,
    name: "otel log records",
    // OTLP log records by trace and span id (empty when the record has none), joined to the span's run
    // when the trace is converted (src/otlp/trace.ts). record_key: a hash of what the record says, so a
    // resent request replaces its records; seq orders records stamped with the same time.
    sql: `
      CREATE TABLE otel_logs (
        trace_id TEXT NOT NULL,
        span_id TEXT NOT NULL,
        record_key TEXT NOT NULL,
        seq INTEGER NOT NULL,
        time TEXT NOT NULL,
        event_name TEXT NOT NULL,
        severity INTEGER NOT NULL,
        body TEXT NOT NULL,
        attributes TEXT NOT NULL,
        resource TEXT NOT NULL,
        scope TEXT NOT NULL,
        received_at TEXT NOT NULL,
        PRIMARY KEY (trace_id, span_id, record_key)
      );
    `,
  },
  {
    version: 9,
    name: "usage kept on the run when no message holds it",
    // An llm run whose instrumentation recorded usage but no content keeps it in
    // extra.metadata.usage_metadata (DESIGN "Run record"): the lists, totals and costs read it
    // there after the first output message. A generated column cannot be altered: it is made again,
    // with the indexes on it (migration 4's cost index, and migration 7's monitoring index as
    // migration 7 defines it: the two must stay alike).
    sql: `
      DROP INDEX runs_trace_cost;
      DROP INDEX IF EXISTS runs_llm_monitor;
      ALTER TABLE runs DROP COLUMN v_usage;
      ALTER TABLE runs ADD COLUMN v_usage TEXT GENERATED ALWAYS AS (
        CASE WHEN run_type = 'llm' THEN coalesce(
          json_extract(normalized_outputs, '$.messages[0].usage_metadata'),
          CASE WHEN json_valid(outputs) THEN json_extract(outputs, '$.messages[0].usage_metadata') END,
          CASE WHEN json_valid(extra) THEN json_extract(extra, '$.metadata.usage_metadata') END)
        END) VIRTUAL;
      CREATE INDEX runs_trace_cost ON runs (trace_id, json_extract(v_usage, '$.total_cost')) WHERE json_extract(v_usage, '$.total_cost') IS NOT NULL;
      CREATE INDEX runs_llm_monitor ON runs (
        session_name, start_time, (julianday(end_time) - julianday(start_time)) * 86400000.0, error IS NOT NULL, name,
        json_extract(extra, '$.metadata.trace_model_name'), json_extract(extra, '$.metadata.trace_provider'),
        (julianday(first_token_time) - julianday(start_time)) * 86400000.0,
        json_extract(v_usage, '$.input_tokens'), json_extract(v_usage, '$.output_tokens'), json_extract(v_usage, '$.total_cost'), run_type)
        WHERE run_type = 'llm';
    `,
  },
  {
    version: 10,
    name: "otel spans by start time (retention)",
    // Retention (sqlite/retention.ts) finds the staged spans of traces that started before its cut-off.
    sql: `
      CREATE INDEX IF NOT EXISTS otel_spans_start ON otel_spans (start_time);
    `,
  },
  {
    version: 11,
    name: "monitoring rollups, threads table",
    // monitor_rollups: per project, hour (epoch ms of its start), scope ("root" or "llm"), model,
    // provider and run name ("" for none), the monitoring page's counts and sums, and latency and
    // time-to-first-token histograms as JSON {bucket: count} (store/rollup.ts). Kept on ingest and
    // retention (sqlite/rollups.ts). threads: per project ("" for none) and thread id, the turns, their
    // summed latency and the first and last turn's start, kept on ingest and retention
    // (sqlite/thread-table.ts), so the threads list reads a page of threads_recent. Both filled here
    // from the runs already stored.
    sql: `
      CREATE TABLE threads (
        project TEXT NOT NULL,
        thread_id TEXT NOT NULL,
        turns INTEGER NOT NULL,
        latency_ms REAL NOT NULL,
        latency_turns INTEGER NOT NULL,
        first_time TEXT,
        last_time TEXT,
        PRIMARY KEY (project, thread_id)
      ) WITHOUT ROWID;
      CREATE INDEX threads_recent ON threads (project, last_time DESC, thread_id);
      CREATE INDEX threads_recent_all ON threads (last_time DESC, thread_id);
      CREATE TABLE monitor_rollups (
        project TEXT NOT NULL,
        hour INTEGER NOT NULL,
        scope TEXT NOT NULL,
        model TEXT NOT NULL,
        provider TEXT NOT NULL,
        name TEXT NOT NULL,
        runs INTEGER NOT NULL,
        errors INTEGER NOT NULL,
        streamed INTEGER NOT NULL,
        input_tokens REAL NOT NULL,
        output_tokens REAL NOT NULL,
        cost REAL NOT NULL,
        cost_runs INTEGER NOT NULL,
        latency_hist TEXT NOT NULL,
        ttft_hist TEXT NOT NULL,
        PRIMARY KEY (project, hour, scope, model, provider, name)
      ) WITHOUT ROWID;
    `,
    after: (db) => {
      const { n } = db.prepare("SELECT count(*) AS n FROM runs").get() as { n: number };
      if (n >= LARGE_FILE_RUNS)
        process.stderr.write(
          `tracepipe: building the monitoring rollups and threads of ${n} stored runs (once, on upgrade; this may take a minute)\n`,
        );
      rebuildRollups(db);
      rebuildThreads(db);
    },
  },
  {
    version: 12,
    name: "webhook outbox",
    // One delivery per completed root run that names a webhook (store/contract/webhooks.ts); attempts as a JSON array.
    sql: `
      CREATE TABLE webhook_outbox (
        run_id TEXT PRIMARY KEY,
        url TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending',
        attempts INTEGER NOT NULL DEFAULT 0,
        history TEXT NOT NULL DEFAULT '[]',
        created_at TEXT NOT NULL,
        next_attempt_at TEXT,
        claimed_until TEXT,
        claim TEXT,
        finished_at TEXT
      );
      CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at) WHERE status = 'pending';
    `,
  },
  {
    version: 13,
    name: "monitoring reads the rollups: the wide monitoring indexes give way to a narrow one",
    // The monitoring page reads whole hours from monitor_rollups and only the rest of a range from the runs
    // (sqlite/monitor.ts), through rows it reads anyway (model, usage, parent): migration 7's covering indexes
    // no longer serve a query, and each cost every write of a root or llm run its expressions and a page.
    // Root runs of a project by start time have runs_roots_project_start; llm runs get the same, without the
    // expressions.
    sql: `
      DROP INDEX IF EXISTS runs_roots_monitor;
      DROP INDEX IF EXISTS runs_llm_monitor;
      CREATE INDEX runs_llm_project_start ON runs (session_name, start_time) WHERE run_type = 'llm';
    `,
  },
  {
    version: 14,
    name: "start-time indexes without the run id",
    // Runs listed by start time (runs.ts, traces.ts, retention.ts) order ties by id. With the start time alone in the
    // index, SQLite sorts only within a group of equal start times and stops at the page's end; an entry is about half
    // as large, and runs that share a start time (a batch stamped at once) go to the end of their group in the order
    // they were written, rather than each to a page of its own.
    sql: `
      DROP INDEX runs_start;
      DROP INDEX runs_project_start;
      DROP INDEX runs_roots_start;
      DROP INDEX runs_roots_project_start;
      CREATE INDEX runs_start ON runs (start_time);
      CREATE INDEX runs_project_start ON runs (session_name, start_time);
      CREATE INDEX runs_roots_start ON runs (start_time) WHERE parent_run_id IS NULL;
      CREATE INDEX runs_roots_project_start ON runs (session_name, start_time) WHERE parent_run_id IS NULL;
    `,
  },
  {
    version: 15,
    name: "the trace index leaves out runs whose id is their trace id",
    // A run whose id is its trace id (a root as SDKs number it, and every run sent without a parent) is found by its
    // id's own index; its entry in runs_trace was a second index page written per run, at a random place of the file
    // where ids are random. Queries of a trace's runs read both indexes (trace-members.ts).
    sql: `
      DROP INDEX runs_trace;
      CREATE INDEX runs_trace ON runs (trace_id, dotted_order) WHERE trace_id <> id;
    `,
  },
  {
    version: 16,
    name: "the threads index holds only roots with a thread id",
    // Only thread reads use runs_threads (threads.ts, thread-table.ts), and each names a thread id; a root without one
    // (most runs) had an entry there all the same, one more index written per run. The condition is THREAD_ID IS NOT
    // NULL as thread-table.ts's ROOTS spells it, so the thread reads' "THREAD_ID IN (...)" still implies it.
    sql: `
      DROP INDEX runs_threads;
      CREATE INDEX runs_threads ON runs (
        session_name,
        coalesce(json_extract(extra, '$.metadata.session_id'), json_extract(extra, '$.metadata.thread_id'), json_extract(extra, '$.metadata.conversation_id')),
        start_time, parent_run_id)
        WHERE parent_run_id IS NULL AND coalesce(json_extract(extra, '$.metadata.session_id'), json_extract(extra, '$.metadata.thread_id'), json_extract(extra, '$.metadata.conversation_id')) IS NOT NULL;
    `,
  },
];

export function migrate(db: SqliteHandle): number {
  db.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)");
  const done = new Set((db.prepare("SELECT version FROM schema_migrations").all() as { version: number }[]).map((r) => r.version));
  let applied = 0;
  for (const m of MIGRATIONS) {
    if (done.has(m.version)) continue;
    db.transaction(() => {
      db.exec(m.sql);
      m.after?.(db);
      db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
        m.version,
        m.name,
        new Date().toISOString(),
      );
    })();
    applied++;
  }
  return applied;
}
