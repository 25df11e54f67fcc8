/**
 * Sustained multipart ingest into the collector over loopback, file-backed
 * SQLite, rate limits off (the collector itself is measured). Printed beside
 * the 600 requests/s that SPEC §8's 6000 / 10 s implies for one API key, to
 * show the collector is not the bottleneck.
 *
 *   npx tsx benchmarks/collector.ts [--seconds 10] [--clients 4] [--batch 100]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { loadBuilt } from "./load.js";

const { createCollector } = await loadBuilt<typeof import("../src/server/app.js")>("src/server/app.js");

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
}
const SECONDS = arg("seconds", 10);
const CLIENTS = arg("clients", 4);
const BATCHES = process.argv.includes("--batch") ? [arg("batch", 100)] : [10, 100];

const filler = "lorem ipsum dolor sit amet ".repeat(60); // ~1.6 KB of inputs/outputs per run

for (const BATCH of BATCHES) await measure(BATCH);

async function measure(BATCH: number): Promise<void> {
const dir = mkdtempSync(join(tmpdir(), "tp-bench-collector-"));
const collector = createCollector({ db: join(dir, "traces.db"), rateLimits: false });
const { url } = await collector.listen(0);

/** A multipart body of BATCH runs (~2 KB each), encoded once per request like a client would. */
async function body(): Promise<{ buf: Buffer; type: string }> {
  const fd = new FormData();
  const now = new Date().toISOString().replace("Z", "000Z");
  for (let i = 0; i < BATCH; i++) {
    const id = randomUUID();
    fd.append(`post.${id}`, new Blob([JSON.stringify({ id, trace_id: id, dotted_order: `20261122T000000000000Z${id}`, name: "bench", run_type: "chain", start_time: now, end_time: now, session_name: "bench" })], { type: "application/json" }));
    fd.append(`post.${id}.inputs`, new Blob([JSON.stringify({ text: filler.slice(0, 800) })], { type: "application/json" }));
    fd.append(`post.${id}.outputs`, new Blob([JSON.stringify({ text: filler.slice(0, 800) })], { type: "application/json" }));
  }
  const req = new Request("http://x", { method: "POST", body: fd });
  return { buf: Buffer.from(await req.arrayBuffer()), type: req.headers.get("content-type")! };
}

// Bodies are encoded before the clock starts so the collector, not the load generator, is measured.
// Re-sent bodies are merged by id (a read and a write per run, like a first insert).
const pool = await Promise.all(Array.from({ length: 64 }, () => body()));
let next = 0;

let requests = 0;
let failures = 0;
const latencies: number[] = [];
const deadline = performance.now() + SECONDS * 1000;
const t0 = performance.now();
await Promise.all(
  Array.from({ length: CLIENTS }, async () => {
    while (performance.now() < deadline) {
      const { buf, type } = pool[next++ % pool.length]!;
      const s = performance.now();
      const res = await fetch(url + "/runs/multipart", { method: "POST", headers: { "content-type": type }, body: buf });
      await res.arrayBuffer();
      latencies.push(performance.now() - s);
      if (res.status === 202) requests++;
      else failures++;
    }
  }),
);
const secs = (performance.now() - t0) / 1000;
const stored = requests * BATCH;
await collector.close();
rmSync(dir, { recursive: true, force: true });

latencies.sort((a, b) => a - b);
const rps = requests / secs;
console.log(`collector benchmark: ${CLIENTS} clients, ${BATCH} runs (~2 KB) per multipart request, ${SECONDS} s, file-backed SQLite (WAL)`);
console.log(`  requests/s  ${rps.toFixed(0).padStart(8)}   (SPEC §8 limit for one API key: 600 requests/s -> ${(rps / 600).toFixed(1)}x headroom)`);
console.log(`  runs/s      ${(stored / secs).toFixed(0).padStart(8)}   (${stored} runs accepted, ${failures} failed requests)`);
console.log(`  latency     median ${latencies[Math.floor(latencies.length / 2)]!.toFixed(1)} ms, p99 ${latencies[Math.floor(latencies.length * 0.99)]!.toFixed(1)} ms`);
console.log(`  peak RSS    ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB so far (collector and clients in one process)`);
}
