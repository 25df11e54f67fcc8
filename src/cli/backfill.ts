/** `tracepipe backfill`: historical LLM logs -> runs -> the sink (DESIGN "CLI"). */
import { dbPathFrom, deadLetterPathFor } from "../env.js";
import { envValue } from "../env.js";
import { type Command, InvalidArgumentError, Option } from "commander";
import { checkAccess } from "../backfill/access.js";
import { DEFAULT_MAX_LINE_BYTES } from "../backfill/lines.js";
import { backfill } from "../backfill/pipeline.js";
import { FORMATS, type FormatName } from "../backfill/formats.js";
import { createProgress, printSummary } from "../backfill/progress.js";
import { Client } from "../ingest/client.js";
import { resolveOptions } from "../ingest/config.js";
import { HttpSink } from "../ingest/http-sink.js";
import { MemoryRateLimiter } from "../ratelimit/limiter.js";
import { loadCheckpoint } from "../backfill/checkpoint.js";
import { KeyGuardSink, keyRevokedError } from "../backfill/key-guard.js";
import { RedisRateLimiter } from "../ratelimit/redis.js";
import { InputError, ValidationError } from "../errors.js";
import { PRICES_OPTION_HELP, usePriceFile } from "./prices.js";
import { EXIT_INVALID, EXIT_OK, EXIT_USAGE } from "./exit.js";
import { expandFileArgs } from "./files.js";
import { positiveInt } from "./options.js";

/** Ctrl-C: the run stopped cleanly at a checkpoint; rerunning the command resumes. */
export const EXIT_INTERRUPTED = 130;

function shard(v: string): { index: number; count: number } {
  const m = /^(\d+)\/(\d+)$/.exec(v.trim());
  if (!m) throw new InvalidArgumentError("expected i/n, e.g. 0/4");
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (count < 1 || index >= count) throw new InvalidArgumentError(`expected 0 <= i < n, got ${index}/${count}`);
  return { index, count };
}

/** `50/1s`, `6000/10s`, `100/500ms`: a lowered limit for the ingest path. */
export function rateLimit(v: string): { limit: number; windowMs: number } {
  const m = /^(\d+)\/(\d+(?:\.\d+)?)(ms|s|m)$/.exec(v.trim());
  if (!m || Number(m[1]) < 1 || Number(m[2]) <= 0) throw new InvalidArgumentError("expected N/<window>, e.g. 50/1s, 6000/10s or 100/500ms");
  const unit = m[3] === "ms" ? 1 : m[3] === "s" ? 1000 : 60_000;
  return { limit: Number(m[1]), windowMs: Number(m[2]) * unit };
}

interface BackfillCliOptions {
  prices?: string;
  format: FormatName;
  endpoint?: string;
  apiKey?: string;
  project?: string;
  db?: string;
  checkpoint?: string;
  deadLetter?: string;
  dryRun?: boolean;
  shard?: { index: number; count: number };
  rateLimiter?: string;
  rateLimit?: { limit: number; windowMs: number };
  batchSize?: number;
  spoolDir?: string;
  progress: "auto" | "bar" | "json" | "none";
  progressEvery: number;
  checkpointEvery: number;
  maxLineBytes: number;
}

export function register(program: Command): void {
  program
    .command("backfill")
    .summary("turn historical LLM logs into runs, resumably")
    .description(
      [
        "Stream historical log files through the same pipeline as live traces: normalize, validate, estimate missing usage, and deliver to the endpoint (or, with none configured, the embedded SQLite store). FILES may be glob patterns (quote them: 'logs/*.jsonl.gz'); the CLI expands them itself.",
        "Formats, detected per file from its first records, or --format:",
        "openai-batch: Batch API input {custom_id, method, url, body} and output {id, custom_id, response, error}; give both files to join requests to responses by custom_id.",
        "anthropic-batch: Message Batches requests {custom_id, params} and results {custom_id, result}.",
        "generic: {request, response, start_time?, end_time?, first_token_time?, metadata?, tags?, id?}.",
        "runs: native Run records.",
        "otlp-json: OTLP JSON trace exports, one ExportTraceServiceRequest per line; spans are gathered by trace and LLM spans become runs (shards split these by trace).",
        "Any file may be gzip-compressed (.gz). Run ids are derived from the file's content and the record's custom_id or line, so running a file twice creates no duplicates. With --checkpoint, progress is saved every few seconds; after a crash or Ctrl-C the same command resumes. Bad lines go to --dead-letter with file, line, reason and the raw line; a line over --max-line-bytes is dead-lettered with its number.",
        "Exit codes: 0 every record sent, 1 some lines dead-lettered or refused by the server, or a file unreadable part-way (e.g. a corrupt .gz: its earlier lines and the other files are processed), or runs left in the spool (rerun to send them), 2 usage or configuration error (a 401/403 from the endpoint is one: before anything is sent, or mid-run when the key is revoked, which stops the run with nothing dead-lettered), 130 interrupted (rerun to resume).",
      ].join("\n\n"),
    )
    .argument("<files...>", "log files (.jsonl, .json lines, optionally .gz) or glob patterns")
    .addOption(new Option("-f, --format <format>", "input format").choices([...FORMATS]).default("auto"))
    .option("--endpoint <url>", "ingest endpoint (default TRACEPIPE_ENDPOINT; unset: the embedded store)", envValue("TRACEPIPE_ENDPOINT"))
    .option("--api-key <key>", "sent as X-Api-Key (default TRACEPIPE_API_KEY)", envValue("TRACEPIPE_API_KEY"))
    .option("--project <name>", "project for runs that name none (default TRACEPIPE_PROJECT or 'default')", envValue("TRACEPIPE_PROJECT"))
    .option("--db <path>", "embedded store when no endpoint is set (default TRACEPIPE_DB or .tracepipe/traces.db)")
    .option("--checkpoint <path>", "save progress here and resume from it")
    .option("--dead-letter <path>", "where bad lines go (default dead-letters/backfill-lines.jsonl beside the store)")
    .option("--dry-run", "parse, normalize and validate everything; send nothing")
    .option("--shard <i/n>", "take only lines with (line - 1) % n == i (run n processes with 0/n .. n-1/n)", shard)
    .option("--rate-limiter <url>", "share the rate limit across processes through Redis, e.g. redis://127.0.0.1:6379")
    .option(
      "--rate-limit <n/window>",
      "override the limit for POST /runs/multipart, e.g. 50/1s (default: the ingest limit, 6000 per 10 s with an API key; without one, 100 per 60 s per IP)",
      rateLimit,
    )
    .option(
      "--batch-size <n>",
      "most runs per request (default: what GET /info advertises, at most 1000, else 100; a value given here is only lowered by GET /info)",
      positiveInt("--batch-size"),
    )
    .option("--spool-dir <path>", "client spool directory (default .tracepipe/spool)")
    .addOption(new Option("--progress <mode>", "progress display").choices(["auto", "bar", "json", "none"]).default("auto"))
    .option("--progress-every <ms>", "interval of JSON progress lines off a terminal", positiveInt("--progress-every"), 5000)
    .option("--checkpoint-every <ms>", "how often progress is flushed and checkpointed", positiveInt("--checkpoint-every"), 2000)
    .option("--prices <file>", PRICES_OPTION_HELP)
    .option(
      "--max-line-bytes <n>",
      "longest line read; a longer one is dead-lettered",
      positiveInt("--max-line-bytes"),
      DEFAULT_MAX_LINE_BYTES,
    )
    .action(async (args: string[], opts: BackfillCliOptions) => {
      let files: string[];
      try {
        files = await expandFileArgs(args);
      } catch (err) {
        if (!(err instanceof InputError)) throw err;
        process.stderr.write(`tracepipe backfill: ${err.message}\n`);
        process.exitCode = EXIT_USAGE;
        return;
      }
      process.exitCode = await runBackfill(files, opts);
    });
}

function usageError(err: ValidationError): number {
  for (const i of err.issues) process.stderr.write(JSON.stringify({ error: i }) + "\n");
  process.stderr.write(`tracepipe backfill: ${err.message}\n`);
  return EXIT_USAGE;
}

/** The HTTP sink the client would build, behind the revoked-key guard. */
function guardedSink(opts: BackfillCliOptions, limiter: RedisRateLimiter | undefined, onRefused: () => void): KeyGuardSink {
  const r = resolveOptions({ endpoint: opts.endpoint, apiKey: opts.apiKey, batchSize: opts.batchSize });
  const warned = new Set<string>();
  const http = new HttpSink({
    endpoint: r.endpoint!,
    apiKey: r.apiKey,
    limiter: limiter ?? new MemoryRateLimiter(),
    rateLimit: opts.rateLimit,
    gzip: "auto",
    defaults: { batchSize: r.batchSize, batchBytes: r.batchBytes },
    batchSizeFromServer: r.batchSizeFromServer,
    warn: (m) => {
      if (warned.has(m)) return;
      warned.add(m);
      process.emitWarning(m, "TracepipeWarning");
    },
  });
  return new KeyGuardSink(http, onRefused);
}

/** Where a rerun with a good key resumes. */
function resumeHint(checkpointPath: string | undefined): string {
  if (!checkpointPath) return "Without --checkpoint a rerun starts from the top (run ids are stable, so nothing is stored twice).";
  const cp = loadCheckpoint(checkpointPath);
  const at = cp?.files.filter((f) => f.line > 0).map((f) => `${f.path} line ${f.line}`) ?? [];
  return `The checkpoint (${checkpointPath}) stands ${at.length ? `after ${at.join(", ")}` : "at the start"}, every record before it acknowledged; fix the key and rerun the same command to resume.`;
}

async function runBackfill(files: string[], opts: BackfillCliOptions): Promise<number> {
  try {
    usePriceFile(opts.prices);
  } catch (err) {
    if (err instanceof ValidationError) return usageError(err);
    throw err;
  }
  // Before the client exists: it replays its spool at once, and a refused key would dead-letter all of it.
  if (!opts.dryRun && opts.endpoint) {
    try {
      await checkAccess(opts.endpoint, opts.apiKey);
    } catch (err) {
      if (err instanceof ValidationError) return usageError(err);
      throw err;
    }
  }
  const limiter = opts.rateLimiter ? new RedisRateLimiter(opts.rateLimiter) : undefined;
  const deadLetterPath = opts.deadLetter ?? deadLetterPathFor(dbPathFrom(opts.db), "backfill");
  const abort = new AbortController();
  // A key revoked mid-run: stop reading, and shut the client down so what is unsent goes to the spool
  // (a rerun sends it) instead of every later batch becoming a dead letter.
  const guard =
    !opts.dryRun && opts.endpoint
      ? guardedSink(opts, limiter, () => {
          abort.abort();
          void client?.shutdown({ timeoutMs: 0 });
        })
      : undefined;
  // Declared after the guard, whose callback runs only once sending has begun.
  const client = opts.dryRun
    ? undefined
    : new Client({
        endpoint: opts.endpoint,
        apiKey: opts.apiKey,
        project: opts.project,
        dbPath: opts.db,
        limiter,
        rateLimit: opts.rateLimit,
        batchSize: opts.batchSize,
        spoolDir: opts.spoolDir,
        sink: guard,
      });
  const onSigint = () => {
    if (abort.signal.aborted) process.exit(EXIT_INTERRUPTED); // a second Ctrl-C: leave now
    process.stderr.write("\ntracepipe backfill: stopping at the next checkpoint (Ctrl-C again to quit at once)\n");
    abort.abort();
  };
  process.on("SIGINT", onSigint);
  try {
    const result = await backfill({
      files,
      format: opts.format,
      project: opts.project,
      client,
      checkpointPath: opts.checkpoint,
      deadLetterPath,
      dryRun: opts.dryRun,
      shard: opts.shard,
      progress: createProgress(opts.progress, opts.progressEvery),
      checkpointEveryMs: opts.checkpointEvery,
      maxLineBytes: opts.maxLineBytes,
      signal: abort.signal,
    });
    await client?.shutdown();
    const { interrupted, unacknowledged, unreadable, ...summary } = result;
    // Say where the runs and the bad lines went.
    printSummary({
      ...summary,
      destination: opts.dryRun ? "nowhere (dry run)" : (client?.sink.target ?? "?"),
      dead_letter_file: deadLetterPath,
    });
    if (guard?.refusal) return usageError(keyRevokedError(opts.endpoint!, guard.refusal, resumeHint(opts.checkpoint)));
    for (const u of unreadable) {
      process.stderr.write(JSON.stringify({ error: { loc: ["files", u.index], msg: u.reason, type: "file_unreadable" } }) + "\n");
      process.stderr.write(`tracepipe backfill: ${u.reason}; the lines before it were processed, and the other files too\n`);
    }
    if (unacknowledged > 0) {
      process.stderr.write(
        `tracepipe backfill: ${unacknowledged} runs were not acknowledged by ${client?.sink.target} (they wait in the spool); the checkpoint stays before them: rerun to send them\n`,
      );
    }
    if (interrupted) return EXIT_INTERRUPTED;
    return result.dead_lettered + result.refused_by_server + unacknowledged + unreadable.length > 0 ? EXIT_INVALID : EXIT_OK;
  } catch (err) {
    await client?.shutdown().catch(() => undefined);
    if (err instanceof ValidationError) return usageError(err);
    throw err;
  } finally {
    process.off("SIGINT", onSigint);
    await limiter?.close();
  }
}
