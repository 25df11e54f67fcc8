/**
 * Store: everything the collector persists, behind one contract split by
 * concern. Nothing above src/store/ knows which database implements it;
 * `openStore` (store/open.ts) picks one from a target.
 */
import type { AttachmentStore } from "./attachments.js";
import type { DeploymentStore } from "./deployments.js";
import type { LogStore } from "./logs.js";
import type { ProjectStore } from "./projects.js";
import type { RetentionStore } from "./retention.js";
import type { RunStore } from "./runs.js";
import type { SpanStore } from "./spans.js";
import type { TraceStore } from "./traces.js";
import type { FeedbackStore } from "./feedback.js";
import type { ThreadStore } from "./threads.js";
import type { MonitorStore } from "./monitor.js";
import type { WebhookOutboxStore } from "./webhooks.js";

export interface Store
  extends
    RunStore,
    TraceStore,
    SpanStore,
    LogStore,
    ProjectStore,
    AttachmentStore,
    DeploymentStore,
    FeedbackStore,
    ThreadStore,
    MonitorStore,
    RetentionStore,
    WebhookOutboxStore {
  /** Where the store is, for messages (a file path; a URL without its password). */
  readonly target: string;
  /** Whether the database answers now (GET /info reports it): `error` says why not. */
  health(): Promise<StoreHealth>;
  /** Finish and release the connection; idempotent. The store is unusable after. */
  close(): Promise<void>;
}

/** Options every implementation takes. */
export interface StoreOptions {
  /** Derive native messages for llm runs on ingest (the collector does; default true). */
  normalizeOnIngest?: boolean;
  /**
   * Write a webhook outbox row when a root run that names a webhook URL
   * completes (contract/webhooks.ts). On only where webhooks are configured
   * (serve --graph-config), so no rows pile up that nothing will send. Default false.
   */
  webhookOutbox?: boolean;
}

export interface StoreHealth {
  ok: boolean;
  error?: string;
}
