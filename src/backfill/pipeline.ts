/**
 * backfill(): historical log files -> runs -> the ingest Client (or nowhere, in
 * a dry run), a line at a time, with checkpoints, dead letters, sharding and
 * progress. The CLI (`tracepipe backfill`) is a thin shell around this.
 *
 * Order of work: detect each file's kind from its first parseable line; index
 * the batch request files that have a results file beside them; then read the
 * other files in the order given, each from its checkpointed offset.
 */
import { appendFileSync, existsSync, mkdirSync, statSync, truncateSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { ConfigError, ValidationError, zodIssues, type Issue } from "../errors.js";
import type { Client } from "../ingest/client.js";
import { Run } from "../run/schema.js";
import type { Run as RunT } from "../run/schema.js";
import { loadCheckpoint, saveCheckpoint, emptyCounts, type Checkpoint, type FilePosition } from "./checkpoint.js";
import { callToRun, type CallRecord } from "./convert.js";
import { detectKind, READER, type FileKind, type FormatName } from "./formats.js";
import { fileFingerprint } from "./identity.js";
import { RequestIndex } from "./join.js";
import { TraceIndex } from "./traces.js";
import { traceToRuns } from "../otel/convert.js";
import { plainToSpanRecord, toPlain } from "../otel/otlp-json.js";
import { readLines } from "./lines.js";
import { createProgress, type Progress, type ProgressState, type Summary } from "./progress.js";

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
  /** Take only the lines with (line - 1) % count === index. */
  shard?: { index: number; count: number };
  progress?: Progress;
  /** How often progress is made durable (flush + checkpoint). Default 2 s. */
  checkpointEveryMs?: number;
  /** Stop cleanly (checkpoint, summary) when aborted, e.g. on Ctrl-C. */
  signal?: AbortSignal;
}

export interface BackfillResult extends Summary {
  interrupted: boolean;
}

interface InputFile {
  path: string;
  kind: FileKind;
  fingerprint: string;
  size: number;
  mtimeMs: number;
  /** A request file read only to join with a results file. */
  joinOnly: boolean;
}

const DETECT_LINES = 50;

async function detectFile(path: string, format: FormatName | undefined, index: number): Promise<FileKind> {
  let seen = 0;
  let firstError: string | undefined;
  for await (const l of readLines(path)) {
    if (!l.text.trim()) continue;
    if (++seen > DETECT_LINES) break;
    let v: unknown;
    try {
      v = JSON.parse(l.text);
    } catch (err) {
      firstError ??= `line ${l.line} is not JSON (${(err as Error).message})`;
      continue;
    }
    const kind = detectKind(v, format ?? "auto");
    if (kind) return kind;
    firstError ??= `line ${l.line} is not a record of ${format && format !== "auto" ? `the ${format} format` : "any known format"}`;
  }
  throw new ConfigError([
    {
      loc: ["files", index],
      msg: `${path}: cannot tell its format (${firstError ?? "the file is empty"}); formats: openai-batch, anthropic-batch, generic, runs, otlp-json; pass --format`,
      type: "unknown_format",
    },
  ]);
}

/** One log line as JSON; malformed JSON is a ValidationError, so it is dead-lettered like any bad record. */
function parseLine(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ValidationError([{ loc: [], msg: `malformed JSON: ${(err as Error).message}`, type: "json_invalid" }]);
  }
}

function reasonOf(err: unknown): { reason: string; errors?: Issue[] } {
  if (err instanceof ValidationError) return { reason: err.message, errors: err.issues };
  return { reason: err instanceof Error ? err.message : String(err) };
}

export async function backfill(o: BackfillOptions): Promise<BackfillResult> {
  const t0 = Date.now();
  if (!o.dryRun && !o.client) throw new ConfigError([{ loc: ["client"], msg: "a client is required unless dryRun", type: "missing" }]);
  if (o.files.length === 0) throw new ConfigError([{ loc: ["files"], msg: "no input files", type: "missing" }]);
  if (o.shard && !(Number.isInteger(o.shard.count) && o.shard.count >= 1 && Number.isInteger(o.shard.index) && o.shard.index >= 0 && o.shard.index < o.shard.count)) {
    throw new ConfigError([{ loc: ["shard"], msg: `expected i/n with 0 <= i < n, got ${o.shard.index}/${o.shard.count}`, type: "value_error" }]);
  }
  const progress = o.progress ?? createProgress("none");

  // ---- the inputs ------------------------------------------------------------------
  const inputs: InputFile[] = [];
  for (const [i, path] of o.files.entries()) {
    if (!existsSync(path) || !statSync(path).isFile()) throw new ConfigError([{ loc: ["files", i], msg: `${path}: no such file`, type: "file_not_found" }]);
    const kind = await detectFile(path, o.format, i);
    const st = statSync(path);
    inputs.push({ path, kind, fingerprint: fileFingerprint(path), size: st.size, mtimeMs: st.mtimeMs, joinOnly: false });
  }
  for (const f of inputs) {
    const results = READER[f.kind].joinedTo;
    f.joinOnly = results !== undefined && inputs.some((g) => g.kind === results);
  }

  // ---- checkpoint and dead letters ----------------------------------------------------
  const useCheckpoint = !!o.checkpointPath && !o.dryRun;
  const previous = useCheckpoint ? loadCheckpoint(o.checkpointPath!) : undefined;
  const cp: Checkpoint = previous ?? { version: 1, files: {}, counts: emptyCounts(), deadLetterBytes: 0, updatedAt: "" };
  mkdirSync(dirname(resolve(o.deadLetterPath)), { recursive: true });
  let deadLetterBytes = existsSync(o.deadLetterPath) ? statSync(o.deadLetterPath).size : 0;
  if (previous && deadLetterBytes > previous.deadLetterBytes) {
    // Lines dead-lettered after the last checkpoint will be read, and dead-lettered, again.
    truncateSync(o.deadLetterPath, previous.deadLetterBytes);
    deadLetterBytes = previous.deadLetterBytes;
  }
  const counts = cp.counts;
  const client = o.dryRun ? undefined : o.client;
  const stats0 = client ? { ...client.stats } : undefined;

  let currentFile = "";
  let bytesDone = 0;
  let recordsThisRun = 0;
  const totalBytes = inputs.reduce((n, f) => n + f.size, 0);
  const state = (phase: ProgressState["phase"]): ProgressState => ({
    phase,
    file: currentFile,
    bytes: bytesDone,
    totalBytes,
    counts,
    delivered: client ? client.stats.delivered - stats0!.delivered : 0,
    retried: client ? client.stats.retried - stats0!.retried : 0,
    refused: client ? client.stats.deadLettered - stats0!.deadLettered : 0,
    elapsedMs: Date.now() - t0,
    recordsThisRun,
  });

  const deadLetter = (file: string, line: number, raw: string, err: unknown) => {
    const text = JSON.stringify({ file, line, ...reasonOf(err), raw }) + "\n";
    appendFileSync(o.deadLetterPath, text);
    deadLetterBytes += Buffer.byteLength(text);
    counts.deadLettered++;
  };

  const checkpoint = async () => {
    if (client) await client.flush(); // everything handed over so far is acknowledged (or spooled) first
    if (useCheckpoint) saveCheckpoint(o.checkpointPath!, { ...cp, counts, deadLetterBytes });
  };

  const countRun = (run: RunT) => {
    counts.sent++;
    if ((run.outputs as { messages?: { usage_metadata?: { estimated?: boolean } }[] } | undefined)?.messages?.[0]?.usage_metadata?.estimated) counts.estimated++;
    if (run.error) counts.errored++;
  };

  /**
   * An OTLP JSON file: gather its spans by trace (lines in any order), then
   * turn each whole trace into runs. The file is one unit for checkpoints: an
   * interrupted one is read again from the start, and its runs' stable ids make
   * the second delivery an update, not a duplicate. Shards split it by trace,
   * so a trace is never cut in two. Returns true when interrupted.
   */
  const otlpFile = async (f: InputFile, pos: FilePosition): Promise<boolean> => {
    const traces = new TraceIndex();
    try {
      for await (const l of readLines(f.path, { onBytes: (b) => (bytesDone = b) })) {
        if (o.signal?.aborted) return true;
        counts.lines++;
        if (!l.text.trim()) continue;
        const own = !o.shard || (l.line - 1) % o.shard.count === o.shard.index;
        if (own) counts.records++;
        else counts.skipped++;
        recordsThisRun++;
        try {
          const v = parseLine(l.text);
          if (typeof v !== "object" || v === null || !Array.isArray((v as { resourceSpans?: unknown }).resourceSpans)) {
            throw new ValidationError([{ loc: ["resourceSpans"], msg: "expected an OTLP ExportTraceServiceRequest with a resourceSpans array", type: "missing" }]);
          }
          for (const span of toPlain(v as Record<string, unknown>)) traces.add(span, l.line);
        } catch (err) {
          if (own) deadLetter(f.path, l.line, l.text, err); // each shard reports its own lines
        }
        if (l.line % 2000 === 0) progress.update(state("indexing requests"));
      }
      let n = 0;
      for (const traceId of traces.traceIds()) {
        if (o.signal?.aborted) return true;
        if (o.shard && parseInt(traceId.slice(-8), 16) % o.shard.count !== o.shard.index) continue;
        for (const run of traceToRuns(traces.spans(traceId).map(plainToSpanRecord), { project: o.project })) {
          countRun(run);
          if (client) {
            client.createRun(run);
            if (++n % 64 === 0) await client.whenRoom();
          }
        }
        if (n % 256 === 0) progress.update(state(o.dryRun ? "dry run" : "sending"));
      }
      pos.offset = f.size;
      pos.done = true;
      return false;
    } finally {
      traces.close();
    }
  };

  const index = new RequestIndex();
  let interrupted = false;
  try {
    // ---- join index --------------------------------------------------------------------
    for (const f of inputs.filter((x) => x.joinOnly)) {
      currentFile = f.path;
      const already = cp.files[f.fingerprint]?.done === true; // its bad lines were dead-lettered the first time
      const family = f.kind;
      for await (const l of readLines(f.path, { onBytes: (b) => (bytesDone = b) })) {
        if (!l.text.trim()) continue;
        try {
          const v = parseLine(l.text);
          if (typeof v !== "object" || v === null || Array.isArray(v)) throw new ValidationError([{ loc: [], msg: "expected a JSON object", type: "object_type" }]);
          const { customId, body } = READER[f.kind].index!(v as Record<string, unknown>);
          index.add(family, customId, body);
        } catch (err) {
          if (!already) deadLetter(f.path, l.line, l.text, err);
        }
        if (l.line % 2000 === 0) progress.update(state("indexing requests"));
      }
      index.commit();
      bytesDone = 0;
      cp.files[f.fingerprint] = { path: f.path, offset: f.size, line: 0, done: true };
    }

    // ---- the records -------------------------------------------------------------------
    let lastCheckpoint = Date.now();
    let tick = 0;
    const every = o.checkpointEveryMs ?? 2000;
    let diskBefore = 0;
    for (const f of inputs) {
      if (f.joinOnly) {
        diskBefore += f.size;
        continue;
      }
      currentFile = f.path;
      const pos: FilePosition = (cp.files[f.fingerprint] ??= { path: f.path, offset: 0, line: 0, done: false });
      pos.path = f.path;
      if (pos.done) {
        diskBefore += f.size;
        continue;
      }
      if (f.kind === "otlp-json") {
        const stop = await otlpFile(f, pos);
        if (stop) {
          interrupted = true;
          break;
        }
        diskBefore += f.size;
        bytesDone = diskBefore;
        await checkpoint();
        continue;
      }
      const family = READER[f.kind].joinsWith;
      for await (const l of readLines(f.path, { offset: pos.offset, line: pos.line, onBytes: (b) => (bytesDone = diskBefore + b) })) {
        if (o.signal?.aborted) {
          interrupted = true;
          break;
        }
        counts.lines++;
        if (l.text.trim()) {
          if (o.shard && (l.line - 1) % o.shard.count !== o.shard.index) counts.skipped++;
          else {
            counts.records++;
            recordsThisRun++;
            let run: RunT | undefined;
            try {
              run = toRun(f, family, parseLine(l.text), l.line, index, o.project);
            } catch (err) {
              deadLetter(f.path, l.line, l.text, err);
            }
            if (run) {
              countRun(run);
              if (client) {
                client.createRun(run);
                if (recordsThisRun % 64 === 0) await client.whenRoom();
              }
            }
          }
        }
        pos.offset = l.end;
        pos.line = l.line;
        if (++tick % 256 === 0) {
          progress.update(state(o.dryRun ? "dry run" : "sending"));
          if (Date.now() - lastCheckpoint >= every) {
            await checkpoint();
            lastCheckpoint = Date.now();
          }
        }
      }
      if (interrupted) break;
      pos.done = true;
      diskBefore += f.size;
      bytesDone = diskBefore;
      await checkpoint();
    }
    await checkpoint();
  } finally {
    index.close();
  }
  const final = state(o.dryRun ? "dry run" : "sending");
  progress.stop(final);
  const seconds = (Date.now() - t0) / 1000;
  return {
    files: inputs.length,
    lines: counts.lines,
    records: counts.records,
    sent: counts.sent,
    delivered: final.delivered,
    retried: final.retried,
    dead_lettered: counts.deadLettered,
    refused_by_server: final.refused,
    skipped_other_shards: counts.skipped,
    estimated_usage: counts.estimated,
    errored_calls: counts.errored,
    resumed: previous !== undefined,
    dry_run: o.dryRun === true,
    seconds,
    records_per_s: Math.round(recordsThisRun / Math.max(seconds, 1e-3)),
    interrupted,
  };
}

function toRun(f: InputFile, family: FileKind | undefined, v: unknown, line: number, index: RequestIndex, project: string | undefined): RunT {
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw new ValidationError([{ loc: [], msg: "expected a JSON object", type: "object_type" }]);
  const obj = v as Record<string, unknown>;
  const id = typeof obj.custom_id === "string" ? obj.custom_id : undefined;
  const request = family && id !== undefined ? index.lookup(family, id) : undefined;
  const read = READER[f.kind].read(obj, line, request);
  if ("run" in read) {
    const r = Run.safeParse(read.run);
    if (!r.success) throw new ValidationError(zodIssues(r.error.issues));
    return r.data.session_name === undefined && project ? { ...r.data, session_name: project } : r.data;
  }
  const call: CallRecord = read.call;
  if (family && request === undefined && index.size > 0) call.metadata = { ...call.metadata, request_missing: true };
  return callToRun(call, { fingerprint: f.fingerprint, file: f.path, line, project, fallbackMs: f.mtimeMs });
}
