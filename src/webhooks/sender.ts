/**
 * One attempt at delivering a run-completion webhook (SPEC §6): vet the URL
 * (policy.ts) before any connection, connect to the vetted address (no DNS
 * rebinding), POST the run record with the run id in a header, follow no
 * redirect, and say what the answer means: delivered (2xx), worth another
 * attempt later (network error, a name that does not resolve now, timeout,
 * 408, 425, 429, 5xx), or final. The timeout covers the whole attempt, the
 * name's resolution included: a resolver that never answers ends the attempt
 * like a receiver that never answers.
 * Retrying, and remembering what was delivered, is the outbox's job
 * (server/webhook-delivery.ts over the store's outbox): a sender keeps no state.
 */
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import { isRetryableStatus, retryAfterMs } from "../internal/retry.js";
import type { WebhookConfig } from "./config.js";
import { systemLookup, vetWebhookUrl, WebhookUrlError, type PolicyOptions, type VettedUrl } from "./policy.js";

/** The header that carries the run id: receivers dedupe by it (a retry after a timeout may repeat a delivery). */
export const RUN_ID_HEADER = "x-tracepipe-run-id";
/** Which attempt this is, 1 for the first. */
export const ATTEMPT_HEADER = "x-tracepipe-attempt";

export const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000;

export interface WebhookSenderOptions extends PolicyOptions {
  /** The whole attempt (resolve, connect, send, answer) must finish within this, ms (default 10 s); past it the attempt failed and is retried. */
  timeoutMs?: number;
}

/** What one attempt did. */
export interface AttemptResult {
  /** When it started (RFC 3339). */
  at: string;
  duration_ms: number;
  status_code?: number;
  error?: string;
  /** `retry`: worth another attempt later; `final`: another attempt would get the same answer; `refused`: the URL policy refused it, nothing was sent. */
  verdict: "delivered" | "retry" | "final" | "refused";
  /** The receiver's Retry-After, ms, when it sent one. */
  retryAfterMs?: number;
}

function post(
  target: VettedUrl,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  /** The attempt's whole timeout, which the error names (`timeoutMs` is what name resolution left of it). */
  attemptTimeoutMs: number,
): Promise<{ status: number; retryAfter?: string }> {
  const { url, address, family } = target;
  // Connect to the address the policy checked, whatever DNS says now.
  const lookup: LookupFunction = (_host, opts, cb) => {
    if ((opts as { all?: boolean }).all)
      (cb as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    else cb(null, address, family);
  };
  const send = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      url,
      {
        method: "POST",
        headers: { ...headers, "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) },
        lookup,
      },
      (res) => {
        res.resume();
        res.on("end", () => {
          clearTimeout(deadline);
          const ra = res.headers["retry-after"];
          resolve({ status: res.statusCode ?? 0, retryAfter: typeof ra === "string" ? ra : undefined });
        });
        res.on("error", reject);
      },
    );
    // A deadline on the whole exchange, not on socket idleness: a receiver that trickles its answer still ends the attempt.
    const deadline = setTimeout(() => req.destroy(new Error(`no answer within ${attemptTimeoutMs} ms`)), timeoutMs);
    req.on("error", (err) => {
      clearTimeout(deadline);
      reject(err);
    });
    req.end(body);
  });
}

/** `lookup` (the system resolver by default) that gives up after `ms`: getaddrinfo has no deadline of its own. */
function boundedLookup(lookup: PolicyOptions["lookup"], ms: number): NonNullable<PolicyOptions["lookup"]> {
  const resolve = lookup ?? systemLookup;
  return (host) =>
    new Promise((ok, fail) => {
      const timer = setTimeout(() => fail(new Error(`no address within ${ms} ms`)), ms);
      resolve(host).then(
        (a) => {
          clearTimeout(timer);
          ok(a);
        },
        (e: unknown) => {
          clearTimeout(timer);
          fail(e);
        },
      );
    });
}

export class WebhookSender {
  constructor(
    private readonly config: WebhookConfig,
    /** Read at each attempt: the collector fills in baseUrl once it listens. */
    private readonly opts: WebhookSenderOptions = {},
  ) {}

  /** POST `payload` to `url` once; never throws. `attempt` is the attempt's number (1 for the first), sent in a header. */
  async attempt(url: string, runId: string, payload: unknown, attempt = 1): Promise<AttemptResult> {
    const at = new Date();
    const started = performance.now();
    const took = () => Math.round(performance.now() - started);
    const timeoutMs = this.opts.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS;
    let target: VettedUrl;
    try {
      target = await vetWebhookUrl(url, this.config.policy, { ...this.opts, lookup: boundedLookup(this.opts.lookup, timeoutMs) });
    } catch (err) {
      // A name that does not resolve now may resolve later (a resolver outage, a record not yet published): worth another attempt.
      if (err instanceof WebhookUrlError && err.type === "dns_failed")
        return { at: at.toISOString(), duration_ms: took(), error: err.message, verdict: "retry" };
      // Refused by the policy: the same URL would be refused again.
      return {
        at: at.toISOString(),
        duration_ms: took(),
        error: err instanceof WebhookUrlError ? `refused (${err.type}): ${err.message}` : String(err),
        verdict: "refused",
      };
    }
    const headers = { ...this.config.headers, [RUN_ID_HEADER]: runId, [ATTEMPT_HEADER]: String(attempt) };
    try {
      const { status, retryAfter } = await post(target, headers, JSON.stringify(payload), Math.max(1, timeoutMs - took()), timeoutMs);
      const base = { at: at.toISOString(), duration_ms: took(), status_code: status };
      if (status >= 200 && status < 300) return { ...base, verdict: "delivered" };
      if (status >= 300 && status < 400) return { ...base, error: "redirects are not followed", verdict: "final" };
      const ra = retryAfterMs(retryAfter);
      return { ...base, verdict: isRetryableStatus(status) ? "retry" : "final", ...(ra === undefined ? {} : { retryAfterMs: ra }) };
    } catch (err) {
      return { at: at.toISOString(), duration_ms: took(), error: (err as Error).message, verdict: "retry" };
    }
  }
}
