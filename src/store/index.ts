/**
 * `tracepipe/store`: the store contract (one interface per concern, and the
 * Store composing them), `openStore`, and the check every store's ingest
 * applies. Loading this module loads no database driver: openStore imports
 * the implementation its target names.
 */
export { openStore } from "./open.js";
export { CursorError } from "./contract/cursor.js";
export { BatchCheck, checkIngestBatch } from "./validate.js";
export { canonicalTime } from "./time.js";
export type { Store, StoreOptions, StoreHealth } from "./contract/store.js";
export type { RetentionStore, PruneOptions, PruneResult } from "./contract/retention.js";
export type { RunStore, StoredRun, IngestBatch, CheckedBatch, IngestResult, RunQuery, RunPage } from "./contract/runs.js";
export type { TraceStore, TraceFilter, TraceSummary, TraceRun, TracePage } from "./contract/traces.js";
export type { SpanStore, SpanInput, StoredSpan } from "./contract/spans.js";
export type { LogStore, LogInput, StoredLog } from "./contract/logs.js";
export type { ProjectStore, Project } from "./contract/projects.js";
export type { AttachmentStore, AttachmentInput, AttachmentInfo, StoredAttachment } from "./contract/attachments.js";
export type { DeploymentStore, DeploymentRecord, RevisionRecord } from "./contract/deployments.js";
export type { FeedbackStore, StoredFeedback, FeedbackSummary } from "./contract/feedback.js";
export type { ThreadStore, ThreadSummary, ThreadTurn, ThreadQuery, ThreadPage } from "./contract/threads.js";
export type { MonitorStore, MonitorQuery, MonitorSeries, Breakdown, BreakdownRow } from "./contract/monitor.js";
export type {
  WebhookOutboxStore,
  WebhookDelivery,
  WebhookAttempt,
  WebhookDeliveryStatus,
  ClaimedWebhook,
  WebhookOutcome,
} from "./contract/webhooks.js";
