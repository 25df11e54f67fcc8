/**
 * Progress for long backfills. On a terminal: a bar with records/s, bytes,
 * ETA and the delivered / retried / dead-lettered counts. Off a terminal
 * (CI, logs, pipes): one JSON line every few seconds on stderr. At the end: a
 * summary table on stderr and the same summary as one JSON line on stdout.
 */
import cliProgress from "cli-progress";
import type { Counts } from "./checkpoint.js";

export interface ProgressState {
  phase: "indexing requests" | "sending" | "dry run";
  file: string;
  bytes: number;
  totalBytes: number;
  counts: Counts;
  /** From the ingest client: runs acknowledged by the sink, retried, refused by the server. */
  delivered: number;
  retried: number;
  refused: number;
  elapsedMs: number;
  /** Records processed in this process (not counting ones a resumed run did before). */
  recordsThisRun: number;
}

export interface Progress {
  update(s: ProgressState): void;
  stop(s: ProgressState): void;
}

export function humanBytes(n: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

const rate = (s: ProgressState) => (s.elapsedMs > 0 ? Math.round((s.recordsThisRun * 1000) / s.elapsedMs) : 0);

export function snapshot(s: ProgressState): Record<string, unknown> {
  return {
    phase: s.phase,
    file: s.file,
    bytes: s.bytes,
    total_bytes: s.totalBytes,
    records: s.counts.records,
    records_per_s: rate(s),
    sent: s.counts.sent,
    delivered: s.delivered,
    retried: s.retried,
    dead_lettered: s.counts.deadLettered + s.refused,
    skipped: s.counts.skipped,
  };
}

class TtyProgress implements Progress {
  private readonly bar = new cliProgress.SingleBar(
    {
      format:
        "{phase} |{bar}| {percentage}% {done}/{size} | {rate} rec/s | ETA {eta_formatted} | sent {sent} delivered {delivered} retried {retried} dead {dead}",
      hideCursor: true,
      etaBuffer: 50,
      fps: 5,
      stream: process.stderr,
    },
    cliProgress.Presets.shades_classic,
  );
  private started = false;

  private payload(s: ProgressState) {
    return {
      phase: s.phase,
      done: humanBytes(s.bytes),
      size: humanBytes(s.totalBytes),
      rate: rate(s),
      sent: s.counts.sent,
      delivered: s.delivered,
      retried: s.retried,
      dead: s.counts.deadLettered + s.refused,
    };
  }

  update(s: ProgressState): void {
    if (!this.started) {
      this.bar.start(Math.max(1, s.totalBytes), s.bytes, this.payload(s));
      this.started = true;
    } else this.bar.update(s.bytes, this.payload(s));
  }

  stop(s: ProgressState): void {
    if (this.started) {
      this.bar.update(s.bytes, this.payload(s));
      this.bar.stop();
    }
  }
}

class JsonProgress implements Progress {
  private last = 0;
  constructor(private readonly everyMs: number) {}

  update(s: ProgressState): void {
    const now = Date.now();
    if (now - this.last < this.everyMs) return;
    this.last = now;
    process.stderr.write(JSON.stringify({ progress: snapshot(s) }) + "\n");
  }

  stop(): void {}
}

class SilentProgress implements Progress {
  update(): void {}
  stop(): void {}
}

export function createProgress(mode: "auto" | "bar" | "json" | "none", everyMs = 5000): Progress {
  if (mode === "none") return new SilentProgress();
  if (mode === "bar" || (mode === "auto" && process.stderr.isTTY)) return new TtyProgress();
  return new JsonProgress(everyMs);
}

export interface Summary {
  files: number;
  lines: number;
  records: number;
  sent: number;
  delivered: number;
  retried: number;
  dead_lettered: number;
  refused_by_server: number;
  skipped_other_shards: number;
  estimated_usage: number;
  /** USD, summed over the runs whose model has a price (estimated tokens included). */
  total_cost: number;
  /** llm runs without a cost: no usage, or a model without a price. */
  unpriced_runs: number;
  errored_calls: number;
  resumed: boolean;
  dry_run: boolean;
  seconds: number;
  records_per_s: number;
  /** Where the runs went (the endpoint or the store's file) and where bad lines went; set by the CLI. */
  destination?: string;
  dead_letter_file?: string;
}

/** Dollars for the summary table: cents for large totals, more digits for small ones. */
function formatUsd(x: number): string {
  return x >= 100
    ? x.toFixed(2)
    : x >= 1
      ? x.toFixed(4)
      : x
          .toPrecision(4)
          .replace(/(\.\d*?)0+$/, "$1")
          .replace(/\.$/, "");
}

export function printSummary(sum: Summary): void {
  const rows: [string, string | number][] = [
    ["files", sum.files],
    ["lines read", sum.lines],
    ["records", sum.records],
    [sum.dry_run ? "valid (not sent)" : "runs sent", sum.sent],
    ["delivered", sum.dry_run ? "-" : sum.delivered],
    ["retried", sum.dry_run ? "-" : sum.retried],
    ["dead-lettered (bad lines)", sum.dead_lettered],
    ["refused by server", sum.dry_run ? "-" : sum.refused_by_server],
    ["other shards' records", sum.skipped_other_shards],
    ["usage estimated", sum.estimated_usage],
    ["cost (USD)", formatUsd(sum.total_cost)],
    ["runs without a price", sum.unpriced_runs],
    ["calls that failed (error runs)", sum.errored_calls],
    ["seconds", sum.seconds.toFixed(1)],
    ["records/s", sum.records_per_s],
  ];
  const w = Math.max(...rows.map(([k]) => k.length));
  process.stderr.write(`backfill summary${sum.resumed ? " (resumed from checkpoint; counts include the earlier run)" : ""}\n`);
  for (const [k, v] of rows) process.stderr.write(`  ${k.padEnd(w)}  ${String(v).padStart(10)}\n`);
  if (sum.destination) process.stderr.write(`  runs went to ${sum.destination}\n`);
  if (sum.dead_letter_file && sum.dead_lettered > 0) process.stderr.write(`  bad lines are in ${sum.dead_letter_file}\n`);
  process.stdout.write(JSON.stringify({ summary: sum }) + "\n");
}
