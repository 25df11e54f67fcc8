/**
 * SqliteStore: the Store over one SQLite file (better-sqlite3, WAL mode), the
 * default. Its parts (one file per concern) share one connection; each answers
 * at once, so the contract's promises are already settled when returned.
 * Loading this module loads better-sqlite3: store/open.ts imports it only when
 * a SQLite store is opened.
 */
import type Database from "better-sqlite3";
import type { Obj } from "../../internal/obj.js";
import type { AttachmentInfo, StoredAttachment } from "../contract/attachments.js";
import type { DeploymentRecord, RevisionRecord } from "../contract/deployments.js";
import type { Project } from "../contract/projects.js";
import type { CheckedBatch, IngestBatch, IngestResult, RunPage, RunQuery, StoredRun } from "../contract/runs.js";
import type { LogInput, StoredLog } from "../contract/logs.js";
import type { SpanInput, StoredSpan } from "../contract/spans.js";
import type { Store, StoreHealth, StoreOptions } from "../contract/store.js";
import type { PruneOptions, PruneResult } from "../contract/retention.js";
import { pruneSqlite } from "./retention.js";
import type { TraceFilter, TracePage, TraceRun } from "../contract/traces.js";
import { SqliteAttachments } from "./attachments.js";
import { asUnavailable, closeDatabase, openDatabase } from "./connection.js";
import { SqliteDeployments } from "./deployments.js";
import { SqliteIngest } from "./ingest.js";
import { GroupCommit } from "./group-commit.js";
import { IngestTail } from "./ingest-tail.js";
import { PieceStore } from "./pieces.js";
import { SqliteProjects } from "./projects.js";
import { SqliteRuns } from "./runs.js";
import { SqliteLogs } from "./logs.js";
import { SqliteSpans } from "./spans.js";
import { KeyedLock } from "../../internal/keyed-lock.js";
import { listTraces, traceRuns } from "./traces.js";
import type { Issue } from "../../errors.js";
import type { FeedbackSummary, StoredFeedback } from "../contract/feedback.js";
import type { Breakdown, BreakdownRow, MonitorQuery, MonitorSeries } from "../contract/monitor.js";
import type { ThreadPage, ThreadQuery, ThreadTurn } from "../contract/threads.js";
import { checkFeedback } from "../validate.js";
import { feedbackOf, traceFeedback, writeFeedback } from "./feedback.js";
import { monitorBreakdown, monitorSeries } from "./monitor.js";
import { listThreads, threadTurns } from "./threads.js";
import { SqliteOutbox } from "./outbox.js";
import type { ClaimedWebhook, WebhookAttempt, WebhookDelivery, WebhookOutcome } from "../contract/webhooks.js";

export class SqliteStore implements Store {
  /** The file (or `:memory:`). */
  readonly path: string;
  readonly target: string;
  private readonly db: Database.Database;
  private readonly writer: SqliteIngest;
  private readonly runs: SqliteRuns;
  private readonly spans: SqliteSpans;
  private readonly logs: SqliteLogs;
  private readonly projects: SqliteProjects;
  private readonly attachments: SqliteAttachments;
  private readonly deployments: SqliteDeployments;
  /** Conversions of one trace, one at a time (convertingTrace). */
  private readonly traceLock = new KeyedLock();
  private readonly outbox: SqliteOutbox;
  readonly writesWebhookOutbox: boolean;
  /** Why the last write could not be done (disk full, locked, read-only), until a write succeeds again: health() reports it. */
  private writeTrouble: string | undefined;
  private readonly group: GroupCommit<IngestBatch | CheckedBatch, IngestResult, IngestTail>;

  /** Open (creating the file, its directory and the schema as needed) the store at `path`; `:memory:` for tests. */
  constructor(path: string, opts: StoreOptions = {}) {
    this.path = this.target = path;
    this.db = openDatabase(path);
    const pieces = new PieceStore(this.db);
    this.projects = new SqliteProjects(this.db);
    this.attachments = new SqliteAttachments(this.db);
    this.outbox = new SqliteOutbox(this.db);
    this.writesWebhookOutbox = opts.webhookOutbox ?? false;
    this.writer = new SqliteIngest(
      this.db,
      pieces,
      this.attachments,
      this.projects,
      opts.normalizeOnIngest ?? true,
      this.writesWebhookOutbox ? this.outbox : undefined,
    );
    this.runs = new SqliteRuns(this.db, pieces);
    this.spans = new SqliteSpans(this.db);
    this.logs = new SqliteLogs(this.db, this.spans);
    this.deployments = new SqliteDeployments(this.db);
    this.group = new GroupCommit(
      this.db,
      (batch) => this.writer.prepare(batch),
      (err) => this.unavailable(err),
      () => (this.writeTrouble = undefined),
      { open: () => new IngestTail(), write: (tail) => this.writer.writeTail(tail) },
    );
  }

  /** Written with the other ingests of this turn of the event loop, in one transaction (group-commit.ts). */
  ingest(batch: IngestBatch | CheckedBatch): Promise<IngestResult> {
    return this.group.add(batch);
  }

  /** ingest() without the promise, for a caller that must finish within one turn of the event loop. */
  ingestNow(batch: IngestBatch | CheckedBatch): IngestResult {
    return this.write(() => this.writer.ingest(batch));
  }

  /** An error that says the database cannot be written now as StoreUnavailableError, remembered for health(). */
  private unavailable(err: unknown): unknown {
    const mapped = asUnavailable(err, this.target);
    if (mapped !== err) this.writeTrouble = (mapped as Error).message;
    return mapped;
  }

  /** A write: an error saying the database cannot be written now becomes StoreUnavailableError (connection.ts), and health() says so until a write succeeds. */
  private write<T>(f: () => T): T {
    try {
      const out = f();
      this.writeTrouble = undefined;
      return out;
    } catch (err) {
      throw this.unavailable(err);
    }
  }

  async claimWebhooks(limit: number, leaseMs: number): Promise<ClaimedWebhook[]> {
    return this.write(() => this.outbox.claim(limit, leaseMs));
  }

  async recordWebhookAttempt(claimed: ClaimedWebhook, attempt: WebhookAttempt, outcome: WebhookOutcome): Promise<boolean> {
    return this.write(() => this.outbox.record(claimed, attempt, outcome));
  }

  async webhookDeliveries(runId: string): Promise<WebhookDelivery[]> {
    return this.outbox.deliveries(runId);
  }

  async pendingWebhooks(): Promise<{ count: number; next_due_at: string | null }> {
    return this.outbox.pending();
  }

  async getRun(id: string): Promise<StoredRun | undefined> {
    return this.runs.get(id);
  }

  async queryRuns(query: RunQuery): Promise<RunPage> {
    return this.runs.query(query);
  }

  async countRuns(project?: string): Promise<number> {
    return this.runs.count(project);
  }

  async listTraces(filter: TraceFilter = {}): Promise<TracePage> {
    return listTraces(this.db, filter);
  }

  async traceRuns(traceId: string): Promise<TraceRun[]> {
    return traceRuns(this.db, traceId);
  }

  async storeSpans(spans: readonly SpanInput[]): Promise<string[]> {
    return this.write(() => this.spans.store(spans));
  }

  async spansOfTrace(traceId: string): Promise<StoredSpan[]> {
    return this.spans.ofTrace(traceId);
  }

  async hasRootSpan(traceId: string): Promise<boolean> {
    return this.spans.hasRoot(traceId);
  }

  async quietRootlessTraces(quietSince: string, limit: number): Promise<string[]> {
    return this.spans.quietRootless(quietSince, limit);
  }

  async forgetRootless(traceId: string, quietSince: string): Promise<void> {
    this.write(() => this.spans.forgetRootless(traceId, quietSince));
  }

  convertingTrace<T>(traceId: string, convert: () => Promise<T>): Promise<T> {
    // One process owns the file: serializing this process's conversions of the trace is all it takes.
    return this.traceLock.run(traceId, convert);
  }

  async sweepRootless(traceId: string, quietSince: string, convert: () => Promise<void>): Promise<{ claimed: boolean; error?: unknown }> {
    if (this.traceLock.held(traceId) || !this.spans.waitsQuietly(traceId, quietSince)) return { claimed: false };
    return this.traceLock.run(traceId, async () => {
      let error: unknown;
      try {
        await convert();
      } catch (err) {
        error = err;
      }
      this.write(() => this.spans.forgetRootless(traceId, quietSince));
      return error === undefined ? { claimed: true } : { claimed: true, error };
    });
  }

  async storeLogs(logs: readonly LogInput[]): Promise<string[]> {
    return this.write(() => this.logs.store(logs));
  }

  async logsOfTrace(traceId: string): Promise<StoredLog[]> {
    return this.logs.ofTrace(traceId);
  }

  async ensureProject(name: string): Promise<void> {
    this.write(() => this.projects.ensure(name, new Date().toISOString()));
  }

  async projectExists(name: string): Promise<boolean> {
    return this.projects.exists(name);
  }

  async listProjects(): Promise<Project[]> {
    return this.projects.list();
  }

  async deleteProject(name: string): Promise<number> {
    return this.write(() => this.projects.delete(name));
  }

  async listAttachments(runId: string): Promise<AttachmentInfo[]> {
    return this.attachments.list(runId);
  }

  async getAttachment(runId: string, name: string): Promise<StoredAttachment | undefined> {
    return this.attachments.get(runId, name);
  }

  async createDeployment(deployment: DeploymentRecord, revision: RevisionRecord): Promise<boolean> {
    return this.write(() => this.deployments.create(deployment, revision));
  }

  async getDeployment(id: string): Promise<DeploymentRecord | undefined> {
    return this.deployments.get(id);
  }

  async updateDeployment(id: string, body: Obj, updatedAt: string, revision?: RevisionRecord, ifUpdatedAt?: string): Promise<boolean> {
    return this.write(() => this.deployments.update(id, body, updatedAt, revision, ifUpdatedAt));
  }

  async listRevisions(deploymentId: string): Promise<RevisionRecord[]> {
    return this.deployments.revisions(deploymentId);
  }

  async storeFeedback(records: readonly unknown[], locate?: (index: number) => Issue["loc"]): Promise<number> {
    const checked = checkFeedback(records, locate);
    return this.write(() => writeFeedback(this.db, checked));
  }

  async feedbackOf(runIds: readonly string[]): Promise<StoredFeedback[]> {
    return feedbackOf(this.db, runIds);
  }

  async traceFeedback(traceId: string): Promise<FeedbackSummary[]> {
    return traceFeedback(this.db, traceId);
  }

  async listThreads(q: ThreadQuery): Promise<ThreadPage> {
    return listThreads(this.db, q, (id) => this.runs.get(id));
  }

  async threadTurns(threadId: string, project?: string): Promise<ThreadTurn[]> {
    return threadTurns(this.db, threadId, project, (id) => this.runs.get(id));
  }

  async monitorSeries(q: MonitorQuery): Promise<MonitorSeries> {
    return monitorSeries(this.db, q);
  }

  async monitorBreakdown(q: MonitorQuery, by: Breakdown): Promise<BreakdownRow[]> {
    return monitorBreakdown(this.db, q, by);
  }

  pruneTraces(cutoff: Date, opts?: PruneOptions): Promise<PruneResult> {
    return pruneSqlite(this.db, cutoff, opts).then(
      (r) => ((this.writeTrouble = undefined), r),
      (err: unknown) => {
        throw this.unavailable(err);
      },
    );
  }

  /** A file the process holds open answers whenever the process does, unless its last write could not be done (a full disk, say). */
  async health(): Promise<StoreHealth> {
    if (!this.db.open) return { ok: false, error: "the store is closed" };
    return this.writeTrouble === undefined ? { ok: true } : { ok: false, error: this.writeTrouble };
  }

  async close(): Promise<void> {
    // Ingests handed over in this turn are written, not dropped, before the file closes.
    if (this.db.open) this.group.flush();
    closeDatabase(this.db);
  }
}
