/**
 * One measured delivery run, in its own process so peak RSS belongs to it alone:
 *   node --import tsx benchmarks/ingest-worker.ts <tracepipe|langsmith> <url> <N> <runBytes>
 * Prints one JSON line: {client, n, bytes, seconds, runsPerSec, requests, peakRssMiB}.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadBuilt } from "./load.js";

const [which, url, nArg, bytesArg] = process.argv.slice(2) as [string, string, string, string];
const N = Number(nArg);
const BYTES = Number(bytesArg);
const project = `bench-${which}-${N}-${BYTES}-${process.pid}`;
const text = "lorem ipsum dolor sit amet, consectetur adipiscing elit ".repeat(Math.ceil(BYTES / 56)).slice(0, Math.max(0, BYTES - 400));
const messages = BYTES > 10_000;

/** Runs are made lazily, one at a time, so the producer holds none of them. */
function run(i: number) {
  const id = randomUUID();
  const start = new Date(Date.UTC(2026, 10, 22, 10, 0, 0) + i).toISOString();
  return {
    id,
    trace_id: id,
    dotted_order: `${start.replace(/[-:.]/g, "").replace("Z", "000Z")}${id}`,
    name: "bench",
    run_type: messages ? "llm" : "chain",
    start_time: start,
    end_time: start,
    inputs: messages ? { messages: [{ role: "user", content: [{ type: "text", text: text.slice(0, text.length / 2) }] }] } : { text },
    outputs: messages
      ? { messages: [{ role: "assistant", content: [{ type: "text", text: text.slice(text.length / 2) }] }] }
      : { ok: true },
  };
}

const yieldNow = () => new Promise((r) => setImmediate(r));
// Modules load before the clock starts: their import time is not delivery.
const tpModule = which === "tracepipe" ? await loadBuilt<typeof import("../src/ingest/index.js")>("src/ingest/index.js") : undefined;
type LsClient = new (c: Record<string, unknown>) => { createRun(r: unknown): Promise<void>; awaitPendingTraceBatches(): Promise<void> };
const lsModule = which === "tracepipe" ? undefined : ((await import("langsmith/lib/client.js")) as unknown as { Client: LsClient });
let requests: number | null = null;
const t0 = performance.now();
if (tpModule) {
  const { Client } = tpModule;
  const dir = mkdtempSync(join(tmpdir(), "tp-bench-ingest-"));
  const client = new Client({
    endpoint: url,
    apiKey: "bench",
    project,
    spoolDir: join(dir, "spool"),
    deadLetterPath: join(dir, "dl.jsonl"),
    exitHooks: false,
  });
  for (let i = 0; i < N; i++) {
    client.createRun(run(i));
    if (i % 500 === 499) await yieldNow();
  }
  await client.flush();
  requests = client.stats.requests;
  await client.shutdown();
} else {
  const { Client } = lsModule!;
  const client = new Client({ apiUrl: url, apiKey: "bench", autoBatchTracing: true });
  for (let i = 0; i < N; i++) {
    void client.createRun({ ...run(i), project_name: project });
    if (i % 500 === 499) await yieldNow();
  }
  await client.awaitPendingTraceBatches();
}
const seconds = (performance.now() - t0) / 1000;
// Count what arrived, so a client that drops runs cannot look fast.
const res = await fetch(`${url}/runs/query`, {
  method: "POST",
  headers: { "content-type": "application/json", "x-api-key": "bench" },
  body: JSON.stringify({ project, limit: 1 }),
});
await res.arrayBuffer();
console.log(
  JSON.stringify({
    client: which,
    n: N,
    bytes: BYTES,
    seconds,
    runsPerSec: N / seconds,
    requests,
    peakRssMiB: process.resourceUsage().maxRSS / 1024,
    project,
  }),
);
