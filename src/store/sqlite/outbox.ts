/**
 * The webhook outbox in SQLite (contract/webhooks.ts). One process writes the
 * file, so a claim needs no row locks: it is one UPDATE, and the lease is what
 * makes it restart-safe (a delivery claimed by a process that died is claimed
 * again once the lease ends). Times are ISO 8601 text, which compares in time order.
 */
import { randomUUID } from "node:crypto";
import type { SqliteHandle } from "./handle.js";
import { webhookUrlOf } from "../../run/webhook.js";
import type { ClaimedWebhook, WebhookAttempt, WebhookDelivery, WebhookOutcome } from "../contract/webhooks.js";

interface OutboxRow {
  run_id: string;
  url: string;
  status: WebhookDelivery["status"];
  history: string;
  created_at: string;
  next_attempt_at: string | null;
  claimed_until: string | null;
  finished_at: string | null;
}

const iso = (ms: number) => new Date(ms).toISOString();

export class SqliteOutbox {
  constructor(private readonly db: SqliteHandle) {}

  /** Inside the transaction that completed `runId`: its delivery, once however often it completes. */
  enqueue(runId: string, extra: unknown, now: string): void {
    const url = webhookUrlOf({ extra });
    if (!url) return;
    this.db
      .prepare("INSERT INTO webhook_outbox (run_id, url, created_at, next_attempt_at) VALUES (?, ?, ?, ?) ON CONFLICT (run_id) DO NOTHING")
      .run(runId, url, now, now);
  }

  claim(limit: number, leaseMs: number): ClaimedWebhook[] {
    const now = Date.now();
    const claim = randomUUID();
    return this.db
      .prepare(
        `UPDATE webhook_outbox SET claimed_until = ?, claim = ? WHERE run_id IN (
           SELECT run_id FROM webhook_outbox WHERE status = 'pending' AND next_attempt_at <= ? AND (claimed_until IS NULL OR claimed_until <= ?)
           ORDER BY next_attempt_at, run_id LIMIT ?)
         RETURNING run_id, url, claim, attempts`,
      )
      .all(iso(now + leaseMs), claim, iso(now), iso(now), limit) as ClaimedWebhook[];
  }

  record(c: ClaimedWebhook, attempt: WebhookAttempt, outcome: WebhookOutcome): boolean {
    const now = Date.now();
    const next = outcome.status === "pending" ? iso(now + outcome.retryInMs) : null;
    const finished = outcome.status === "pending" ? null : iso(now);
    // Each SET expression reads the row as it was: `claim = @claim` asks whether the claim is still this one.
    const r = this.db
      .prepare(
        `UPDATE webhook_outbox SET
           attempts = attempts + 1,
           history = json_insert(history, '$[#]', json(@attempt)),
           status = CASE WHEN status <> 'pending' THEN status WHEN claim = @claim OR @status = 'delivered' THEN @status ELSE status END,
           next_attempt_at = CASE WHEN status <> 'pending' THEN next_attempt_at WHEN claim = @claim OR @status = 'delivered' THEN @next ELSE next_attempt_at END,
           finished_at = CASE WHEN status <> 'pending' THEN finished_at WHEN claim = @claim OR @status = 'delivered' THEN @finished ELSE finished_at END,
           claimed_until = CASE WHEN claim = @claim THEN NULL ELSE claimed_until END,
           claim = CASE WHEN claim = @claim THEN NULL ELSE claim END
         WHERE run_id = @run_id`,
      )
      .run({ run_id: c.run_id, claim: c.claim, attempt: JSON.stringify(attempt), status: outcome.status, next, finished }) as {
      changes: number;
    };
    return r.changes > 0;
  }

  deliveries(runId: string): WebhookDelivery[] {
    const rows = this.db
      .prepare(
        "SELECT run_id, url, status, history, created_at, next_attempt_at, claimed_until, finished_at FROM webhook_outbox WHERE run_id = ?",
      )
      .all(runId) as OutboxRow[];
    return rows.map(({ history, ...r }) => ({ ...r, attempts: JSON.parse(history) as WebhookAttempt[] }));
  }

  pending(): { count: number; next_due_at: string | null } {
    return this.db
      .prepare("SELECT count(*) AS count, min(next_attempt_at) AS next_due_at FROM webhook_outbox WHERE status = 'pending'")
      .get() as { count: number; next_due_at: string | null };
  }
}
