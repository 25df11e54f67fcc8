/**
 * backfill(): historical log files -> runs -> the ingest Client (or nowhere,
 * in a dry run), with checkpoints, dead letters, sharding and progress. The
 * CLI (`tracepipe backfill`) is a thin shell around this.
 *
 *   inputs   check the files and detect each one's kind            (inputs.ts)
 *   ledger   open the checkpoint and the dead-letter file           (ledger.ts)
 *   for each file (request files of a join first):
 *     identify   which checkpoint entry it continues, by content    (identity.ts)
 *     read       its LogReader yields runs, bad lines, positions    (readers.ts)
 *     handle     send the run / dead-letter the line / count it
 *     commit     flush, and save the position once all is acknowledged
 *   summary
 */
import { ConfigError } from "../errors.js";
import type { Client } from "../ingest/client.js";
import type { UsageMetadata } from "../format/schema.js";
import type { Run } from "../run/schema.js";
import { roundUsd } from "../tokens/prices/index.js";
import type { FilePosition } from "./checkpoint.js";
import type { FormatName } from "./formats.js";
import { identify } from "./identity.js";
import { openInputs, type InputFile } from "./inputs.js";
import { RequestIndex } from "./join.js";
import { Ledger } from "./ledger.js";
import { DEFAULT_MAX_LINE_BYTES } from "./lines.js";
import { createProgress, type Progress, type ProgressState, type Summary } from "./progress.js";
import type { Item } from "./reader.js";
import { READER } from "./readers.js";
import { shardFilter, type Owns, type ShardSpec } from "./shard.js";

export interface BackfillOptions {
  files: string[];
  /** `auto` (default) detects each file's kind from its first records. */
  format?: FormatName;
  /** Project (session_name) for runs that carry none. */
  project?: string;
  /** Where runs go; required unless `dryRun`. */
  client?: Client;
  checkpointPath?: string;
  /** Bad lines go here, one JSON object each: file, line, reason, errors, raw. */
  deadLetterPath: string;
  /** Parse, normalize and validate everything; send nothing, write no checkpoint. */
  dryRun?: boolean;
  /** Take only the records with number % count === index (see shard.ts). */
  shard?: ShardSpec;
  progress?: Progress;
  /** How often progress is made durable (flush + checkpoint). Default 2 s. */
  checkpointEveryMs?: number;
  /** Longest line read; a longer one is dead-lettered with its number. Default 64 MiB. */
  maxLineBytes?: number;
  /** Stop cleanly (checkpoint, summary) when aborted, e.g. on Ctrl-C. */
  signal?: AbortSignal;
}

/** A file that could not be read to its end (e.g. a .gz corrupted part-way): its lines before that point were processed. */
export interface UnreadableFile {
  file: string;
  /** Index of the file among the inputs. */
  index: number;
  /** The last line read whole. */
  line: number;
  /** What went wrong, naming the file and that line. */
  reason: string;
}

export interface BackfillResult extends Summary {
  interrupted: boolean;
  /** Files that failed part-way; the others were still processed (the CLI exits 1: some input failed). */
  unreadable: UnreadableFile[];
  /** Runs handed to the client whose acknowledgement was not seen (they went to its spool); a rerun sends them again. */
  unacknowledged: number;
}

/** One backfill's working state, shared by its steps. */
interface Job {
  o: BackfillOptions;
  ledger: Ledger;
  progress: Progress;
  owns: Owns;
  requests: RequestIndex;
  client?: Client;
  stats0?: Client["stats"];
  t0: number;
  file: string;
  bytesBefore: number;
  bytes: number;
  totalBytes: number;
  recordsThisRun: number;
  lastCommit: number;
  tick: number;
  unreadable: UnreadableFile[];
}

export async function backfill(o: BackfillOptions): Promise<BackfillResult> {
  const t0 = Date.now();
  if (!o.dryRun && !o.client) throw new ConfigError([{ loc: ["client"], msg: "a client is required unless dryRun", type: "missing" }]);
  const owns = shardFilter(o.shard);
  const maxLineBytes = o.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  const inputs = await openInputs(o.files, o.format, maxLineBytes);
  const client = o.dryRun ? undefined : o.client;
  const ledger = new Ledger({ checkpointPath: o.checkpointPath, deadLetterPath: o.deadLetterPath, dryRun: o.dryRun, client });
  const job: Job = {
    o: { ...o, maxLineBytes },
    ledger,
    progress: o.progress ?? createProgress("none"),
    owns,
    requests: new RequestIndex(),
    client,
    stats0: client ? { ...client.stats } : undefined,
    t0,
    file: "",
    bytesBefore: 0,
    bytes: 0,
    totalBytes: inputs.reduce((n, f) => n + f.size, 0),
    recordsThisRun: 0,
    lastCommit: Date.now(),
    tick: 0,
    unreadable: [],
  };
  let interrupted = false;
  try {
    const taken = new Set<FilePosition>();
    for (const [index, f] of inputs.entries()) {
      interrupted = await readFile(job, f, index, taken);
      if (interrupted) break;
    }
    await ledger.commit();
  } finally {
    job.requests.close();
    ledger.close();
  }
  return summarize(job, inputs.length, interrupted);
}

/** One file, from where the checkpoint says it stopped to its end. Returns true when interrupted. */
async function readFile(job: Job, f: InputFile, index: number, taken: Set<FilePosition>): Promise<boolean> {
  const { ledger, o } = job;
  job.file = f.path;
  const found = await identify(f.path, ledger.checkpoint.files, taken, o.maxLineBytes);
  const pos = ledger.track(f.path, found.position, found.hash);
  taken.add(pos);
  const items = READER[f.kind].read({
    path: f.path,
    from: { offset: pos.offset, line: pos.line },
    hash: found.hash,
    maxLineBytes: o.maxLineBytes,
    onBytes: (b) => (job.bytes = job.bytesBefore + b),
    owns: job.owns,
    project: o.project,
    mtimeMs: f.mtimeMs,
    requests: job.requests,
    joinOnly: f.joinOnly,
  });
  let lastLine = pos.line;
  try {
    for await (const item of items) {
      await handle(job, f, item);
      if (item.done) lastLine = item.done.line;
      if (o.signal?.aborted) return true; // after handling: the reader's hash must stand at the last position
    }
  } catch (err) {
    // A file that breaks part-way (a corrupt .gz, a read error) is this file's failure, not the run's:
    // what came before it was handled (and is checkpointed below), the other files still go.
    const issue = err instanceof ConfigError ? err.issues.find((i) => i.type === "file_unreadable") : undefined;
    if (!issue) throw err;
    job.unreadable.push({ file: f.path, index, line: lastLine, reason: issue.msg });
  }
  job.bytesBefore += f.size;
  job.bytes = job.bytesBefore;
  await ledger.commit();
  return false;
}

/** One item: count it, send its run or dead-letter its line, and now and then make progress durable. */
async function handle(job: Job, f: InputFile, item: Item): Promise<void> {
  const { ledger, client } = job;
  const counts = ledger.counts;
  if (item.line) {
    counts.lines++;
    if (item.own === true) {
      counts.records++;
      job.recordsThisRun++;
    } else if (item.own === false) counts.skipped++;
  }
  if (item.bad) ledger.deadLetter(f.path, item.bad);
  if (item.run) {
    countRun(job, item.run);
    if (client) {
      client.createRun(item.run);
      ledger.handedOver();
      if (counts.sent % 64 === 0) await client.whenRoom();
    }
  }
  ledger.at(item.done);
  if (++job.tick % 256 === 0) {
    job.progress.update(state(job, f.joinOnly ? "indexing requests" : job.o.dryRun ? "dry run" : "sending"));
    if (item.done && Date.now() - job.lastCommit >= (job.o.checkpointEveryMs ?? 2000)) {
      await ledger.commit();
      job.lastCommit = Date.now();
    }
  }
}

function countRun(job: Job, run: Run): void {
  const counts = job.ledger.counts;
  counts.sent++;
  const usage = (run.outputs as { messages?: { usage_metadata?: UsageMetadata }[] } | undefined)?.messages?.[0]?.usage_metadata;
  if (usage?.estimated) counts.estimated++;
  if (typeof usage?.total_cost === "number") counts.cost += usage.total_cost;
  else if (run.run_type === "llm") counts.unpriced++;
  if (run.error) counts.errored++;
}

function state(job: Job, phase: ProgressState["phase"]): ProgressState {
  const { client, stats0 } = job;
  return {
    phase,
    file: job.file,
    bytes: job.bytes,
    totalBytes: job.totalBytes,
    counts: job.ledger.counts,
    delivered: client ? client.stats.delivered - stats0!.delivered : 0,
    retried: client ? client.stats.retried - stats0!.retried : 0,
    refused: client ? client.stats.deadLettered - stats0!.deadLettered : 0,
    elapsedMs: Date.now() - job.t0,
    recordsThisRun: job.recordsThisRun,
  };
}

function summarize(job: Job, files: number, interrupted: boolean): BackfillResult {
  const final = state(job, job.o.dryRun ? "dry run" : "sending");
  job.progress.stop(final);
  const counts = final.counts;
  const seconds = (Date.now() - job.t0) / 1000;
  return {
    files,
    lines: counts.lines,
    records: counts.records,
    sent: counts.sent,
    delivered: final.delivered,
    retried: final.retried,
    dead_lettered: counts.deadLettered,
    refused_by_server: final.refused,
    skipped_other_shards: counts.skipped,
    estimated_usage: counts.estimated,
    total_cost: roundUsd(counts.cost),
    unpriced_runs: counts.unpriced,
    errored_calls: counts.errored,
    resumed: job.ledger.resumed,
    dry_run: job.o.dryRun === true,
    seconds,
    records_per_s: Math.round(job.recordsThisRun / Math.max(seconds, 1e-3)),
    interrupted,
    unreadable: job.unreadable,
    unacknowledged: job.ledger.unacknowledged,
  };
}
