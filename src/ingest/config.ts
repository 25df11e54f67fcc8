/** Client options with their documented defaults (DESIGN.md "Environment"). */
import { ConfigError } from "../errors.js";
import { samplingRateFrom, type PrivacyOptions } from "./privacy.js";
import { dbPathFrom, deadLetterPathFor, DEFAULT_DB_PATH, DEFAULT_PROJECT, envValue, storeTargetFrom } from "../env.js";
import { join, dirname } from "node:path";
import type { RateLimiter } from "../ratelimit/limiter.js";
import type { Sink } from "./sink.js";
import type { SafeLimits } from "../run/safe.js";

/** Runs per batch when neither the caller nor the server says (LangSmith's client uses the same). */
export const DEFAULT_BATCH_SIZE = 100;
/**
 * The largest batch size taken from a server's GET /info when the caller set
 * none. LangSmith's own client sends batches of whatever size `size_limit`
 * advertises; a server that advertised a huge one would make a single failed
 * request (a 413 split, a retry) carry that many runs, so it is capped.
 */
export const MAX_ADVERTISED_BATCH = 1000;
/**
 * Bytes per batch when the caller sets none, below the 20 MiB servers accept:
 * with up to a thousand runs per batch, large runs (50 KB each) would
 * otherwise make 20 MB requests, which a collector parses and stores for
 * seconds while the next ones wait, and four of which in flight hold 80 MB of
 * the host's memory. At 4 MiB small runs still go a thousand at a time.
 */
export const DEFAULT_BATCH_BYTES = 4 * 1024 * 1024;

export interface ClientOptions {
  /** Ingest endpoint. Default `TRACEPIPE_ENDPOINT`; unset means the embedded SQLite store. */
  endpoint?: string;
  /** Sent as `x-api-key`. Default `TRACEPIPE_API_KEY`. */
  apiKey?: string;
  /** `session_name` for runs that do not set one. Default `TRACEPIPE_PROJECT` or `default`. */
  project?: string;
  /** Embedded store path. Default `TRACEPIPE_DB` or `.tracepipe/traces.db`. */
  dbPath?: string;
  /**
   * Embedded store in a server database instead of the file: `postgres://user:pass@host:5432/db`.
   * Default `TRACEPIPE_STORE_URL` (unless `dbPath` is given). The spool and dead letters stay beside `dbPath`.
   */
  storeUrl?: string;
  /** Override SPEC §8's limit for POST /runs/multipart, e.g. `{limit: 50, windowMs: 1000}`. */
  rateLimit?: { limit: number; windowMs: number };
  /** Shared limiter (e.g. Redis across processes). Default: in-process sliding window. */
  limiter?: RateLimiter;
  /** gzip request bodies: `auto` (default) when GET /info advertises it and the endpoint is not loopback. */
  gzip?: boolean | "auto";
  /**
   * Most runs per batch. Unset: what GET /info advertises (`size_limit`, at
   * most MAX_ADVERTISED_BATCH), else 100. Set: GET /info may lower it.
   */
  batchSize?: number;
  /**
   * Most bytes per batch (approximate, before compression). Default
   * DEFAULT_BATCH_BYTES (4 MiB); GET /info may lower it.
   */
  batchBytes?: number;
  /** Batches in flight at once. Default 4. */
  concurrency?: number;
  /** How long a partial batch waits for company. Default 50 ms. */
  flushIntervalMs?: number;
  /** Queued bytes kept in memory; past this, runs are spilled to the spool. Default 16 MiB (memory stays flat however many runs a producer makes). */
  maxQueueBytes?: number;
  /** Spool directory. Default `<dir of the db>/spool`, i.e. `.tracepipe/spool`. */
  spoolDir?: string;
  /** Where refused batches go. Default `<dir of the db>/dead-letters/runs.jsonl`. */
  deadLetterPath?: string;
  /** Attempts per batch before it is spooled for a later retry. Default 12 (about 3 minutes of backoff). */
  maxAttempts?: number;
  /** Backoff bounds. Defaults 200 ms and 30 s. */
  backoff?: { baseMs?: number; maxMs?: number };
  /** A custom sink instead of HTTP or embedded. */
  sink?: Sink;
  /** Deliver or spool on process exit (beforeExit / exit hooks). Default true. */
  exitHooks?: boolean;
  /** Where warnings go. Default process.emitWarning. */
  warn?: (msg: string) => void;
  /**
   * Caps applied when a run is handed over (makeSafe): nesting (default 64),
   * one string (default 8 Mi chars, the rest cut with a marker), the whole
   * value (default 16 MiB).
   */
  valueLimits?: SafeLimits;
  /** Longest the process's exit is held to deliver what is queued; the rest is spooled. Default 5000 ms. */
  exitTimeoutMs?: number;
  /** Fraction of traces sent, 0 to 1, decided per trace. Default `TRACEPIPE_SAMPLING_RATE`, else 1. */
  samplingRate?: number;
  /** Send `{}` (true) or what the function returns instead of every run's inputs. */
  hideInputs?: PrivacyOptions["hideInputs"];
  /** The same for outputs. */
  hideOutputs?: PrivacyOptions["hideOutputs"];
  /** Called for every string a run carries (inputs, outputs, events, error, extra); its result is sent instead. */
  mask?: PrivacyOptions["mask"];
}

export interface ResolvedOptions {
  endpoint?: string;
  apiKey?: string;
  project: string;
  dbPath: string;
  /** Where the embedded sink stores: the store URL, else dbPath. */
  storeTarget: string;
  batchSize: number;
  /** batchSize was not given: a batch size the server advertises replaces it (HttpSink). */
  batchSizeFromServer: boolean;
  batchBytes: number;
  concurrency: number;
  flushIntervalMs: number;
  maxQueueBytes: number;
  spoolDir: string;
  deadLetterPath: string;
  maxAttempts: number;
  samplingRate: number;
  exitTimeoutMs: number;
}

export function resolveOptions(o: ClientOptions, env: NodeJS.ProcessEnv = process.env): ResolvedOptions {
  const endpoint = o.endpoint ?? envValue("TRACEPIPE_ENDPOINT", env);
  const dbPath = dbPathFrom(o.dbPath, env);
  const base = dirname(dbPath === ":memory:" ? DEFAULT_DB_PATH : dbPath);
  return {
    endpoint,
    apiKey: o.apiKey ?? envValue("TRACEPIPE_API_KEY", env),
    project: o.project ?? envValue("TRACEPIPE_PROJECT", env) ?? DEFAULT_PROJECT,
    dbPath,
    storeTarget: storeTargetFrom({ store: o.storeUrl, db: o.dbPath }, env),
    batchSize: o.batchSize ?? DEFAULT_BATCH_SIZE,
    batchSizeFromServer: o.batchSize === undefined,
    batchBytes: o.batchBytes ?? DEFAULT_BATCH_BYTES,
    concurrency: o.concurrency ?? 4,
    flushIntervalMs: o.flushIntervalMs ?? 50,
    maxQueueBytes: o.maxQueueBytes ?? 16 * 1024 * 1024,
    spoolDir: o.spoolDir ?? join(base, "spool"),
    deadLetterPath: o.deadLetterPath ?? deadLetterPathFor(dbPath, "runs"),
    maxAttempts: o.maxAttempts ?? 12,
    samplingRate: samplingRate(o.samplingRate, env),
    exitTimeoutMs: o.exitTimeoutMs ?? 5000,
  };
}

function samplingRate(option: number | undefined, env: NodeJS.ProcessEnv): number {
  if (option !== undefined) {
    if (!Number.isFinite(option) || option < 0 || option > 1)
      throw new ConfigError([{ loc: ["samplingRate"], msg: `expected a number from 0 to 1, got ${option}`, type: "value_error" }]);
    return option;
  }
  try {
    return samplingRateFrom(envValue("TRACEPIPE_SAMPLING_RATE", env)) ?? 1;
  } catch (err) {
    throw new ConfigError([{ loc: ["TRACEPIPE_SAMPLING_RATE"], msg: (err as Error).message, type: "value_error" }]);
  }
}
