/** `tracepipe serve`: the local collector (DESIGN "CLI"). */
import { dbPathFrom, envValue } from "../env.js";
import { type Command, InvalidArgumentError, Option } from "commander";
import { readFileSync } from "node:fs";
import { createCollector } from "../server/app.js";
import { ConfigError } from "../errors.js";
import { loadWebhookConfig, type WebhookConfig } from "../webhooks/config.js";

function int(name: string) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`${name} must be a non-negative integer`);
    return n;
  };
}

export interface ServeOptions {
  port: number;
  host: string;
  db: string;
  apiKey?: string;
  region: "us" | "eu";
  rateLimit: boolean;
  maxBodyBytes: number;
  graphConfig?: string;
  webhookToken?: string;
  buildMs: number;
}

export function register(program: Command): void {
  program
    .command("serve")
    .summary("run the local collector (ingest API over SQLite)")
    .description(
      "Run the local collector: the ingest endpoints of SPEC over a SQLite file.\n" +
        "Endpoints: GET /info, POST /runs/multipart, POST /runs/batch, POST /runs, PATCH /runs/:id, GET /runs/:id,\n" +
        "POST /runs/query, DELETE /sessions?name=P, POST /otel/v1/traces (OTLP JSON or protobuf),\n" +
        "POST/GET/PATCH /v2/deployments[/:id[/revisions/:revision_id]], and with --webhook-token POST /webhooks/runs.\n" +
        "With --graph-config, completed root runs whose metadata names a `webhook` URL are POSTed there (SPEC §6).\n" +
        "SPEC §8's rate limits are enforced per identity key (429 with Retry-After) unless --no-rate-limit.",
    )
    .option("-p, --port <port>", "TCP port (0 picks a free one)", int("--port"), 8484)
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .option("--db <path>", "SQLite file (':memory:' keeps nothing)", dbPathFrom(undefined))
    .option("--api-key <key>", "require this X-Api-Key on every request (default TRACEPIPE_API_KEY)", envValue("TRACEPIPE_API_KEY", process.env, { fallback: false }))
    .addOption(new Option("--region <region>", "which SPEC §8 column to enforce where US and EU differ").choices(["us", "eu"]).default("us"))
    .option("--no-rate-limit", "disable SPEC §8 rate limits (bulk local loads)")
    .option("--max-body-bytes <n>", "largest request body accepted, raw or decompressed (413 above)", int("--max-body-bytes"), 64 * 1024 * 1024)
    .option("--graph-config <path>", "graph.json whose `webhooks` and `http` sections configure outbound webhooks")
    .option("--webhook-token <token>", "accept agent-server run webhooks at POST /webhooks/runs?token=<token>", envValue("TRACEPIPE_WEBHOOK_TOKEN"))
    .option("--build-ms <ms>", "how long simulated deployment builds take", int("--build-ms"), 1500)
    .action(async (opts: ServeOptions) => {
      let webhooks: WebhookConfig | undefined;
      if (opts.graphConfig) {
        try {
          webhooks = loadWebhookConfig(JSON.parse(readFileSync(opts.graphConfig, "utf8")));
        } catch (err) {
          // A missing header variable (or any other problem) blocks start-up, each one named.
          const issues = err instanceof ConfigError ? err.issues : [{ loc: ["--graph-config"], msg: (err as Error).message, type: "value_error" }];
          for (const i of issues) process.stderr.write(`tracepipe serve: ${opts.graphConfig}: ${i.loc.join(".")}: ${i.msg}\n`);
          process.exitCode = 2;
          return;
        }
      }
      const collector = createCollector({ db: opts.db, apiKey: opts.apiKey, region: opts.region, rateLimits: opts.rateLimit, maxBodyBytes: opts.maxBodyBytes, webhooks, webhookToken: opts.webhookToken, deploymentBuildMs: opts.buildMs });
      const { url } = await collector.listen(opts.port, opts.host);
      console.log(`tracepipe collector listening on ${url} (db ${opts.db}${opts.apiKey ? ", API key required" : ""}${opts.rateLimit ? `, SPEC §8 limits (${opts.region})` : ", no rate limits"})`);
      const stop = async (signal: string) => {
        console.log(`tracepipe collector: ${signal}, closing`);
        await collector.close();
        process.exit(0);
      };
      process.once("SIGINT", () => void stop("SIGINT"));
      process.once("SIGTERM", () => void stop("SIGTERM"));
    });
}
