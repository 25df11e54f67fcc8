/**
 * The local collector: the service side of SPEC, over node:http and a store
 * (store/open.ts: a SQLite file by default). createCollector composes; each
 * concern is a module of its own (middleware/, routes/, webhooks/completion.ts).
 *
 *   const c = await createCollector({ db: ".tracepipe/traces.db" });
 *   const { url } = await c.listen(8484);
 */
import { dbPathFrom } from "../env.js";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { sendReply, type Route } from "./http.js";
import { Router } from "./router.js";
import { collectorLimits, collectorTimeouts, type CollectorLimits, type CollectorTimeouts } from "./limits.js";
import { openStore } from "../store/open.js";
import type { Store } from "../store/contract/store.js";
import type { StoredRun } from "../store/contract/runs.js";
import { ingestRoutes } from "./routes/ingest.js";
import { queryRoutes } from "./routes/query.js";
import { otelRoutes } from "./routes/otel.js";
import { RootlessSweep } from "../otlp/sweep.js";
import { DEFAULT_ROOTLESS_AFTER_MS } from "../otlp/trace.js";
import { RetentionSweep } from "./retention.js";
import { deploymentRoutes } from "./routes/deployments.js";
import { ControlPlane } from "../control/service.js";
import { webhookReceiverRoutes } from "./routes/webhooks.js";
import { isViewerAsset, isViewerPath, viewerRoutes } from "./viewer/routes.js";
import type { WebhookConfig } from "../webhooks/config.js";
import { WebhookSender, type WebhookSenderOptions } from "../webhooks/sender.js";
import { WebhookDeliveryLoop, type WebhookDeliveryOptions } from "./webhook-delivery.js";
import { webhookDeliveryRoutes } from "./routes/webhook-deliveries.js";
import { ConfigError } from "../errors.js";
import { MemoryRateLimiter, type RateLimiter } from "../ratelimit/limiter.js";
import type { Region } from "../ratelimit/match.js";
import { compose, exchangeOf } from "./middleware/compose.js";
import { errors } from "./middleware/errors.js";
import { refuseWhileClosing } from "./middleware/shutdown.js";
import { apiKeyAuth } from "./middleware/auth.js";
import { rateLimit } from "./middleware/rate-limit.js";
import { bodyAdmission, LargeBodySlots } from "./middleware/body-admission.js";
import { dispatch } from "./middleware/context.js";
import { InFlightBudget, inFlight } from "./middleware/in-flight.js";
import { dropIdleSockets, serverTimeouts } from "./middleware/timeouts.js";

export const COLLECTOR_VERSION = "0.1.0";

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
  /** Connection timeouts; see CollectorTimeouts and DEFAULT_TIMEOUTS (headers 20 s, request 120 s, keep-alive 5 s, idle socket 30 s, drain on close 10 s). */
  timeouts?: Partial<CollectorTimeouts>;
  /** Extra endpoint groups (deployments, webhooks). */
  routes?: Route[];
  /** Outbound run-completion webhooks (graph.json's `webhooks` / `http`, see loadWebhookConfig). */
  webhooks?: WebhookConfig;
  /**
   * Delivery of outbound webhooks through the store's outbox (server/webhook-delivery.ts): timeout,
   * attempts, backoff, polling. Receivers inside private networks are opened by graph.json's
   * `webhooks.url.allowed_networks`, not here.
   */
  webhookDelivery?: WebhookSenderOptions & WebhookDeliveryOptions;
  /** Accept agent-server webhooks at POST /webhooks/runs?token=<this>; they become trace runs. */
  webhookToken?: string;
  /** Project of runs received by webhook (default `agent-server`). */
  webhookProject?: string;
  /** How long the control plane's simulated builds take before a revision is DEPLOYED, ms (default 1500). */
  deploymentBuildMs?: number;
  /** The clock the control plane's simulated builds age by, ms since the epoch (default Date.now). */
  deploymentClock?: () => number;
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
  /** Between retention's prunes, ms (default an hour). */
  retentionIntervalMs?: number;
  /** Where the collector says what its background work did (a prune's result); silent by default. */
  log?: (line: string) => void;
}

export interface Collector {
  server: Server;
  store: Store;
  /** The outbound webhook delivery loop, when webhooks are configured and enabled. */
  webhooks?: WebhookDeliveryLoop;
  /** Large bodies being read or held now, the bytes they are charged in the large-body budget, and requests waiting for a large-body slot. */
  bodies(): { large: number; bytes: number; waiting: number };
  /** Requests in flight now, and how many were refused as over limits.maxInFlight since start. */
  requests(): { inFlight: number; refused: number };
  /** The bound on requests in flight (limits.maxInFlight), for the collector's other receivers (OTLP/gRPC) to share. */
  inFlightBudget: InFlightBudget;
  /** Convert now the OTLP traces without a root that have been quiet for rootlessAfterMs (the sweep does it on its own every so often). */
  sweepRootless(): Promise<void>;
  listen(port?: number, host?: string): Promise<{ port: number; url: string }>;
  close(): Promise<void>;
}

export async function createCollector(opts: CollectorOptions = {}): Promise<Collector> {
  const ownStore = typeof opts.db !== "object";
  const webhooksOn = opts.webhooks?.enabled === true;
  // The outbox row is written by the store in the transaction that completes the run: it must know webhooks are on.
  const store = typeof opts.db === "object" ? opts.db : await openStore(dbPathFrom(opts.db), { webhookOutbox: webhooksOn });
  if (webhooksOn && !store.writesWebhookOutbox) {
    throw new ConfigError([
      {
        loc: ["db"],
        msg: "webhooks are configured, but the store was opened without webhookOutbox: open it with openStore(target, { webhookOutbox: true })",
        type: "value_error",
      },
    ]);
  }
  const limits = collectorLimits(opts);
  const timeouts = collectorTimeouts(opts.timeouts);
  const largeBodies = new LargeBodySlots(Math.max(1, limits.maxConcurrentLargeBodies), limits.largeBodyBudgetBytes);
  const delivery: WebhookSenderOptions = { ...opts.webhookDelivery };
  const webhooks = webhooksOn ? new WebhookDeliveryLoop(store, new WebhookSender(opts.webhooks!, delivery), delivery) : undefined;
  const limiter = opts.limiter ?? new MemoryRateLimiter();
  const inFlightBudget = new InFlightBudget(limits.maxInFlight);
  const busy = inFlight({ budget: inFlightBudget, exempt: (method, path) => method === "GET" && path === "/info" });
  const rootlessAfterMs = opts.rootlessAfterMs ?? DEFAULT_ROOTLESS_AFTER_MS;
  const sweep = rootlessAfterMs > 0 ? new RootlessSweep(store, rootlessAfterMs) : undefined;
  const retention = opts.retentionMs
    ? new RetentionSweep(store, opts.retentionMs, { intervalMs: opts.retentionIntervalMs, log: opts.log })
    : undefined;
  const router = new Router()
    .add(
      ingestRoutes({
        store,
        version: COLLECTOR_VERSION,
        limits,
        rateLimits: { enabled: opts.rateLimits !== false, scope: limiter.scope ?? "process", region: opts.region ?? "us" },
        onRunCompleted: opts.onRunCompleted,
        onRootsCompleted: webhooks && (() => webhooks.wake()),
        health: () => store.health(),
      }),
    )
    .add(queryRoutes(store))
    .add(webhookDeliveryRoutes(store))
    .add(otelRoutes(store, limits.maxJsonDepth))
    .add(
      deploymentRoutes(
        new ControlPlane(store, {
          buildMs: opts.deploymentBuildMs,
          now: opts.deploymentClock,
          onCreate: (d) => store.ensureProject(d.name),
        }),
      ),
    )
    .add(opts.webhookToken ? webhookReceiverRoutes(store, opts.webhookToken, opts.webhookProject) : [])
    .add(viewerRoutes(store))
    .add(opts.routes ?? []);

  let closing = false;
  const handle = compose(
    [
      errors({ maxListedIssues: limits.maxListedIssues }),
      refuseWhileClosing(() => closing),
      busy,
      // Agent servers authenticate their webhooks with the URL's token, not our API key; the viewer's
      // page and assets (no run data) load without it so the page can show its sign-in form.
      apiKeyAuth({
        apiKey: opts.apiKey,
        exempt: (method, path) => (opts.webhookToken !== undefined && path === "/webhooks/runs") || isViewerAsset(method, path),
      }),
      ...(opts.rateLimits === false
        ? []
        : [
            rateLimit({
              limiter,
              region: opts.region ?? "us",
              overrides: typeof opts.rateLimits === "object" ? opts.rateLimits.overrides : undefined,
              skip: isViewerPath,
            }),
          ]),
      bodyAdmission({
        slots: largeBodies,
        maxBodyBytes: limits.maxBodyBytes,
        largeBodyBytes: limits.largeBodyBytes,
        idleSocketMs: timeouts.idleSocketMs,
      }),
    ],
    dispatch(router, { maxJsonDepth: limits.maxJsonDepth }),
  );

  const server = createServer(serverTimeouts(timeouts), (req, res) => {
    handle(exchangeOf(req, res))
      .then((reply) => sendReply(res, reply))
      .catch((err) => {
        console.error("tracepipe serve: unhandled", err);
        if (!res.headersSent) sendReply(res, { status: 500, body: { detail: "internal error" } });
      });
  });
  dropIdleSockets(server, timeouts.idleSocketMs);

  return {
    server,
    store,
    webhooks,
    bodies: () => ({ large: largeBodies.inUse, bytes: largeBodies.bytesCharged, waiting: largeBodies.waiting }),
    requests: () => ({ inFlight: busy.gauge.inFlight, refused: busy.gauge.refused }),
    inFlightBudget,
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
          webhooks?.start();
          resolve({ port: addr.port, url: self });
        });
      });
    },
    close() {
      closing = true;
      return new Promise((resolve, reject) => {
        // Requests under way are answered, not reset (a rolling restart behind a load balancer would
        // otherwise fail every upload it caught); new ones get the 503 above. A connection is closed
        // once it is idle, which for a keep-alive one is after its answer: Node leaves those open, so
        // idle ones are looked for until the last is gone or the drain's time is up.
        const drain = setInterval(() => server.closeIdleConnections(), 25);
        const cut = setTimeout(() => server.closeAllConnections(), timeouts.drainMs);
        server.close(() => {
          clearInterval(drain);
          clearTimeout(cut);
          // A sweep under way finishes its trace (a prune its slice) before the store closes under it.
          void Promise.all([sweep?.stop(), retention?.stop(), webhooks?.stop()])
            .then(() => (ownStore ? store.close() : undefined))
            .then(() => resolve(), reject);
        });
        server.closeIdleConnections();
      });
    },
  };
}
