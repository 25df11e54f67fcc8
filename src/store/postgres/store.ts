/**
 * PostgresStore: the store contract over PostgreSQL (node-postgres pool), for
 * collectors that outgrow one machine or share one database. The same ingest
 * check and merge rules as the SQLite store (store/ingest-check.ts,
 * store/merge-rules.ts), made safe across connections (merge.ts); the schema
 * and its migrations in migrations.ts.
 *
 *   const store = await PostgresStore.open("postgres://user:pass@host:5432/db");
 */
import type { Obj } from "../../internal/obj.js";
import type { AttachmentInput, AttachmentInfo, StoredAttachment } from "../contract/attachments.js";
import { encodeRunCursor, splitPage } from "../paging.js";
import type { DeploymentRecord, RevisionRecord } from "../contract/deployments.js";
import type { Project } from "../contract/projects.js";
import type { CheckedBatch, IngestBatch, IngestResult, RunPage, RunQuery, StoredRun } from "../contract/runs.js";
import type { SpanInput, StoredSpan } from "../contract/spans.js";
import type { Store, StoreHealth } from "../contract/store.js";
import type { TraceFilter, TracePage, TraceRun } from "../contract/traces.js";
import { storedRunOf } from "../run-views.js";
import { checkFeedback, checkIngestBatch } from "../validate.js";
import { JSONCOL, SCALAR } from "../merge-rules.js";
import { DERIVE_ON_READ_BYTES, storable } from "./columns.js";
import { mergeRuns, type MergeOptions } from "./merge.js";
import { insertNewRuns, sendNewRuns } from "./new-runs.js";
import { NewRunsGroups } from "./new-runs-groups.js";
import { migratePostgres } from "./migrations.js";
import { ensurePartitions } from "./partitions.js";
import { PgPool } from "./pool.js";
import type { PostgresStoreOptions } from "./pool-defaults.js";
import { redactStoreTarget } from "../../env.js";
import { pruneTraces } from "./retention.js";
import { FOLD_INTERVAL_MS, foldRollups } from "./rollup-queue.js";
import type { PruneOptions, PruneResult } from "../contract/retention.js";
import { SpanStaging } from "./spans.js";
import { LogStaging } from "./logs.js";
import type { LogInput, StoredLog } from "../contract/logs.js";
import type { FeedbackSummary, StoredFeedback } from "../contract/feedback.js";
import type { Issue } from "../../errors.js";
import { feedbackOf, traceFeedback, writeFeedback } from "./feedback.js";
import { EVERY_RUN, PROJECT_COUNT_SQL, runPageSql } from "./run-query.js";
import { listTraces, traceRuns } from "./traces.js";
import { listThreads, threadTurns } from "./threads.js";
import { monitorBreakdown, monitorSeries } from "./monitor.js";
import type { ThreadPage, ThreadQuery, ThreadTurn } from "../contract/threads.js";
import type { Breakdown, BreakdownRow, MonitorQuery, MonitorSeries } from "../contract/monitor.js";
import type { ClaimedWebhook, WebhookAttempt, WebhookDelivery, WebhookOutcome } from "../contract/webhooks.js";
import { claimWebhooks, enqueueWebhooks, pendingWebhooks, recordWebhookAttempt, webhookDeliveries } from "./outbox.js";

export type { PostgresStoreOptions };

const PARTITION_UPKEEP_MS = 6 * 3_600_000;

/** Every column a read of whole runs needs, with the sizes the derive-on-read rule looks at. */
const READ_COLUMNS = `id, other, exact, ${SCALAR.join(", ")}, ${JSONCOL.join(", ")}, detected_format, normalized_inputs, normalized_outputs, normalize_error, first_token_time`;

export class PostgresStore implements Store {
  readonly target: string;
  private readonly normalizeOnIngest: boolean;
  readonly writesWebhookOutbox: boolean;
  private readonly spans: SpanStaging;
  private readonly logs: LogStaging;
  /** Batches of new runs, grouped into fewer statements under load (new-runs-groups.ts). */
  private readonly newRuns: NewRunsGroups;
  private closed = false;
  /** Makes the coming weeks' partitions every few hours (partitions.ts). */
  private readonly upkeep: NodeJS.Timeout;
  /** Folds the queued rollup deltas every few seconds (rollup-queue.ts). */
  private readonly folding: NodeJS.Timeout;

  private constructor(
    readonly pool: PgPool,
    target: string,
    opts: PostgresStoreOptions,
  ) {
    this.target = target;
    this.normalizeOnIngest = opts.normalizeOnIngest ?? true;
    this.writesWebhookOutbox = opts.webhookOutbox ?? false;
    this.spans = new SpanStaging(pool);
    this.logs = new LogStaging(pool);
    this.newRuns = new NewRunsGroups(pool, sendNewRuns(pool));
    this.upkeep = setInterval(() => {
      pool
        .withClient((c) => ensurePartitions(c, new Date()))
        .catch((err: unknown) => {
          // The database away: the next upkeep (or start-up) makes them; meanwhile new runs go to the default partition.
          process.emitWarning(
            `tracepipe store: making the coming weeks' partitions failed: ${(err as Error)?.message ?? String(err)}`,
            "TracepipeWarning",
          );
        });
    }, PARTITION_UPKEEP_MS);
    this.upkeep.unref();
    let fold: Promise<unknown> | undefined;
    this.folding = setInterval(() => {
      // One fold at a time; one that fails (the database away) leaves the queue to the next, nothing lost.
      fold ??= foldRollups(pool)
        .catch(() => undefined)
        .finally(() => (fold = undefined));
    }, FOLD_INTERVAL_MS);
    this.folding.unref();
  }

  /** Connect, apply the migrations this database lacks (under the schema lock) and make the coming weeks' partitions. */
  static async open(url: string, opts: PostgresStoreOptions = {}): Promise<PostgresStore> {
    const target = redactStoreTarget(url);
    const pool = new PgPool(url, opts, target);
    try {
      await pool.withClient(async (c) => {
        await migratePostgres(c);
        await ensurePartitions(c, new Date());
      });
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw err;
    }
    return new PostgresStore(pool, target, opts);
  }

  async ingest(batch: IngestBatch | CheckedBatch): Promise<IngestResult> {
    const { post, patch } = checkIngestBatch(batch);
    const attachments = batch.attachments ?? [];
    const opts: MergeOptions = { normalizeOnIngest: this.normalizeOnIngest };
    if (patch.length === 0 && attachments.length === 0) {
      // Posts of new runs, the common case: one statement, its own transaction (new-runs.ts).
      const n = await insertNewRuns((b) => this.newRuns.write(b), post as readonly Obj[], {
        ...opts,
        webhookOutbox: this.writesWebhookOutbox,
      });
      if (n.outcome) return { created: n.outcome.created, updated: 0, attachments: 0, completedRoots: n.outcome.completedRoots };
      // Some run stored already, or a value too large for the one statement: straight to the keys; in a thread: the new runs' statement in the transaction.
      opts.tryNewRuns = n.threaded !== undefined;
      opts.newRuns = n.threaded;
    }
    return this.pool.transaction(async (client): Promise<IngestResult> => {
      // The merge also inserts the projects its runs are in.
      const m = await mergeRuns(client, post as readonly Obj[], patch as readonly Obj[], opts);
      for (const a of attachments) await putAttachment(client, a);
      if (this.writesWebhookOutbox && m.completedRoots.length) await enqueueWebhooks(client, m.completedRoots);
      return { created: m.created, updated: m.updated, attachments: attachments.length, completedRoots: m.completedRoots };
    });
  }

  private toStored(row: Obj): StoredRun {
    return storedRunOf(row, {
      json: (c) => row[c] as string | null,
      // A side too large to keep a stored native copy (see merge.ts).
      large: (side) => typeof row[side] === "string" && Buffer.byteLength(row[side] as string, "utf8") > DERIVE_ON_READ_BYTES,
    });
  }

  claimWebhooks(limit: number, leaseMs: number): Promise<ClaimedWebhook[]> {
    return claimWebhooks(this.pool, limit, leaseMs);
  }

  recordWebhookAttempt(claimed: ClaimedWebhook, attempt: WebhookAttempt, outcome: WebhookOutcome): Promise<boolean> {
    return recordWebhookAttempt(this.pool, claimed, attempt, outcome);
  }

  webhookDeliveries(runId: string): Promise<WebhookDelivery[]> {
    return webhookDeliveries(this.pool, runId);
  }

  pendingWebhooks(): Promise<{ count: number; next_due_at: string | null }> {
    return pendingWebhooks(this.pool);
  }

  async getRun(id: string): Promise<StoredRun | undefined> {
    const r = await this.pool.query(`SELECT ${READ_COLUMNS} FROM runs WHERE id = $1`, [id]);
    return r.rows[0] ? this.toStored(r.rows[0]) : undefined;
  }

  async queryRuns(q: RunQuery): Promise<RunPage> {
    const { sql, args, limit } = runPageSql(q, READ_COLUMNS);
    const rows = (await this.pool.query(sql, args)).rows;
    const { page, more, last } = splitPage(rows, limit);
    return {
      runs: page.map((r) => this.toStored(r)),
      cursor: more && last ? encodeRunCursor((last.start_time as string | null) ?? null, last.id as string) : null,
    };
  }

  async countRuns(project?: string): Promise<number> {
    const r =
      project === undefined
        ? await this.pool.query("SELECT count(*)::int AS n FROM runs")
        : await this.pool.query(PROJECT_COUNT_SQL, [project]);
    return r.rows[0]!.n as number;
  }

  listTraces(filter: TraceFilter = {}): Promise<TracePage> {
    return listTraces(this.pool, filter);
  }

  traceRuns(traceId: string): Promise<TraceRun[]> {
    return traceRuns(this.pool, traceId);
  }

  storeLogs(logs: readonly LogInput[]): Promise<string[]> {
    return this.logs.storeLogs(logs);
  }

  logsOfTrace(traceId: string): Promise<StoredLog[]> {
    return this.logs.logsOfTrace(traceId);
  }

  async storeFeedback(records: readonly unknown[], locate?: (index: number) => Issue["loc"]): Promise<number> {
    return writeFeedback(this.pool, checkFeedback(records, locate));
  }

  feedbackOf(runIds: readonly string[]): Promise<StoredFeedback[]> {
    return feedbackOf(this.pool, runIds);
  }

  traceFeedback(traceId: string): Promise<FeedbackSummary[]> {
    return traceFeedback(this.pool, traceId);
  }

  storeSpans(spans: readonly SpanInput[]): Promise<string[]> {
    return this.spans.storeSpans(spans);
  }

  spansOfTrace(traceId: string): Promise<StoredSpan[]> {
    return this.spans.spansOfTrace(traceId);
  }

  hasRootSpan(traceId: string): Promise<boolean> {
    return this.spans.hasRootSpan(traceId);
  }

  quietRootlessTraces(quietSince: string, limit: number): Promise<string[]> {
    return this.spans.quietRootlessTraces(quietSince, limit);
  }

  forgetRootless(traceId: string, quietSince: string): Promise<void> {
    return this.spans.forgetRootless(traceId, quietSince);
  }

  convertingTrace<T>(traceId: string, convert: () => Promise<T>): Promise<T> {
    return this.spans.convertingTrace(traceId, convert);
  }

  sweepRootless(traceId: string, quietSince: string, convert: () => Promise<void>): Promise<{ claimed: boolean; error?: unknown }> {
    return this.spans.sweepRootless(traceId, quietSince, convert);
  }

  async ensureProject(name: string): Promise<void> {
    await this.pool.query("INSERT INTO projects (name, created_at) VALUES ($1, $2) ON CONFLICT DO NOTHING", [
      name,
      new Date().toISOString(),
    ]);
  }

  async projectExists(name: string): Promise<boolean> {
    return (await this.pool.query("SELECT 1 FROM projects WHERE name = $1", [name])).rowCount! > 0;
  }

  async listProjects(): Promise<Project[]> {
    return (await this.pool.query<Project>("SELECT name, created_at FROM projects ORDER BY created_at DESC, name")).rows;
  }

  async deleteProject(name: string): Promise<number> {
    return this.pool.transaction(async (c) => {
      const ids = (await c.query<{ id: string }>(`SELECT id FROM runs WHERE session_name = $1 AND ${EVERY_RUN}`, [name])).rows.map(
        (r) => r.id,
      );
      await c.query("DELETE FROM attachments WHERE run_id = ANY($1::text[])", [ids]);
      await c.query("DELETE FROM feedback WHERE run_id = ANY($1::text[])", [ids]);
      await c.query("DELETE FROM webhook_outbox WHERE run_id = ANY($1::text[])", [ids]);
      const n = (await c.query(`DELETE FROM runs WHERE session_name = $1 AND ${EVERY_RUN}`, [name])).rowCount ?? 0;
      await c.query("DELETE FROM run_keys WHERE id = ANY($1::text[])", [ids]);
      await c.query("DELETE FROM projects WHERE name = $1", [name]);
      return n;
    });
  }

  async listAttachments(runId: string): Promise<AttachmentInfo[]> {
    return (
      await this.pool.query<AttachmentInfo>("SELECT name, content_type, size, sha256 FROM attachments WHERE run_id = $1 ORDER BY name", [
        runId,
      ])
    ).rows;
  }

  async getAttachment(runId: string, name: string): Promise<StoredAttachment | undefined> {
    return (
      await this.pool.query<StoredAttachment>(
        "SELECT name, content_type, size, sha256, data FROM attachments WHERE run_id = $1 AND name = $2",
        [runId, name],
      )
    ).rows[0];
  }

  async createDeployment(d: DeploymentRecord, rev: RevisionRecord): Promise<boolean> {
    return this.pool.transaction(async (c) => {
      const r = await c.query(
        "INSERT INTO deployments (id, name, body, created_at, updated_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (name) DO NOTHING",
        [d.id, d.name, JSON.stringify(d.body), d.created_at, d.updated_at],
      );
      if (r.rowCount === 0) return false;
      await insertRevision(c, rev);
      return true;
    });
  }

  async getDeployment(id: string): Promise<DeploymentRecord | undefined> {
    const row = (
      await this.pool.query<DeploymentRecord & { body: string }>(
        "SELECT id, name, body, created_at, updated_at FROM deployments WHERE id = $1",
        [id],
      )
    ).rows[0];
    return row ? { ...row, body: JSON.parse(row.body) as Obj } : undefined;
  }

  async updateDeployment(id: string, body: Obj, updatedAt: string, revision?: RevisionRecord, ifUpdatedAt?: string): Promise<boolean> {
    return this.pool.transaction(async (c) => {
      const r = await c.query(
        "UPDATE deployments SET body = $1, updated_at = $2 WHERE id = $3 AND ($4::text IS NULL OR updated_at = $4::text)",
        [JSON.stringify(body), updatedAt, id, ifUpdatedAt ?? null],
      );
      if (r.rowCount === 0) return false;
      if (revision) await insertRevision(c, revision);
      return true;
    });
  }

  async listRevisions(deploymentId: string): Promise<RevisionRecord[]> {
    const rows = (
      await this.pool.query("SELECT id, deployment_id, body, created_at FROM revisions WHERE deployment_id = $1 ORDER BY created_at, id", [
        deploymentId,
      ])
    ).rows;
    return rows.map((r) => ({ ...r, body: JSON.parse(r.body) }) as RevisionRecord);
  }

  listThreads(q: ThreadQuery): Promise<ThreadPage> {
    return listThreads(this.pool, q, (id) => this.getRun(id));
  }

  threadTurns(threadId: string, project?: string): Promise<ThreadTurn[]> {
    return threadTurns(this.pool, threadId, project, (id) => this.getRun(id));
  }

  monitorSeries(q: MonitorQuery): Promise<MonitorSeries> {
    return monitorSeries(this.pool, q);
  }

  monitorBreakdown(q: MonitorQuery, by: Breakdown): Promise<BreakdownRow[]> {
    return monitorBreakdown(this.pool, q, by);
  }

  pruneTraces(cutoff: Date, opts?: PruneOptions): Promise<PruneResult> {
    return pruneTraces(this.pool, cutoff, opts);
  }

  /** Whether the database answers now (for /info). */
  health(): Promise<StoreHealth> {
    return this.pool.health();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.upkeep);
    clearInterval(this.folding);
    // Batches already queued are sent before the pool ends, so their callers get their writes, not an ended pool.
    await this.newRuns.drain();
    await this.pool.end();
  }
}

async function putAttachment(client: { query: PgPool["query"] }, a: AttachmentInput): Promise<void> {
  await client.query(
    "INSERT INTO attachments (run_id, name, content_type, size, sha256, data) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (run_id, name) DO UPDATE SET content_type = excluded.content_type, size = excluded.size, sha256 = excluded.sha256, data = excluded.data",
    // A part name may carry U+0000 (RFC 2231 escapes), which PostgreSQL text cannot hold; reads look names up the same way (pool.ts).
    [a.runId, storable(a.name), a.contentType == null ? null : storable(a.contentType), a.data.length, a.sha256, a.data],
  );
}

async function insertRevision(client: { query: PgPool["query"] }, rev: RevisionRecord): Promise<void> {
  await client.query("INSERT INTO revisions (id, deployment_id, body, created_at) VALUES ($1, $2, $3, $4)", [
    rev.id,
    rev.deployment_id,
    JSON.stringify(rev.body),
    rev.created_at,
  ]);
}
