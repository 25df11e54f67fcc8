/** `tracepipe serve`: the local collector (DESIGN "CLI"). */
import { DEFAULT_DB_PATH, envValue, storeTargetFrom } from "../env.js";
import { type Command, InvalidArgumentError, Option } from "commander";
import { readFileSync } from "node:fs";
import { createCollector } from "../server/app.js";
import { openStore } from "../store/open.js";
import type { Store } from "../store/contract/store.js";
import { parseDuration } from "./duration.js";
import { ConfigError } from "../errors.js";
import { PRICES_OPTION_HELP, usePriceFile } from "./prices.js";
import { loadWebhookConfig, type WebhookConfig } from "../webhooks/config.js";
import { DEFAULT_LIMITS, DEFAULT_TIMEOUTS } from "../server/limits.js";
import { DEFAULT_STORE_CONNECTIONS, DEFAULT_STORE_MAX_WAITING } from "../store/postgres/pool-defaults.js";
import { DEFAULT_ROOTLESS_AFTER_MS } from "../otlp/trace.js";
import { MemoryRateLimiter, type RateLimiter } from "../ratelimit/limiter.js";
import { DEFAULT_WEBHOOK_TIMEOUT_MS } from "../webhooks/sender.js";
import { DEFAULT_MAX_ATTEMPTS } from "../server/webhook-delivery.js";
import { RETENTION_INTERVAL_MS } from "../server/retention.js";

function int(name: string) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`${name} must be a non-negative integer`);
    return n;
  };
}

export interface ServeOptions {
  /** A price file (--prices), else TRACEPIPE_PRICES. */
  prices?: string;
  port: number;
  host: string;
  db?: string;
  store?: string;
  /** Milliseconds (--retention 30d). */
  retention?: number;
  /** Milliseconds between prunes. */
  retentionInterval: number;
  apiKey?: string;
  region: "us" | "eu";
  rateLimit: boolean;
  maxBodyBytes: number;
  batchSizeLimit: number;
  maxJsonDepth: number;
  maxConcurrentLargeBodies: number;
  /** Unset: TRACEPIPE_LARGE_BODY_BUDGET_BYTES, else the default. */
  largeBodyBudgetBytes?: number;
  headersTimeout: number;
  requestTimeout: number;
  drainTimeout: number;
  keepAliveTimeout: number;
  idleTimeout: number;
  graphConfig?: string;
  webhookToken?: string;
  webhookTimeout: number;
  webhookAttempts: number;
  webhookBackoff: number;
  buildMs: number;
  rootlessAfter: number;
  /** Unset: no OTLP/gRPC receiver. */
  otlpGrpcPort?: number;
  /** A redis:// URL: the SPEC §8 limits counted together with every collector given the same one. */
  rateLimiter?: string;
  maxInFlight: number;
  storeConnections: number;
  storeMaxWaiting: number;
}

/**
 * The large-body budget: the flag, else TRACEPIPE_LARGE_BODY_BUDGET_BYTES, else
 * undefined (the collector's default). The variable is checked like the flag:
 * a typo must not silently mean the default.
 */
export function largeBodyBudget(flag: number | undefined, env: NodeJS.ProcessEnv = process.env): number | undefined {
  if (flag !== undefined) return flag;
  const v = envValue("TRACEPIPE_LARGE_BODY_BUDGET_BYTES", env);
  if (v === undefined) return undefined;
  const n = Number(v.trim());
  if (!Number.isInteger(n) || n < 0) {
    throw new ConfigError([
      {
        loc: ["TRACEPIPE_LARGE_BODY_BUDGET_BYTES"],
        msg: `must be a non-negative integer (bytes), not ${JSON.stringify(v)}`,
        type: "int_parsing",
      },
    ]);
  }
  return n;
}

export function register(program: Command): void {
  program
    .command("serve")
    .summary("run the local collector (ingest API over SQLite or PostgreSQL)")
    .description(
      [
        "Run the local collector: the ingest API (docs/collector-api.md) over a SQLite file, or over PostgreSQL with --store (several collectors may share one database; docs/deploy.md).",
        "Endpoints: GET /info, POST /runs/multipart, POST /runs/batch, POST /runs, PATCH /runs/:id, GET /runs/:id, POST /runs/query, DELETE /sessions?name=P, POST /otel/v1/traces and /otel/v1/logs, also as /v1/traces and /v1/logs (OTLP JSON or protobuf; gzip), POST, GET and PATCH on /v2/deployments, /v2/deployments/:id and /v2/deployments/:id/revisions/:revision_id, and with --webhook-token POST /webhooks/runs.",
        "With --graph-config, completed root runs whose metadata names a `webhook` URL are POSTed there, through an outbox in the store: once per run across collectors sharing a store and across restarts, retried with backoff; GET /runs/:id/webhooks shows each attempt (docs/webhooks.md).",
        "The hosted API's rate limits (docs/rate-limits.md) are enforced per caller (429 with Retry-After) unless --no-rate-limit.",
        `Limits (docs/collector-api.md "Limits"): bodies up to --max-body-bytes (413); batches up to --batch-size-limit runs and, with more than one run, ${DEFAULT_LIMITS.batchSizeBytesLimit} bytes (413, the client splits); JSON nested up to --max-json-depth (422); a 422 lists the first ${DEFAULT_LIMITS.maxListedIssues} problems and counts the rest; bodies over ${DEFAULT_LIMITS.largeBodyBytes} bytes are read at most --max-concurrent-large-bodies at a time, and while their bytes together stay within --large-body-budget-bytes (one alone always runs; the others wait; without the flag, TRACEPIPE_LARGE_BODY_BUDGET_BYTES sets it); slow clients meet the timeouts below (408 or closed).`,
      ].join("\n\n"),
    )
    .option("-p, --port <port>", "TCP port (0 picks a free one)", int("--port"), 8484)
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .option("--db <path>", `SQLite file (':memory:' keeps nothing; default TRACEPIPE_DB, else ${DEFAULT_DB_PATH})`)
    .option(
      "--store <url>",
      "keep everything in PostgreSQL at this postgres:// URL, shared by every collector given it (default TRACEPIPE_STORE_URL; docs/deploy.md)",
    )
    .option(
      "--retention <duration>",
      "remove traces older than this every hour: 30d, 12h, 90m or 2w (default: keep everything)",
      parseDuration("--retention"),
    )
    .option(
      "--retention-interval <ms>",
      "with --retention: prune this often; collectors sharing one PostgreSQL store prune one at a time",
      int("--retention-interval"),
      RETENTION_INTERVAL_MS,
    )
    .option(
      "--api-key <key>",
      "require this X-Api-Key on every request (default TRACEPIPE_API_KEY)",
      envValue("TRACEPIPE_API_KEY", process.env, { fallback: false }),
    )
    .addOption(
      new Option("--region <region>", "which region's rate limits to enforce where US and EU differ").choices(["us", "eu"]).default("us"),
    )
    .option("--no-rate-limit", "disable the rate limits (bulk local loads)")
    .option(
      "--max-body-bytes <n>",
      "largest request body accepted, raw or decompressed (413 above)",
      int("--max-body-bytes"),
      64 * 1024 * 1024,
    )
    .option(
      "--batch-size-limit <n>",
      "most runs per batch or multipart request, advertised in GET /info (413 above)",
      int("--batch-size-limit"),
      DEFAULT_LIMITS.batchSizeLimit,
    )
    .option(
      "--max-json-depth <n>",
      "deepest nesting of objects and arrays in a JSON body or part (422 above)",
      int("--max-json-depth"),
      DEFAULT_LIMITS.maxJsonDepth,
    )
    .option(
      "--max-concurrent-large-bodies <n>",
      "large bodies read at once; later ones wait",
      int("--max-concurrent-large-bodies"),
      DEFAULT_LIMITS.maxConcurrentLargeBodies,
    )
    .option(
      "--large-body-budget-bytes <n>",
      `bytes of large bodies held at once (declared length, or decoded so far); a large body waits while the others leave no room for it (default: the variable named above, else ${DEFAULT_LIMITS.largeBodyBudgetBytes})`,
      int("--large-body-budget-bytes"),
    )
    .option("--headers-timeout <ms>", "time to receive a request's headers (408)", int("--headers-timeout"), DEFAULT_TIMEOUTS.headersMs)
    .option("--request-timeout <ms>", "time to receive a whole request (408)", int("--request-timeout"), DEFAULT_TIMEOUTS.requestMs)
    .option(
      "--drain-timeout <ms>",
      "on SIGTERM/SIGINT, how long requests under way are given to be answered before their connections are cut",
      int("--drain-timeout"),
      DEFAULT_TIMEOUTS.drainMs,
    )
    .option(
      "--keep-alive-timeout <ms>",
      "idle keep-alive connections close after this",
      int("--keep-alive-timeout"),
      DEFAULT_TIMEOUTS.keepAliveMs,
    )
    .option(
      "--idle-timeout <ms>",
      "a connection with no traffic at all closes after this",
      int("--idle-timeout"),
      DEFAULT_TIMEOUTS.idleSocketMs,
    )
    .option("--graph-config <path>", "graph.json whose `webhooks` and `http` sections configure outbound webhooks")
    .option(
      "--webhook-token <token>",
      "accept agent-server run webhooks at POST /webhooks/runs, with the token as ?token=<token>",
      envValue("TRACEPIPE_WEBHOOK_TOKEN"),
    )
    .option(
      "--webhook-timeout <ms>",
      "an outbound webhook attempt that has no answer within this is retried",
      int("--webhook-timeout"),
      DEFAULT_WEBHOOK_TIMEOUT_MS,
    )
    .option(
      "--webhook-attempts <n>",
      "attempts per outbound webhook, the first included, before it is marked failed",
      int("--webhook-attempts"),
      DEFAULT_MAX_ATTEMPTS,
    )
    .option(
      "--webhook-backoff <ms>",
      "the first retry of an outbound webhook comes after half to all of this; each further one waits twice as long (at most 5 min)",
      int("--webhook-backoff"),
      1000,
    )
    .option("--build-ms <ms>", "how long simulated deployment builds take", int("--build-ms"), 1500)
    .option(
      "--rootless-after <ms>",
      "an OTLP trace whose root span has not come (its parent is in a process that exports elsewhere and did not flag it remote, or died) is made into runs as it is once no span of it has come for this long; 0 waits for the root",
      int("--rootless-after"),
      DEFAULT_ROOTLESS_AFTER_MS,
    )
    .option(
      "--otlp-grpc-port <n>",
      "also receive OTLP over gRPC (traces and logs) on this port, 4317 by convention; off unless given",
      int("--otlp-grpc-port"),
    )
    .option("--prices <file>", PRICES_OPTION_HELP)
    .option(
      "--rate-limiter <url>",
      "count the rate limits in Redis at this redis:// URL, together with every collector given the same one (default: each collector counts alone; GET /info rate_limits.scope says which)",
    )
    .option(
      "--max-in-flight <n>",
      "requests handled at once (GET /info aside); past it 503 with Retry-After instead of a queue; 0: no bound",
      int("--max-in-flight"),
      DEFAULT_LIMITS.maxInFlight,
    )
    .option(
      "--store-connections <n>",
      "PostgreSQL connections this collector opens at most (--store only)",
      int("--store-connections"),
      DEFAULT_STORE_CONNECTIONS,
    )
    .option(
      "--store-max-waiting <n>",
      "requests that may wait for a PostgreSQL connection; past it 503 with Retry-After (--store only)",
      int("--store-max-waiting"),
      DEFAULT_STORE_MAX_WAITING,
    )
    .action(async (opts: ServeOptions) => {
      try {
        usePriceFile(opts.prices);
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        for (const i of err.issues) process.stderr.write(`tracepipe serve: ${i.loc.join(".")}: ${i.msg}\n`);
        process.exitCode = 2;
        return;
      }
      let webhooks: WebhookConfig | undefined;
      if (opts.graphConfig) {
        try {
          webhooks = loadWebhookConfig(JSON.parse(readFileSync(opts.graphConfig, "utf8")));
        } catch (err) {
          // A missing header variable (or any other problem) blocks start-up, each one named.
          const issues =
            err instanceof ConfigError ? err.issues : [{ loc: ["--graph-config"], msg: (err as Error).message, type: "value_error" }];
          for (const i of issues) process.stderr.write(`tracepipe serve: ${opts.graphConfig}: ${i.loc.join(".")}: ${i.msg}\n`);
          process.exitCode = 2;
          return;
        }
      }
      let largeBodyBudgetBytes: number | undefined;
      try {
        largeBodyBudgetBytes = largeBodyBudget(opts.largeBodyBudgetBytes);
      } catch (err) {
        for (const i of (err as ConfigError).issues) process.stderr.write(`tracepipe serve: ${i.loc.join(".")}: ${i.msg}\n`);
        process.exitCode = 2;
        return;
      }
      if (opts.db !== undefined && opts.store !== undefined) {
        process.stderr.write("tracepipe serve: give --db or --store, not both\n");
        process.exitCode = 2;
        return;
      }
      let store: Store;
      try {
        // The store writes the webhook outbox in the transaction that completes a run, when webhooks are on.
        store = await openStore(storeTargetFrom(opts), {
          max: Math.max(1, opts.storeConnections),
          maxWaiting: opts.storeMaxWaiting,
          webhookOutbox: webhooks?.enabled === true,
        });
      } catch (err) {
        // A database that cannot be reached or is newer than this tracepipe: said in one line, exit 2.
        process.stderr.write(`tracepipe serve: ${(err as Error).message}\n`);
        process.exitCode = 2;
        return;
      }
      // The gRPC receiver shares the HTTP side's limiter: one budget per key whichever way it sends.
      let limiter: RateLimiter = new MemoryRateLimiter();
      let closeLimiter = async (): Promise<void> => undefined;
      if (opts.rateLimiter) {
        if (!/^rediss?:\/\//.test(opts.rateLimiter)) {
          process.stderr.write(
            `tracepipe serve: --rate-limiter must be a redis:// or rediss:// URL, not ${JSON.stringify(opts.rateLimiter)}\n`,
          );
          await store.close();
          process.exitCode = 2;
          return;
        }
        // Loaded only now: ioredis is for deployments that share limits.
        const { RedisRateLimiter } = await import("../ratelimit/redis.js");
        const shared = new RedisRateLimiter(opts.rateLimiter, { log: (line) => console.error(`tracepipe serve: ${line}`) });
        limiter = shared;
        closeLimiter = () => shared.close();
      }
      const collector = await createCollector({
        db: store,
        retentionMs: opts.retention,
        retentionIntervalMs: opts.retentionInterval,
        log: (line) => console.log(line),
        limiter,
        apiKey: opts.apiKey,
        region: opts.region,
        rateLimits: opts.rateLimit,
        limits: {
          maxBodyBytes: opts.maxBodyBytes,
          batchSizeLimit: opts.batchSizeLimit,
          maxJsonDepth: opts.maxJsonDepth,
          maxConcurrentLargeBodies: opts.maxConcurrentLargeBodies,
          largeBodyBudgetBytes,
          maxInFlight: opts.maxInFlight,
        },
        timeouts: {
          headersMs: opts.headersTimeout,
          requestMs: opts.requestTimeout,
          drainMs: opts.drainTimeout,
          keepAliveMs: opts.keepAliveTimeout,
          idleSocketMs: opts.idleTimeout,
        },
        webhooks,
        webhookToken: opts.webhookToken,
        webhookDelivery: {
          timeoutMs: opts.webhookTimeout,
          maxAttempts: Math.max(1, opts.webhookAttempts),
          backoff: { baseMs: Math.max(1, opts.webhookBackoff), maxMs: 300_000 },
        },
        deploymentBuildMs: opts.buildMs,
        rootlessAfterMs: opts.rootlessAfter,
      });
      const { url } = await collector.listen(opts.port, opts.host);
      console.log(
        `tracepipe collector listening on ${url} (store ${store.target}${opts.retention ? `, retention ${Math.round(opts.retention / 3_600_000)} h` : ""}${opts.apiKey ? ", API key required" : ""}${opts.rateLimit ? `, ${opts.region.toUpperCase()} rate limits${opts.rateLimiter ? " shared through Redis" : " counted by this collector alone"}` : ", no rate limits"})`,
      );
      console.log(`trace viewer: ${url}/`);
      let grpc: { close(): Promise<void> } | undefined;
      if (opts.otlpGrpcPort !== undefined) {
        try {
          // Loaded only now: @grpc/grpc-js costs start-up time nobody without the flag should pay.
          const { startOtlpGrpc } = await import("../server/otlp-grpc.js");
          const g = await startOtlpGrpc(opts.otlpGrpcPort, opts.host, {
            store: collector.store,
            apiKey: opts.apiKey,
            maxMessageBytes: opts.maxBodyBytes,
            maxJsonDepth: opts.maxJsonDepth,
            rateLimits: opts.rateLimit ? { limiter, region: opts.region } : undefined,
            inFlight: collector.inFlightBudget,
          });
          grpc = g;
          console.log(`OTLP/gRPC receiver listening on ${opts.host}:${g.port}`);
        } catch (err) {
          process.stderr.write(`tracepipe serve: --otlp-grpc-port ${opts.otlpGrpcPort}: ${(err as Error).message}\n`);
          await collector.close();
          process.exitCode = 2;
          return;
        }
      }
      const stop = async (signal: string) => {
        console.log(`tracepipe collector: ${signal}, closing`);
        await grpc?.close();
        await collector.close();
        await store.close();
        await closeLimiter().catch(() => undefined);
        process.exit(0);
      };
      process.once("SIGINT", () => void stop("SIGINT"));
      process.once("SIGTERM", () => void stop("SIGTERM"));
    });
}
