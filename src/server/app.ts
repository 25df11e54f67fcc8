/**
 * The local collector: the service side of SPEC, over node:http and a store
 * (store/open.ts: a SQLite file by default).
 *
 *   const c = await createCollector({ db: ".tracepipe/traces.db" });
 *   const { url } = await c.listen(8484);
 */
import { dbPathFrom } from "../env.js";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { HttpError, secretMatches, type Reply, type RequestContext, type Route } from "./http.js";
import { Router } from "./router.js";
import { decodedStream, parseBoundedJson, readAll, Slots, type BodyStream } from "./body.js";
import { collectGarbage, GC_PART_CHARS } from "./gc.js";
import { DEFAULT_LIMITS, DEFAULT_TIMEOUTS, type CollectorLimits, type CollectorTimeouts } from "./limits.js";
import { capDetail } from "./issues.js";
import { openStore } from "../store/open.js";
import type { Store } from "../store/contract/store.js";
import type { StoredRun } from "../store/contract/runs.js";
import { ingestRoutes } from "./routes/ingest.js";
import { queryRoutes } from "./routes/query.js";
import { DEFAULT_ROOTLESS_AFTER_MS, otelRoutes, RootlessSweep } from "./routes/otel.js";
import { RetentionSweep } from "./retention.js";
import { StoreUnavailableError } from "../errors.js";
import { deploymentRoutes } from "./routes/deployments.js";
import { ControlPlane } from "../control/service.js";
import { webhookReceiverRoutes } from "./routes/webhooks.js";
import { isViewerAsset, isViewerPath, viewerRoutes } from "./viewer/routes.js";
import type { WebhookConfig } from "../webhooks/config.js";
import { WebhookSender, type WebhookSenderOptions } from "../webhooks/sender.js";
import { webhookPayload, webhookUrlOf } from "../webhooks/runs.js";
import { MemoryRateLimiter, type RateLimiter } from "../ratelimit/limiter.js";
import { matchLimit, type Region } from "../ratelimit/match.js";

export const COLLECTOR_VERSION = "0.1.0";
/** Retry-After (s) on a 503 for a store that is away: a database restart or a failover takes seconds. */
const STORE_RETRY_AFTER_S = 1;

export interface CollectorOptions {
  /** Where to store (openStore's target: a SQLite path, `:memory:` for tests) or an open store, left open on close. Default `TRACEPIPE_DB` or `.tracepipe/traces.db`. */
  db?: string | Store;
  /** When set, every request needs `X-Api-Key` equal to it (401 otherwise). */
  apiKey?: string;
  /** Which column of SPEC §8's table to enforce where US and EU differ. Default `us`. */
  region?: Region;
  /**
   * SPEC §8 limits: on by default. `false` turns them off (bulk local use).
   * `overrides` replaces a row's limit by its id (see src/ratelimit/table.ts), e.g.
   * `{ "runs-multipart": { limit: 50, windowMs: 1000 } }` for tests.
   */
  rateLimits?: boolean | { overrides?: Record<string, { limit: number; windowMs: number }> };
  /** Largest accepted request body, raw or decompressed. Default 64 MiB; larger gets 413. (Same as limits.maxBodyBytes.) */
  maxBodyBytes?: number;
  /** Batch bounds advertised in GET /info and enforced (413). Defaults 1000 runs and 20 MiB. (Same as limits.batchSize*.) */
  batchSizeLimit?: number;
  batchSizeBytesLimit?: number;
  /** Request bounds; see CollectorLimits for each one and DEFAULT_LIMITS for the defaults. */
  limits?: Partial<CollectorLimits>;
  /** Connection timeouts; see CollectorTimeouts and DEFAULT_TIMEOUTS (headers 20 s, request 120 s, keep-alive 5 s, idle socket 30 s). */
  timeouts?: Partial<CollectorTimeouts>;
  /** Extra endpoint groups (deployments, webhooks). */
  routes?: Route[];
  /** Outbound run-completion webhooks (graph.json's `webhooks` / `http`, see loadWebhookConfig). */
  webhooks?: WebhookConfig;
  /** Delivery options for outbound webhooks (attempts, backoff, allowPrivateNetworks for local use). */
  webhookDelivery?: WebhookSenderOptions;
  /** Accept agent-server webhooks at POST /webhooks/runs?token=<this>; they become trace runs. */
  webhookToken?: string;
  /** Project of runs received by webhook (default `agent-server`). */
  webhookProject?: string;
  /** How long the control plane's simulated builds take before a revision is DEPLOYED, ms (default 1500). */
  deploymentBuildMs?: number;
  /** Called after a root run with an end time was stored. Must not throw; must not block. */
  onRunCompleted?: (run: StoredRun) => void;
  /** Shared limiter (e.g. Redis); a process-local one by default. */
  limiter?: RateLimiter;
  /**
   * OTLP traces whose root span has not arrived are converted as they are once
   * no span of theirs has come for this long, ms (default 30 s; 0: never, they
   * wait for their root). See routes/otel.ts.
   */
  rootlessAfterMs?: number;
  /** Remove traces older than this (ms) every hour (server/retention.ts); unset keeps everything. */
  retentionMs?: number;
}

export interface Collector {
  server: Server;
  store: Store;
  /** The outbound webhook sender, when webhooks are configured. */
  webhooks?: WebhookSender;
  /** Large bodies being read or held now, the bytes they are charged in the large-body budget, and requests waiting for a large-body slot. */
  bodies(): { large: number; bytes: number; waiting: number };
  /** Convert now the OTLP traces without a root that have been quiet for rootlessAfterMs (the sweep does it on its own every so often). */
  sweepRootless(): Promise<void>;
  listen(port?: number, host?: string): Promise<{ port: number; url: string }>;
  close(): Promise<void>;
}


function send(res: ServerResponse, reply: Reply): void {
  const body = reply.body instanceof Uint8Array ? reply.body : reply.body === undefined ? "" : JSON.stringify(reply.body);
  res.writeHead(reply.status, { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...reply.headers });
  res.end(body);
}

/** The entries of `o` whose value is not undefined (so an explicit undefined keeps the default). */
function defined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export async function createCollector(opts: CollectorOptions = {}): Promise<Collector> {
  const ownStore = typeof opts.db !== "object";
  const store = typeof opts.db === "object" ? opts.db : await openStore(dbPathFrom(opts.db));
  const limits: CollectorLimits = {
    ...DEFAULT_LIMITS,
    ...defined({ maxBodyBytes: opts.maxBodyBytes, batchSizeLimit: opts.batchSizeLimit, batchSizeBytesLimit: opts.batchSizeBytesLimit }),
    ...defined(opts.limits ?? {}),
  };
  const timeouts: CollectorTimeouts = { ...DEFAULT_TIMEOUTS, ...defined(opts.timeouts ?? {}) };
  const largeSlots = new Slots(Math.max(1, limits.maxConcurrentLargeBodies), limits.largeBodyBudgetBytes);
  const region = opts.region ?? "us";
  const limitsOn = opts.rateLimits !== false;
  const overrides = typeof opts.rateLimits === "object" ? (opts.rateLimits.overrides ?? {}) : {};
  const limiter = opts.limiter ?? new MemoryRateLimiter();
  // Outbound webhooks: one POST per completed root run that asked for one, once per run.
  const delivery: WebhookSenderOptions = { ...opts.webhookDelivery };
  const sender = opts.webhooks ? new WebhookSender(opts.webhooks, delivery) : undefined;
  const notified = new Set<string>();
  const completed = !opts.onRunCompleted && !sender ? undefined : (run: StoredRun) => {
    opts.onRunCompleted?.(run);
    const hook = sender && webhookUrlOf(run);
    if (hook && !notified.has(run.id)) {
      notified.add(run.id);
      sender.send(hook, webhookPayload(run));
    }
  };
  const rootlessAfterMs = opts.rootlessAfterMs ?? DEFAULT_ROOTLESS_AFTER_MS;
  const sweep = rootlessAfterMs > 0 ? new RootlessSweep(store, rootlessAfterMs) : undefined;
  const retention = opts.retentionMs ? new RetentionSweep(store, opts.retentionMs) : undefined;
  const router = new Router()
    .add(
      ingestRoutes({
        store,
        version: COLLECTOR_VERSION,
        limits,
        onRunCompleted: completed,
        health: () => store.health(),
      }),
    )
    .add(queryRoutes(store))
    .add(otelRoutes(store, limits.maxJsonDepth))
    .add(deploymentRoutes(new ControlPlane(store, { buildMs: opts.deploymentBuildMs, onCreate: (d) => store.ensureProject(d.name) })))
    .add(opts.webhookToken ? webhookReceiverRoutes(store, opts.webhookToken, opts.webhookProject) : [])
    .add(viewerRoutes(store))
    .add(opts.routes ?? []);

  async function rateLimit(req: IncomingMessage, path: string, ip: string): Promise<Record<string, string>> {
    if (!limitsOn || isViewerPath(path)) return {};
    const m = matchLimit({ method: req.method ?? "GET", path, headers: req.headers, ip }, region);
    if (!m) return {};
    const o = overrides[m.rule.id];
    const limit = o?.limit ?? m.limit;
    const windowMs = o?.windowMs ?? m.windowMs;
    const r = await limiter.tryAcquire(m.key, 1, limit, windowMs);
    const headers = {
      "x-ratelimit-limit": String(limit),
      "x-ratelimit-remaining": String(r.remaining),
      "x-ratelimit-reset": String(Math.ceil(r.resetMs / 1000)),
    };
    if (!r.ok) {
      throw new HttpError(429, `rate limit exceeded: ${limit} requests per ${windowMs / 1000} s for ${m.rule.category} (${m.rule.id}); retry after ${Math.ceil(r.retryAfterMs)} ms`, {
        ...headers,
        "retry-after": String(Math.max(1, Math.ceil(r.retryAfterMs / 1000))),
      });
    }
    return headers;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://collector");
    const method = (req.method ?? "GET").toUpperCase();
    const ip = req.socket.remoteAddress ?? "unknown";
    let limitHeaders: Record<string, string> = {};
    try {
      if (closing) throw new HttpError(503, "the collector is shutting down", { "retry-after": "1" });
      // Agent servers authenticate their webhooks with the URL's token, not our API key; the viewer's
      // page and assets (no run data) load without it so the page can show its sign-in form.
      const tokenRoute = (opts.webhookToken !== undefined && url.pathname === "/webhooks/runs") || isViewerAsset(method, url.pathname);
      if (opts.apiKey !== undefined && !tokenRoute && !secretMatches(req.headers["x-api-key"] as string | undefined, opts.apiKey)) {
        throw new HttpError(401, req.headers["x-api-key"] === undefined ? "missing X-Api-Key header" : "invalid API key");
      }
      limitHeaders = await rateLimit(req, url.pathname, ip);
      const found = router.match(method, url.pathname);
      if (!found) throw new HttpError(404, `no endpoint ${method} ${url.pathname}`);
      if ("allowed" in found) throw new HttpError(405, `${method} is not allowed on ${url.pathname}; allowed: ${found.allowed.join(", ")}`, { allow: found.allowed.join(", ") });
      // One large-body slot at most per request, held until the answer is sent (the parsed body lives that long).
      let admitted: Promise<void> | undefined;
      let held = false;
      let finished = false;
      // What this request is charged in the large-body budget: its declared length (for gzip, a lower bound of
      // the decoded size), then its decoded bytes past that.
      const declared = Number(req.headers["content-length"]);
      const upFront = Number.isFinite(declared) && declared > 0 ? declared : 0;
      let charged = 0;
      res.once("close", () => {
        finished = true;
        // A large body's garbage is collected before the next one waiting is let in, so the two do not add up.
        if (held && charged >= GC_PART_CHARS) collectGarbage();
        if (held) largeSlots.release(charged);
        held = false;
      });
      const admit = () => {
        if (admitted) return admitted;
        // Waiting for a slot is the server's doing, not an idle client: no idle-socket timeout meanwhile
        // (the request timeout still bounds the whole request).
        req.socket.setTimeout(0);
        return (admitted = largeSlots.acquire(upFront).then(() => {
          req.socket.setTimeout(timeouts.idleSocketMs);
          charged = upFront;
          if (finished) largeSlots.release(charged);
          else held = true;
        }));
      };
      let stream: BodyStream | undefined;
      let body: Promise<Buffer> | undefined;
      const ctx: RequestContext = {
        method,
        path: url.pathname,
        params: found.params,
        query: url.searchParams,
        headers: req.headers,
        ip,
        req,
        stream: () => (stream ??= decodedStream(req, { maxBytes: limits.maxBodyBytes, largeBytes: limits.largeBodyBytes, admit, decoded: (total) => {
          if (!held || total <= charged) return;
          largeSlots.grow(total - charged);
          charged = total;
        } })),
        body: () => (body ??= readAll(ctx.stream())),
        parse: (text) => parseBoundedJson(text, limits.maxJsonDepth),
        json: async () => ctx.parse(await ctx.body()),
      };
      const reply = await found.handler(ctx);
      send(res, { ...reply, headers: { ...limitHeaders, ...reply.headers } });
    } catch (err) {
      if (err instanceof HttpError) {
        const capped = err.status === 422 && err.extra?.issue_count === undefined ? capDetail(err.detail, limits.maxListedIssues) : { detail: err.detail };
        send(res, { status: err.status, body: { detail: capped.detail, ...err.extra, ...capped.extra }, headers: { ...limitHeaders, ...err.headers } });
      } else if (err instanceof StoreUnavailableError) {
        // The database is away or saturated: nothing was stored, and the same request may come again.
        send(res, { status: 503, body: { detail: err.message }, headers: { ...limitHeaders, "retry-after": String(STORE_RETRY_AFTER_S) } });
      } else if ((err as Error)?.name === "RangeError" && /call stack/i.test((err as Error).message)) {
        // Should not happen with the depth bound in place; if it does, it is the request's fault, not a crash.
        send(res, { status: 422, body: { detail: [{ loc: [], msg: "the request is nested too deeply to process", type: "json_depth" }] }, headers: limitHeaders });
      } else {
        console.error(`tracepipe serve: ${method} ${url.pathname} failed:`, err);
        send(res, { status: 500, body: { detail: "internal error; see the collector's log" } });
      }
      // An error answered before the body was read: drain it so the connection stays usable.
      if (!req.complete) req.resume();
    }
  }

  let closing = false;
  // Slow or silent clients do not hold connections (README "Collector limits"): headers and whole
  // requests have deadlines (408), idle keep-alive connections close, and a socket with no
  // traffic at all is dropped. Node checks the first two every connectionsCheckingInterval.
  const requestMs = Math.max(timeouts.requestMs, timeouts.headersMs);
  const server = createServer(
    {
      headersTimeout: timeouts.headersMs,
      requestTimeout: requestMs,
      keepAliveTimeout: timeouts.keepAliveMs,
      connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(timeouts.headersMs / 4))),
    },
    (req, res) => {
      handle(req, res).catch((err) => {
        console.error("tracepipe serve: unhandled", err);
        if (!res.headersSent) send(res, { status: 500, body: { detail: "internal error" } });
      });
    },
  );
  server.on("connection", (socket) => {
    // With no 'timeout' listener on the server, node:http destroys a socket that times out.
    socket.setTimeout(timeouts.idleSocketMs);
  });

  return {
    server,
    store,
    webhooks: sender,
    bodies: () => ({ large: largeSlots.inUse, bytes: largeSlots.bytesCharged, waiting: largeSlots.waiting }),
    sweepRootless: () => sweep?.sweep() ?? Promise.resolve(),
    listen(port = 8484, host = "127.0.0.1") {
      return new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => {
          server.off("error", reject);
          const addr = server.address() as AddressInfo;
          const h = addr.family === "IPv6" ? `[${addr.address}]` : addr.address;
          const self = `http://${h}:${addr.port}`;
          delivery.baseUrl ??= self; // relative webhook URLs call back into this server
          resolve({ port: addr.port, url: self });
        });
      });
    },
    close() {
      closing = true;
      return new Promise((resolve, reject) => {
        server.close(() => {
          // A sweep under way finishes its trace (a prune its slice) before the store closes under it.
          void Promise.all([sweep?.stop(), retention?.stop()])
            .then(() => (ownStore ? store.close() : undefined))
            .then(() => resolve(), reject);
        });
        server.closeAllConnections();
      });
    },
  };
}
