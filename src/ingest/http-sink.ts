/**
 * HttpSink: POST {endpoint}/runs/multipart. Before every attempt (retries
 * included, since the client calls send() per attempt) it takes one unit from
 * the rate limiter for the SPEC §8 row that applies, so the client stays at or
 * under the limit in every sliding window.
 */
import type { Agent, IncomingMessage, request as httpRequest } from "node:http";
import { gzip as gzipCb, constants as zc } from "node:zlib";
import { promisify } from "node:util";
import { matchLimit } from "../ratelimit/match.js";
import { arrivalWindowMs, type RateLimiter } from "../ratelimit/limiter.js";
import { MAX_ADVERTISED_BATCH } from "./config.js";
import { encodeMultipart } from "./multipart.js";
import type { Op } from "./ops.js";
import { isRetryableStatus, retryAfterMs } from "../internal/retry.js";
import { SinkError, type Sink, type SinkLimits } from "./sink.js";

const gzip = promisify(gzipCb);

/** Whether a URL's host is this machine. */
export function isLoopback(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, "").toLowerCase();
  } catch {
    return false;
  }
  return host === "localhost" || host.endsWith(".localhost") || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

export interface HttpSinkOptions {
  endpoint: string;
  apiKey?: string;
  limiter: RateLimiter;
  /** Override the table's limit for POST /runs/multipart. */
  rateLimit?: { limit: number; windowMs: number };
  /**
   * `auto` (default): compress when GET /info advertises gzip support and the
   * endpoint is not on this machine (on loopback there is no bandwidth to save,
   * and the compression would only spend the application's CPU).
   */
  gzip?: boolean | "auto";
  /** The configured limits: GET /info may lower them, or raise batchSize when `batchSizeFromServer`. */
  defaults: SinkLimits;
  /** The caller set no batch size: the server's advertised `size_limit` is used (at most MAX_ADVERTISED_BATCH). */
  batchSizeFromServer?: boolean;
  /** Per-request timeout. Default 60 s. */
  timeoutMs?: number;
  warn: (msg: string) => void;
}

interface Info {
  limits: SinkLimits;
  gzip: boolean;
}

interface Reply {
  status: number;
  retryAfter: string | undefined;
  location: string | undefined;
  body: Buffer;
}

/** The most of an answer's body kept: enough for any error detail a collector sends. */
const MAX_REPLY_BYTES = 64 * 1024;

/** Redirects that keep the method and body (as fetch followed them), at most this many in a row. */
const MAX_REDIRECTS = 5;

const firstHeader = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

interface Transport {
  request: typeof httpRequest;
  agent: Agent;
}

export class HttpSink implements Sink {
  readonly target: string;
  readonly encodesRuns = true;
  private info?: Promise<Info>;
  private readonly url: string;
  private readonly limitKey: string;
  private readonly limit: number;
  private readonly windowMs: number;
  /**
   * Batches go out through node:http(s) on kept-alive connections rather than
   * fetch: fetch copies the body into a new buffer and runs it through web
   * streams, which cost the host more CPU per batch than encoding it did.
   * Idle connections do not hold the process open (the agent unrefs them).
   */
  /**
   * node:http / node:https and their kept-alive agents, loaded at the first send of each
   * scheme: https pulls in TLS, which an app that only imports tracepipe should not pay for.
   */
  private readonly transports: { http?: Promise<Transport>; https?: Promise<Transport> } = {};
  private readonly agents: Agent[] = [];

  constructor(private readonly opts: HttpSinkOptions) {
    const base = opts.endpoint.replace(/\/+$/, "");
    this.target = base;
    this.url = `${base}/runs/multipart`;
    const m = matchLimit({ method: "POST", path: "/runs/multipart", headers: opts.apiKey ? { "x-api-key": opts.apiKey } : {}, ip: "self" });
    this.limitKey = m?.key ?? "runs-multipart";
    this.limit = opts.rateLimit?.limit ?? m?.limit ?? 6000;
    const windowMs = opts.rateLimit?.windowMs ?? m?.windowMs ?? 10_000;
    this.windowMs = arrivalWindowMs(windowMs);
    if (!opts.rateLimit && m && m.rule.category !== "Multipart ingest") {
      // Without an API key, SPEC §8 counts POST /runs/multipart against the per-IP catch-all
      // (100 / 60 s): about 170 runs/s. Silent, that looks like a hang in a bulk load.
      opts.warn(
        `no API key: without one, ingest is limited to ${m.limit} requests per ${windowMs / 1000} s per IP address (the ${m.rule.category} limit) instead of 6,000 per 10 s; set TRACEPIPE_API_KEY (--api-key) or an explicit rate limit`,
      );
    }
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return this.opts.apiKey ? { "x-api-key": this.opts.apiKey, ...extra } : extra;
  }

  /** GET /info once; on failure fall back to the defaults and warn (issue "Deliver"). */
  private loadInfo(): Promise<Info> {
    return (this.info ??= (async () => {
      const fallback: Info = { limits: this.opts.defaults, gzip: this.opts.gzip === true };
      try {
        const res = await fetch(`${this.target}/info`, { headers: this.headers(), signal: AbortSignal.timeout(5000) });
        if (!res.ok) throw new Error(`HTTP ${res.status}`);
        const body = (await res.json()) as {
          batch_ingest_config?: { size_limit?: number; size_limit_bytes?: number; supports_gzip?: boolean };
        };
        const cfg = body.batch_ingest_config ?? {};
        return {
          limits: {
            batchSize: this.batchSizeFrom(cfg.size_limit),
            batchBytes: Math.min(this.opts.defaults.batchBytes, cfg.size_limit_bytes ?? Infinity),
          },
          gzip:
            this.opts.gzip === "auto" || this.opts.gzip === undefined
              ? cfg.supports_gzip === true && !isLoopback(this.target)
              : this.opts.gzip,
        };
      } catch (err) {
        this.opts.warn(
          `GET ${this.target}/info failed (${(err as Error).message}); using default batch limits${fallback.gzip ? " with gzip" : ""}`,
        );
        return fallback;
      }
    })());
  }

  /**
   * The batch size given what GET /info advertised. A size the caller set is
   * only ever lowered. With none set, the advertised size is used, as
   * LangSmith's client does: fewer, larger requests cost the host less CPU per
   * run (a request's fixed cost is about that of encoding 50 runs) and spend
   * less of the rate budget.
   */
  private batchSizeFrom(advertised: unknown): number {
    const set = this.opts.defaults.batchSize;
    if (typeof advertised !== "number" || !Number.isInteger(advertised) || advertised < 1) return set;
    return this.opts.batchSizeFromServer ? Math.min(advertised, MAX_ADVERTISED_BATCH) : Math.min(set, advertised);
  }

  async limits(): Promise<SinkLimits> {
    return (await this.loadInfo()).limits;
  }

  async send(ops: Op[], signal?: AbortSignal): Promise<void> {
    const info = await this.loadInfo();
    const { body, contentType } = encodeMultipart(ops);
    const headers = this.headers({ "content-type": contentType });
    let payload: Buffer = body;
    if (info.gzip) {
      payload = await gzip(body, { level: zc.Z_BEST_SPEED });
      headers["content-encoding"] = "gzip";
    }
    try {
      await this.opts.limiter.acquire(this.limitKey, 1, this.limit, this.windowMs, signal);
    } catch (err) {
      if (signal?.aborted) throw new SinkError(`POST ${this.url} abandoned: the client stopped waiting`, "retry");
      throw err;
    }
    let res: Reply;
    try {
      let url = this.url;
      for (let hops = 0; ; hops++) {
        res = await this.post(url, headers, payload, signal, this.opts.timeoutMs ?? 60_000);
        if ((res.status !== 307 && res.status !== 308) || !res.location || hops >= MAX_REDIRECTS) break;
        url = new URL(res.location, url).href;
      }
    } catch (err) {
      throw new SinkError(`POST ${this.url} failed: ${(err as Error).message}`, "retry");
    }
    if (res.status >= 200 && res.status < 300) return;
    let detail: unknown;
    try {
      detail = (JSON.parse(res.body.toString("utf8")) as { detail?: unknown }).detail;
    } catch {
      detail = undefined;
    }
    const msg = `POST ${this.url}: HTTP ${res.status}${detail ? ` ${typeof detail === "string" ? detail : JSON.stringify(detail)}` : ""}`;
    if (res.status === 413) throw new SinkError(msg, "split", 413, detail);
    if (isRetryableStatus(res.status)) throw new SinkError(msg, "retry", res.status, detail, retryAfterMs(res.retryAfter ?? null));
    throw new SinkError(msg, "fatal", res.status, detail);
  }

  private transport(secure: boolean): Promise<Transport> {
    const key = secure ? "https" : "http";
    return (this.transports[key] ??= (secure ? import("node:https") : import("node:http")).then((m) => {
      const agent = new m.Agent({ keepAlive: true });
      this.agents.push(agent);
      return { request: m.request, agent };
    }));
  }

  /** One POST, read to the end; rejects on a network error, an abort, or no complete answer within `timeoutMs`. */
  private async post(
    url: string,
    headers: Record<string, string>,
    body: Buffer,
    signal: AbortSignal | undefined,
    timeoutMs: number,
  ): Promise<Reply> {
    const { request, agent } = await this.transport(url.slice(0, 6).toLowerCase() === "https:");
    return new Promise<Reply>((resolve, reject) => {
      const req = request(
        url,
        { method: "POST", headers: Object.assign(headers, { "content-length": String(body.length) }), agent, signal },
        (res: IncomingMessage) => {
          const chunks: Buffer[] = [];
          let kept = 0;
          const answer = () => {
            clearTimeout(timer);
            resolve({
              status: res.statusCode ?? 0,
              retryAfter: firstHeader(res.headers["retry-after"]),
              location: firstHeader(res.headers.location),
              body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks),
            });
          };
          res.on("data", (c: Buffer) => {
            chunks.push(kept + c.length > MAX_REPLY_BYTES ? c.subarray(0, MAX_REPLY_BYTES - kept) : c);
            kept += c.length;
            if (kept < MAX_REPLY_BYTES) return;
            // The body only names an error: a longer one (a proxy's page, or one that never ends) is not
            // held in the host's memory nor waited for; the connection is dropped instead of reused.
            answer();
            res.destroy();
          });
          res.on("end", answer);
          res.on("error", (err) => {
            clearTimeout(timer);
            reject(err);
          });
          res.on("close", () => {
            clearTimeout(timer);
            if (!res.complete) reject(new Error("the connection closed before the answer was complete"));
          });
        },
      );
      // The whole exchange is bounded, as fetch's AbortSignal.timeout bounded it (a socket timeout would only bound silences).
      const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      timer.unref(); // like AbortSignal.timeout: waiting for an answer alone does not hold the host's exit
      req.on("error", (err) => {
        clearTimeout(timer);
        reject(err);
      });
      req.end(body);
    });
  }

  async close(): Promise<void> {
    for (const agent of this.agents) agent.destroy();
  }
}
