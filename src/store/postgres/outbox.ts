/**
 * The webhook outbox in PostgreSQL (contract/webhooks.ts), shared by every
 * collector on the database. A claim takes due rows with FOR UPDATE SKIP
 * LOCKED, so collectors claiming at the same moment get disjoint rows without
 * waiting on each other, and sets a lease (`claimed_until`) that keeps them
 * away from other claimers after the claim commits; a collector killed
 * mid-delivery leaves its rows to be claimed again when the lease ends. All
 * times are the database's clock, so collectors on several machines agree.
 */
import { randomUUID } from "node:crypto";
import type pg from "pg";
import { webhookUrlOf } from "../../run/webhook.js";
import type { ClaimedWebhook, WebhookAttempt, WebhookDelivery, WebhookOutcome } from "../contract/webhooks.js";
import type { PgPool } from "./pool.js";
import { storable } from "./columns.js";

/**
 * A webhook URL as PostgreSQL text can hold it. U+0000 becomes `%00`, which is what
 * URL parsing makes of it where a URL may hold it (the sender parses the URL), so the
 * delivery goes where it would from the other stores; a lone surrogate becomes U+FFFD,
 * as URL parsing does too.
 */
export function outboxUrl(url: string): string {
  return storable(url.replaceAll("\u0000", "%00"));
}

/** A timestamptz as RFC 3339 text in UTC, as the other stores' times read. */
const utc = (expr: string) => `to_char(${expr} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * Inside the transaction that completed `runIds` (their rows already written):
 * one delivery each for those whose `extra.metadata.webhook` names a URL, once
 * however often a run completes again or two collectors complete it at once.
 */
export async function enqueueWebhooks(client: pg.ClientBase, runIds: readonly string[]): Promise<void> {
  const rows = (await client.query<{ id: string; extra: string | null }>("SELECT id, extra FROM runs WHERE id = ANY($1::text[])", [runIds]))
    .rows;
  const due: [string, string][] = [];
  for (const r of rows) {
    const url = r.extra ? webhookUrlOf({ extra: JSON.parse(r.extra) as unknown }) : undefined;
    if (url) due.push([r.id, outboxUrl(url)]);
  }
  if (!due.length) return;
  await client.query(
    `INSERT INTO webhook_outbox (run_id, url, created_at, next_attempt_at)
     SELECT id, url, now(), now() FROM unnest($1::text[], $2::text[]) AS d(id, url) ORDER BY id
     ON CONFLICT (run_id) DO NOTHING`,
    [due.map((d) => d[0]), due.map((d) => d[1])],
  );
}

export async function claimWebhooks(pool: PgPool, limit: number, leaseMs: number): Promise<ClaimedWebhook[]> {
  const r = await pool.query<ClaimedWebhook>(
    `UPDATE webhook_outbox o SET claimed_until = now() + $2::float8 * interval '1 millisecond', claim = $3::text
     FROM (SELECT run_id FROM webhook_outbox
           WHERE status = 'pending' AND next_attempt_at <= now() AND (claimed_until IS NULL OR claimed_until <= now())
           ORDER BY next_attempt_at, run_id LIMIT $1::int FOR UPDATE SKIP LOCKED) due
     WHERE o.run_id = due.run_id
     RETURNING o.run_id, o.url, o.claim, o.attempts`,
    [limit, leaseMs, randomUUID()],
  );
  return r.rows;
}

export async function recordWebhookAttempt(
  pool: PgPool,
  c: ClaimedWebhook,
  attempt: WebhookAttempt,
  outcome: WebhookOutcome,
): Promise<boolean> {
  const retryInMs = outcome.status === "pending" ? outcome.retryInMs : null;
  // Each SET expression reads the row as it was: `claim = $2` asks whether the claim is still this one.
  const moves = `status = 'pending' AND (claim = $2::text OR $4::text = 'delivered')`;
  const r = await pool.query(
    `UPDATE webhook_outbox SET
       attempts = attempts + 1,
       history = history || jsonb_build_array($3::jsonb),
       status = CASE WHEN ${moves} THEN $4::text ELSE status END,
       next_attempt_at = CASE WHEN ${moves} THEN now() + $5::float8 * interval '1 millisecond' ELSE next_attempt_at END,
       finished_at = CASE WHEN ${moves} AND $4::text <> 'pending' THEN now() ELSE finished_at END,
       claimed_until = CASE WHEN claim = $2::text THEN NULL ELSE claimed_until END,
       claim = CASE WHEN claim = $2::text THEN NULL ELSE claim END
     WHERE run_id = $1`,
    [c.run_id, c.claim, JSON.stringify(attempt), outcome.status, retryInMs],
  );
  return (r.rowCount ?? 0) > 0;
}

export async function webhookDeliveries(pool: PgPool, runId: string): Promise<WebhookDelivery[]> {
  const r = await pool.query<Omit<WebhookDelivery, "attempts"> & { history: WebhookDelivery["attempts"] }>(
    `SELECT run_id, url, status, history, ${["created_at", "next_attempt_at", "claimed_until", "finished_at"].map((c) => `${utc(c)} AS ${c}`).join(", ")}
     FROM webhook_outbox WHERE run_id = $1`,
    [runId],
  );
  return r.rows.map(({ history, ...d }) => ({ ...d, attempts: history }));
}

export async function pendingWebhooks(pool: PgPool): Promise<{ count: number; next_due_at: string | null }> {
  const r = await pool.query<{ count: number; next_due_at: string | null }>(
    `SELECT count(*)::int AS count, ${utc("min(next_attempt_at)")} AS next_due_at FROM webhook_outbox WHERE status = 'pending'`,
  );
  return r.rows[0]!;
}
