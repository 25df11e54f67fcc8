/**
 * The PostgreSQL schema, as numbered migrations applied at start-up. Each runs
 * once, in order, in a transaction; `schema_migrations` records what ran. Add
 * new steps at the end, never edit old ones.
 *
 * Several collectors may start at once against one database: the whole check
 * and apply runs under a session advisory lock, so one applies and the others
 * wait, then find nothing left to do. A database migrated by a newer tracepipe
 * (a version this code does not know) is refused rather than written with
 * rules it does not follow.
 *
 * Shape (see docs/deploy.md):
 * - `runs` is partitioned by the start time of the run's trace (from the root
 *   segment of its dotted_order), one partition per week, so retention drops
 *   whole partitions; runs whose trace start is unknown, or outside the
 *   partitions made so far, go to the default partition.
 * - A run id must be unique across partitions, which a partitioned table
 *   cannot enforce: `run_keys` holds one row per id, the row every merge of
 *   that run locks first (store/postgres/merge.ts).
 * - Payloads are JSON text, exactly as received (jsonb would reorder keys and
 *   refuse `\u0000`); large ones are TOASTed out of line, so an UPDATE that
 *   leaves them alone does not rewrite them. What the viewer queries inside a
 *   run is kept beside them: `usage` as jsonb, model, provider, cost and
 *   latency as columns with indexes.
 * - Text columns compare bytewise (COLLATE "C"), as SQLite does: dotted_order
 *   and canonical times sort correctly whatever the database's locale.
 */
import type pg from "pg";
import { TracepipeError } from "../../errors.js";
import { rebuildRollups } from "./rollups.js";
import { rebuildThreads } from "./thread-table.js";

/** Advisory lock key for migrations and partition upkeep (an arbitrary constant: "tracepipe" in ASCII, cut to 63 bits). */
export const SCHEMA_LOCK = 0x7472616365706970n.toString();

export const PG_MIGRATIONS: readonly { version: number; name: string; sql: string; after?: (client: pg.ClientBase) => Promise<void> }[] = [
  {
    version: 1,
    name: "runs partitioned by trace start, run keys, projects, attachments, otel spans, deployments",
    sql: `
      CREATE TABLE run_keys (id text COLLATE "C" PRIMARY KEY);
      CREATE TABLE runs (
        id text COLLATE "C" NOT NULL,
        trace_start timestamptz,
        trace_id text COLLATE "C",
        parent_run_id text COLLATE "C",
        dotted_order text COLLATE "C",
        name text COLLATE "C",
        run_type text COLLATE "C",
        session_name text COLLATE "C",
        start_time text COLLATE "C",
        end_time text COLLATE "C",
        error text COLLATE "C",
        has_post boolean NOT NULL DEFAULT false,
        inputs text COLLATE "C",
        outputs text COLLATE "C",
        events text COLLATE "C",
        tags text COLLATE "C",
        extra text COLLATE "C",
        serialized text COLLATE "C",
        other text COLLATE "C",
        exact text COLLATE "C",
        detected_format text COLLATE "C",
        normalized_inputs text COLLATE "C",
        normalized_outputs text COLLATE "C",
        normalize_error text COLLATE "C",
        first_token_time text COLLATE "C",
        model text COLLATE "C",
        provider text COLLATE "C",
        usage jsonb,
        total_cost double precision,
        latency_ms double precision,
        received_at text COLLATE "C" NOT NULL,
        updated_at text COLLATE "C" NOT NULL
      ) PARTITION BY RANGE (trace_start);
      CREATE TABLE runs_default PARTITION OF runs DEFAULT;
      CREATE INDEX runs_id ON runs (id);
      CREATE INDEX runs_trace_start ON runs (trace_start, id);
      CREATE INDEX runs_trace ON runs (trace_id, dotted_order);
      CREATE INDEX runs_project_start ON runs (session_name, start_time, id);
      CREATE INDEX runs_start ON runs (start_time, id);
      CREATE INDEX runs_roots_start ON runs (start_time NULLS FIRST, id) WHERE parent_run_id IS NULL;
      CREATE INDEX runs_roots_project_start ON runs (session_name, start_time NULLS FIRST, id) WHERE parent_run_id IS NULL;
      CREATE INDEX runs_errors ON runs (trace_id) WHERE error IS NOT NULL;
      CREATE INDEX runs_trace_cost ON runs (trace_id, total_cost) WHERE total_cost IS NOT NULL;
      CREATE INDEX runs_model ON runs (model, trace_id) WHERE model IS NOT NULL;
      CREATE INDEX runs_provider ON runs (provider, trace_id) WHERE provider IS NOT NULL;

      CREATE TABLE projects (name text COLLATE "C" PRIMARY KEY, created_at text COLLATE "C" NOT NULL);
      CREATE TABLE attachments (
        run_id text COLLATE "C" NOT NULL,
        name text COLLATE "C" NOT NULL,
        content_type text,
        size integer NOT NULL,
        sha256 text NOT NULL,
        data bytea NOT NULL,
        PRIMARY KEY (run_id, name)
      );
      -- Attachments are mostly compressed media: stored out of line as they are, not tried with pglz.
      ALTER TABLE attachments ALTER COLUMN data SET STORAGE EXTERNAL;

      CREATE TABLE otel_spans (
        trace_id text COLLATE "C" NOT NULL,
        span_id text COLLATE "C" NOT NULL,
        parent_span_id text COLLATE "C",
        parent_remote smallint,
        name text,
        kind integer,
        start_time text COLLATE "C",
        end_time text COLLATE "C",
        resource text,
        scope text,
        attributes text,
        events text,
        links text,
        status text,
        received_at text COLLATE "C" NOT NULL,
        PRIMARY KEY (trace_id, span_id)
      );
      CREATE INDEX otel_spans_start ON otel_spans (start_time);
      CREATE TABLE otel_rootless (trace_id text COLLATE "C" PRIMARY KEY, last_received_at text COLLATE "C" NOT NULL);
      CREATE INDEX otel_rootless_quiet ON otel_rootless (last_received_at);

      CREATE TABLE deployments (
        id text COLLATE "C" PRIMARY KEY,
        name text COLLATE "C" NOT NULL UNIQUE,
        body text NOT NULL,
        created_at text COLLATE "C" NOT NULL,
        updated_at text COLLATE "C" NOT NULL
      );
      CREATE TABLE revisions (
        id text COLLATE "C" PRIMARY KEY,
        deployment_id text COLLATE "C" NOT NULL REFERENCES deployments (id),
        body text NOT NULL,
        created_at text COLLATE "C" NOT NULL
      );
      CREATE INDEX revisions_deployment ON revisions (deployment_id, created_at, id);
    `,
  },
  {
    version: 2,
    name: "feedback, otel log records, usage kept in metadata",
    // feedback: one row per feedback id (store/postgres/feedback.ts). otel_logs: OTLP log records by
    // trace and span id (empty when the record has none); record_key is a hash of what the record
    // says, so a resent request replaces its records, and seq orders records stamped with the same
    // time. The UPDATE gives llm runs stored before this version the usage their metadata carries
    // when no output message does (merge.ts reads it there from now on).
    sql: `
      CREATE TABLE feedback (
        id text COLLATE "C" PRIMARY KEY,
        run_id text COLLATE "C" NOT NULL,
        trace_id text COLLATE "C",
        key text COLLATE "C" NOT NULL,
        score double precision,
        value text,
        comment text,
        source text,
        source_metadata text,
        extra text,
        created_at text COLLATE "C",
        received_at text COLLATE "C" NOT NULL,
        updated_at text COLLATE "C" NOT NULL
      );
      CREATE INDEX feedback_run ON feedback (run_id, key);
      CREATE INDEX feedback_key ON feedback (key, run_id);

      CREATE TABLE otel_logs (
        trace_id text COLLATE "C" NOT NULL,
        span_id text COLLATE "C" NOT NULL,
        record_key text COLLATE "C" NOT NULL,
        seq integer NOT NULL,
        time text COLLATE "C" NOT NULL,
        event_name text NOT NULL,
        severity integer NOT NULL,
        body text NOT NULL,
        attributes text NOT NULL,
        resource text NOT NULL,
        scope text NOT NULL,
        received_at text COLLATE "C" NOT NULL,
        PRIMARY KEY (trace_id, span_id, record_key)
      );

      UPDATE runs SET usage = (extra::json->'metadata'->'usage_metadata')::text::jsonb
        WHERE run_type = 'llm' AND usage IS NULL AND strpos(extra, 'usage_metadata') > 0
          AND json_typeof(extra::json->'metadata'->'usage_metadata') = 'object'
          AND strpos((extra::json->'metadata'->'usage_metadata')::text, '\\u') = 0;
      UPDATE runs SET total_cost = (usage->>'total_cost')::float8
        WHERE total_cost IS NULL AND jsonb_typeof(usage->'total_cost') = 'number';
    `,
  },
  {
    version: 3,
    name: "threads and monitoring indexes",
    // tracepipe_thread_key: a root run's conversation id (session_id, thread_id or conversation_id
    // in its metadata, LangSmith's keys, in that order), the expression the threads queries and
    // their indexes share (store/postgres/threads.ts); a JSON `\u0000` or lone-surrogate escape,
    // which jsonb refuses, is read as U+FFFD, so no stored run can make the query fail. Declared
    // immutable: it reads only its argument. runs_threads groups a project's threads,
    // runs_thread_turns finds one thread's turns without a project; runs_llm_project_start reads a
    // project's llm runs over a time range (store/postgres/monitor.ts; root runs have
    // runs_roots_project_start).
    sql: String.raw`
      CREATE FUNCTION tracepipe_thread_key(extra text) RETURNS text
        LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $f$
      DECLARE m jsonb;
      BEGIN
        IF strpos(extra, '"metadata"') = 0 THEN RETURN NULL; END IF;
        IF strpos(extra, '\u') > 0 THEN
          extra := regexp_replace(extra, '(?<!\\)((?:\\\\)*)\\u(0000|[dD][89abAB][0-9a-fA-F]{2})', '\1\\ufffd', 'g');
        END IF;
        m := extra::jsonb -> 'metadata';
        RETURN coalesce(m ->> 'session_id', m ->> 'thread_id', m ->> 'conversation_id');
      END
      $f$;
      CREATE INDEX runs_threads ON runs (session_name, tracepipe_thread_key(extra), start_time)
        WHERE parent_run_id IS NULL AND tracepipe_thread_key(extra) IS NOT NULL;
      CREATE INDEX runs_thread_turns ON runs (tracepipe_thread_key(extra), start_time)
        WHERE parent_run_id IS NULL AND tracepipe_thread_key(extra) IS NOT NULL;
      CREATE INDEX runs_llm_project_start ON runs (session_name, start_time) WHERE run_type = 'llm';
    `,
  },
  {
    version: 4,
    name: "monitoring rollups, threads table",
    // monitor_rollups: per project, hour (epoch ms of its start), scope ("root" or "llm"), model,
    // provider and run name ("" for none), the monitoring page's counts and sums, and latency and
    // time-to-first-token histograms as jsonb {bucket: count} (store/rollup.ts). Kept on ingest and
    // retention as increments (store/postgres/rollups.ts); tracepipe_hist_add adds two histograms
    // bucket by bucket, dropping the buckets that reach zero. threads: per project ("" for none) and
    // thread id, the turns, their summed latency and the first and last turn's start, kept on ingest
    // and retention (store/postgres/thread-table.ts), so the threads list reads a page of
    // threads_recent. Both filled here from the runs already stored.
    sql: String.raw`
      CREATE TABLE threads (
        project text COLLATE "C" NOT NULL,
        thread_id text COLLATE "C" NOT NULL,
        turns bigint NOT NULL,
        latency_ms double precision NOT NULL,
        latency_turns bigint NOT NULL,
        first_time text COLLATE "C",
        last_time text COLLATE "C",
        PRIMARY KEY (project, thread_id)
      );
      CREATE INDEX threads_recent ON threads (project, last_time DESC NULLS LAST, thread_id);
      CREATE INDEX threads_recent_all ON threads (last_time DESC NULLS LAST, thread_id);
      CREATE TABLE monitor_rollups (
        project text COLLATE "C" NOT NULL,
        hour bigint NOT NULL,
        scope text COLLATE "C" NOT NULL,
        model text COLLATE "C" NOT NULL,
        provider text COLLATE "C" NOT NULL,
        name text COLLATE "C" NOT NULL,
        runs bigint NOT NULL,
        errors bigint NOT NULL,
        streamed bigint NOT NULL,
        input_tokens double precision NOT NULL,
        output_tokens double precision NOT NULL,
        cost double precision NOT NULL,
        cost_runs bigint NOT NULL,
        latency_hist jsonb NOT NULL,
        ttft_hist jsonb NOT NULL,
        PRIMARY KEY (project, hour, scope, model, provider, name)
      );
      CREATE FUNCTION tracepipe_hist_add(a jsonb, b jsonb) RETURNS jsonb
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $f$
        SELECT coalesce(jsonb_object_agg(k, n), '{}'::jsonb) FROM (
          SELECT k, sum(v::numeric) AS n FROM (SELECT * FROM jsonb_each_text(a) UNION ALL SELECT * FROM jsonb_each_text(b)) e(k, v)
          GROUP BY k) s
        WHERE n <> 0
      $f$;
    `,
    after: async (client) => {
      await rebuildRollups(client);
      await rebuildThreads(client);
    },
  },
  {
    version: 5,
    name: "webhook outbox",
    // One delivery per completed root run that names a webhook (store/contract/webhooks.ts), claimed with
    // FOR UPDATE SKIP LOCKED for a lease (store/postgres/outbox.ts); attempts as a JSON array.
    sql: `
      CREATE TABLE webhook_outbox (
        run_id text COLLATE "C" PRIMARY KEY,
        url text NOT NULL,
        status text NOT NULL DEFAULT 'pending',
        attempts integer NOT NULL DEFAULT 0,
        history jsonb NOT NULL DEFAULT '[]',
        created_at timestamptz NOT NULL,
        next_attempt_at timestamptz,
        claimed_until timestamptz,
        claim text,
        finished_at timestamptz
      );
      CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at) WHERE status = 'pending';
    `,
  },
  {
    version: 6,
    name: "monitoring rollup queue",
    // Ingest queues its rollup deltas here, rows that take no lock a concurrent ingest waits for, and a
    // fold moves them into monitor_rollups (store/postgres/rollup-queue.ts); the monitoring queries read
    // both. Same columns as monitor_rollups, no key: a cell may be queued many times.
    sql: `
      CREATE TABLE monitor_rollup_queue (
        project text COLLATE "C" NOT NULL,
        hour bigint NOT NULL,
        scope text COLLATE "C" NOT NULL,
        model text COLLATE "C" NOT NULL,
        provider text COLLATE "C" NOT NULL,
        name text COLLATE "C" NOT NULL,
        runs bigint NOT NULL,
        errors bigint NOT NULL,
        streamed bigint NOT NULL,
        input_tokens double precision NOT NULL,
        output_tokens double precision NOT NULL,
        cost double precision NOT NULL,
        cost_runs bigint NOT NULL,
        latency_hist jsonb NOT NULL,
        ttft_hist jsonb NOT NULL
      );
      CREATE INDEX monitor_rollup_queue_project ON monitor_rollup_queue (project, hour);
    `,
  },
  {
    version: 7,
    name: "fewer indexes on runs: start times split between roots and the rest, a trace index without roots, no trace-start or per-project thread index",
    // Every index on runs is written with each run, so each must serve a read the others cannot. A root's start time
    // was in four indexes: runs_start and runs_project_start give way to runs_children_start and
    // runs_children_project_start, which hold the other runs only (the run API reads the two halves,
    // store/postgres/run-query.ts), in the NULLS FIRST order that API pages by. Retention walks the leftover
    // runs of old traces by id (retention.ts), not by trace start. A thread's turns are found by its id alone
    // (runs_thread_turns), with the project as a filter: a thread id is one project's, nearly always. runs_trace leaves
    // out the runs whose id is their trace id (roots as SDKs number them), which runs_id finds (trace-members.ts).
    sql: `
      DROP INDEX runs_trace_start;
      DROP INDEX runs_start;
      DROP INDEX runs_project_start;
      DROP INDEX runs_threads;
      DROP INDEX runs_trace;
      CREATE INDEX runs_trace ON runs (trace_id, dotted_order) WHERE trace_id <> id;
      CREATE INDEX runs_children_start ON runs (start_time NULLS FIRST, id) WHERE parent_run_id IS NOT NULL;
      CREATE INDEX runs_children_project_start ON runs (session_name, start_time NULLS FIRST, id) WHERE parent_run_id IS NOT NULL;
    `,
  },
];

/** The database was migrated by a newer tracepipe than this one. */
export class SchemaTooNewError extends TracepipeError {
  override name = "SchemaTooNewError";
}

/** Apply what is missing under the schema lock; resolves to the number of migrations applied. */
export async function migratePostgres(client: pg.ClientBase): Promise<number> {
  await client.query("SELECT pg_advisory_lock($1::bigint)", [SCHEMA_LOCK]);
  try {
    await client.query(
      "CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at text NOT NULL)",
    );
    const done = new Set((await client.query<{ version: number }>("SELECT version FROM schema_migrations")).rows.map((r) => r.version));
    const known = Math.max(...PG_MIGRATIONS.map((m) => m.version));
    const newest = Math.max(0, ...done);
    if (newest > known) {
      throw new SchemaTooNewError(
        `the PostgreSQL database is at schema version ${newest}, newer than this tracepipe knows (up to ${known}): it was set up by a newer tracepipe. Upgrade tracepipe, or point it at another database.`,
      );
    }
    let applied = 0;
    for (const m of PG_MIGRATIONS) {
      if (done.has(m.version)) continue;
      await client.query("BEGIN");
      try {
        await client.query(m.sql);
        await m.after?.(client);
        await client.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)", [
          m.version,
          m.name,
          new Date().toISOString(),
        ]);
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK");
        throw err;
      }
      applied++;
    }
    return applied;
  } finally {
    await client.query("SELECT pg_advisory_unlock($1::bigint)", [SCHEMA_LOCK]);
  }
}
