/** `tracepipe serve`: the local collector (DESIGN "CLI"). */
import { type Command, InvalidArgumentError, Option } from "commander";
import { createCollector } from "../server/app.js";

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
}

export function register(program: Command): void {
  program
    .command("serve")
    .summary("run the local collector (ingest API over SQLite)")
    .description(
      "Run the local collector: the ingest endpoints of SPEC over a SQLite file.\n" +
        "Endpoints: GET /info, POST /runs/multipart, POST /runs/batch, POST /runs, PATCH /runs/:id, GET /runs/:id,\n" +
        "POST /runs/query, DELETE /sessions?name=P, POST /otel/v1/traces (OTLP JSON or protobuf).\n" +
        "SPEC §8's rate limits are enforced per identity key (429 with Retry-After) unless --no-rate-limit.",
    )
    .option("-p, --port <port>", "TCP port (0 picks a free one)", int("--port"), 8484)
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .option("--db <path>", "SQLite file (':memory:' keeps nothing)", process.env.TRACEPIPE_DB ?? ".tracepipe/traces.db")
    .option("--api-key <key>", "require this X-Api-Key on every request", process.env.TRACEPIPE_API_KEY)
    .addOption(new Option("--region <region>", "which SPEC §8 column to enforce where US and EU differ").choices(["us", "eu"]).default("us"))
    .option("--no-rate-limit", "disable SPEC §8 rate limits (bulk local loads)")
    .option("--max-body-bytes <n>", "largest request body accepted, raw or decompressed (413 above)", int("--max-body-bytes"), 64 * 1024 * 1024)
    .action(async (opts: ServeOptions) => {
      const collector = createCollector({ db: opts.db, apiKey: opts.apiKey, region: opts.region, rateLimits: opts.rateLimit, maxBodyBytes: opts.maxBodyBytes });
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
