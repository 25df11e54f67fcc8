/** The store contract, by concern (one file each), and the Store that composes them. */
export type { Store, StoreOptions } from "./store.js";
export type { RunStore, StoredRun, IngestBatch, CheckedBatch, IngestResult, RunQuery, RunPage } from "./runs.js";
export type { TraceStore, TraceFilter, TraceSummary, TraceRun, TracePage } from "./traces.js";
export type { SpanStore, SpanInput, StoredSpan } from "./spans.js";
export type { ProjectStore, Project } from "./projects.js";
export type { AttachmentStore, AttachmentInput, AttachmentInfo, StoredAttachment } from "./attachments.js";
export type { DeploymentStore, DeploymentRecord, RevisionRecord } from "./deployments.js";
export { CursorError } from "./cursor.js";
