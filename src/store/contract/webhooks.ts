/**
 * The webhook outbox: one delivery per completed root run that names a
 * webhook URL (`extra.metadata.webhook`), written in the same transaction that
 * completes the run, so a delivery is neither lost when a collector dies nor
 * made twice when several collectors share the store.
 *
 * A collector claims due deliveries for a lease (`claimed_until`); no other
 * collector claims them while the lease runs, and one that dies mid-delivery
 * leaves them to be claimed again once it ends. Each claim is one attempt:
 * its outcome is recorded with the attempt (time, status code or error,
 * duration), and a retry is a later claim. See docs/webhooks.md.
 */

/** `pending` until delivered (a 2xx answer) or failed for good (out of attempts, or an answer or URL not worth retrying). */
export type WebhookDeliveryStatus = "pending" | "delivered" | "failed";

export interface WebhookAttempt {
  /** When the attempt started (RFC 3339). */
  at: string;
  duration_ms: number;
  /** The receiver's HTTP status, when it answered. */
  status_code?: number;
  /** Why the attempt did not succeed without a usable answer: network error, timeout, refused URL, run gone. */
  error?: string;
}

export interface WebhookDelivery {
  run_id: string;
  url: string;
  status: WebhookDeliveryStatus;
  /** Every recorded attempt, oldest first. */
  attempts: WebhookAttempt[];
  created_at: string;
  /** When the next attempt is due (null once finished). */
  next_attempt_at: string | null;
  /** Until when a collector holds it for an attempt (null when no one does). */
  claimed_until: string | null;
  finished_at: string | null;
}

/** A delivery a collector holds for one attempt. */
export interface ClaimedWebhook {
  run_id: string;
  url: string;
  /** Identifies this claim: an outcome recorded under a claim that was since taken over does not move the delivery on (a success still ends it). */
  claim: string;
  /** Attempts recorded before this one. */
  attempts: number;
}

/** What follows an attempt: the delivery is finished, or tried again after a delay. */
export type WebhookOutcome = { status: "delivered" | "failed" } | { status: "pending"; retryInMs: number };

export interface WebhookOutboxStore {
  /** Whether ingest writes outbox rows (StoreOptions.webhookOutbox): true only where webhooks are configured. */
  readonly writesWebhookOutbox: boolean;
  /**
   * Claim up to `limit` pending deliveries that are due and not held (or whose
   * lease ran out), for `leaseMs`, oldest due first. Concurrent claimers get
   * disjoint sets.
   */
  claimWebhooks(limit: number, leaseMs: number): Promise<ClaimedWebhook[]>;
  /** Keep the attempt and apply its outcome; resolves to false when there is no such delivery. */
  recordWebhookAttempt(claimed: ClaimedWebhook, attempt: WebhookAttempt, outcome: WebhookOutcome): Promise<boolean>;
  /** A run's webhook deliveries (at most one today), with their attempts. */
  webhookDeliveries(runId: string): Promise<WebhookDelivery[]>;
  /** How many deliveries are still pending, and when the earliest is due. */
  pendingWebhooks(): Promise<{ count: number; next_due_at: string | null }>;
}
