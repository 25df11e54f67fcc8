/**
 * Outbound run-completion webhooks (SPEC §6): one POST of the run record per
 * completed root run that was ingested with a `webhook` URL. Each URL is vetted
 * (policy.ts) before any connection, the connection goes to the vetted
 * address (no DNS rebinding), redirects are not followed, and delivery is
 * retried with the ingest client's backoff on network errors and the statuses
 * it retries (408, 425, 429, 5xx). Sending runs off
 * the ingest path: `send()` returns at once.
 */
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import { backoffMs, isRetryableStatus } from "../internal/retry.js";
import { sleep } from "../internal/sleep.js";
import type { WebhookConfig } from "./config.js";
import { vetWebhookUrl, WebhookUrlError, type PolicyOptions } from "./policy.js";

export interface WebhookSenderOptions extends PolicyOptions {
  maxAttempts?: number;
  backoff?: { baseMs: number; maxMs: number };
  timeoutMs?: number;
  /** Told about every final outcome (for logs and tests). */
  onResult?: (r: WebhookResult) => void;
}

export interface WebhookResult {
  url: string;
  ok: boolean;
  attempts: number;
  status?: number;
  error?: string;
}

export interface WebhookStats {
  delivered: number;
  failed: number;
  refused: number;
  attempts: number;
}

function post(target: Awaited<ReturnType<typeof vetWebhookUrl>>, headers: Record<string, string>, body: string, timeoutMs: number): Promise<number> {
  const { url, address, family } = target;
  // Connect to the address the policy checked, whatever DNS says now.
  const lookup: LookupFunction = (_host, opts, cb) => {
    if ((opts as { all?: boolean }).all) (cb as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    else cb(null, address, family);
  };
  const send = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(url, { method: "POST", headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)), ...headers }, lookup, timeout: timeoutMs }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on("error", reject);
    req.end(body);
  });
}

export class WebhookSender {
  readonly stats: WebhookStats = { delivered: 0, failed: 0, refused: 0, attempts: 0 };
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly config: WebhookConfig,
    private readonly opts: WebhookSenderOptions = {},
  ) {}

  /** Queue one delivery; never throws, never blocks the caller. */
  send(url: string, payload: unknown): void {
    if (!this.config.enabled) return;
    const p = this.deliver(url, JSON.stringify(payload)).finally(() => this.pending.delete(p));
    this.pending.add(p);
  }

  /** Resolves when every queued delivery has finished (delivered, refused or out of attempts). */
  async idle(): Promise<void> {
    while (this.pending.size) await Promise.allSettled([...this.pending]);
  }

  private done(r: WebhookResult): void {
    this.opts.onResult?.(r);
  }

  private async deliver(url: string, body: string): Promise<void> {
    let target;
    try {
      target = await vetWebhookUrl(url, this.config.policy, this.opts);
    } catch (err) {
      this.stats.refused++;
      this.done({ url, ok: false, attempts: 0, error: err instanceof WebhookUrlError ? err.message : String(err) });
      return;
    }
    const max = this.opts.maxAttempts ?? 5;
    const backoff = this.opts.backoff ?? { baseMs: 500, maxMs: 30_000 };
    let last: WebhookResult = { url, ok: false, attempts: 0 };
    for (let attempt = 1; attempt <= max; attempt++) {
      this.stats.attempts++;
      try {
        const status = await post(target, this.config.headers, body, this.opts.timeoutMs ?? 10_000);
        last = { url, ok: status >= 200 && status < 300, attempts: attempt, status };
        if (last.ok) break;
        if (status >= 300 && status < 400) {
          last.error = "redirects are not followed";
          break;
        }
        if (!isRetryableStatus(status)) break;
      } catch (err) {
        last = { url, ok: false, attempts: attempt, error: (err as Error).message };
      }
      if (attempt < max) await sleep(backoffMs(attempt - 1, backoff));
    }
    if (last.ok) this.stats.delivered++;
    else this.stats.failed++;
    this.done(last);
  }
}
