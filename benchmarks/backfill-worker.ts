/**
 * One measured backfill, in its own process so peak RSS belongs to it alone:
 *   node --import tsx benchmarks/backfill-worker.ts <tracepipe|langsmith> <url> <log> <project> [json options]
 * options: {rateLimit?: {limit, windowMs}, batchSize?}
 * Prints one JSON line: {peer, records, delivered, seconds, recordsPerSec, requests, retried, peakRssMiB}.
 *
 * The langsmith peer is what a team would write without tracepipe's backfill:
 * read the file a line at a time, convert each record with the same converter,
 * and hand the run to the `langsmith` package's batching Client.
 */
import { createReadStream, mkdtempSync } from "node:fs";
import { createInterface } from "node:readline";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadBuilt } from "./load.js";

const [peer, url, log, project, optsArg] = process.argv.slice(2) as [string, string, string, string, string | undefined];
const opts = JSON.parse(optsArg ?? "{}") as { rateLimit?: { limit: number; windowMs: number }; batchSize?: number };
const dir = mkdtempSync(join(tmpdir(), "tp-bench-backfill-"));
const t0 = performance.now();
let out: Record<string, unknown>;
if (peer === "tracepipe") {
  const tp = await loadBuilt<typeof import("../src/index.js")>("src/index.js");
  const client = new tp.Client({
    endpoint: url,
    apiKey: "bench",
    project,
    spoolDir: join(dir, "spool"),
    deadLetterPath: join(dir, "client-dl.jsonl"),
    exitHooks: false,
    rateLimit: opts.rateLimit,
    batchSize: opts.batchSize,
  });
  const { backfill } = await loadBuilt<typeof import("../src/backfill/index.js")>("src/backfill/index.js");
  const r = await backfill({ files: [log], client, project, deadLetterPath: join(dir, "dead.jsonl") });
  await client.shutdown();
  out = {
    records: r.records,
    delivered: r.delivered,
    dead: r.dead_lettered,
    requests: client.stats.requests,
    retried: client.stats.retried,
  };
} else {
  const { callToRun } = await loadBuilt<typeof import("../src/backfill/convert.js")>("src/backfill/convert.js");
  const { genericCall } = await loadBuilt<typeof import("../src/backfill/formats.js")>("src/backfill/formats.js");
  const { Client } = (await import("langsmith/lib/client.js")) as unknown as {
    Client: new (c: Record<string, unknown>) => { createRun(r: unknown): Promise<void>; awaitPendingTraceBatches(): Promise<void> };
  };
  const client = new Client({ apiUrl: url, apiKey: "bench", autoBatchTracing: true });
  let line = 0;
  let records = 0;
  let sent = 0;
  for await (const text of createInterface({ input: createReadStream(log), crlfDelay: Infinity })) {
    line++;
    if (!text.trim()) continue;
    records++;
    try {
      const run = callToRun(genericCall(JSON.parse(text) as Record<string, unknown>, line), {
        fingerprint: "bench",
        file: log,
        line,
        project,
        fallbackMs: 0,
      });
      void client.createRun({ ...run, project_name: project });
      sent++;
    } catch {
      // a corrupted line: the peer has no dead-letter file, it just skips
    }
    if (line % 500 === 0) await new Promise((r) => setImmediate(r));
  }
  await client.awaitPendingTraceBatches();
  out = { records, delivered: sent, requests: null, retried: null };
}
const seconds = (performance.now() - t0) / 1000;
console.log(
  JSON.stringify({
    peer,
    ...out,
    seconds,
    recordsPerSec: Number(out.records) / seconds,
    peakRssMiB: process.resourceUsage().maxRSS / 1024,
    project,
  }),
);
