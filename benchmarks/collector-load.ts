/**
 * The load generator for benchmarks/collector.ts, in its own process so its
 * CPU is not charged to the collector:
 *   node --import tsx benchmarks/collector-load.ts <url[,url...]> <seconds> <clients> <batch> [v4|v7]
 * With several URLs (collectors side by side), requests go to them in turn.
 * Every request carries BATCH runs (~2 KB each) with fresh ids
 * (benchmarks/run-bodies.ts): random v4 ids, or with `v7` time-ordered
 * UUIDv7 ids and the request's own start/end times. Prints one JSON line:
 * {requests, failures, runs, seconds, latencyMedianMs, latencyP99Ms, cpuMs,
 * voluntarySwitches, involuntarySwitches}: the last three are this process's
 * own, over the sending only (not its start-up), so a benchmark can charge it.
 */
import { runBodies } from "./run-bodies.js";

const [urlArg, secondsArg, clientsArg, batchArg, idsArg] = process.argv.slice(2) as [string, string, string, string, string | undefined];
const TIME_ORDERED = idsArg === "v7";
const urls = urlArg.split(",");
let turn = 0;
const SECONDS = Number(secondsArg);
const CLIENTS = Number(clientsArg);
const BATCH = Number(batchArg);
const bodies = await runBodies(BATCH, TIME_ORDERED);

let requests = 0;
let failures = 0;
const latencies: number[] = [];
const usage0 = process.resourceUsage();
const t0 = performance.now();
const deadline = t0 + SECONDS * 1000;
await Promise.all(
  Array.from({ length: CLIENTS }, async () => {
    while (performance.now() < deadline) {
      const body = bodies.fresh();
      const s = performance.now();
      const res = await fetch(urls[turn++ % urls.length] + "/runs/multipart", {
        method: "POST",
        headers: { "content-type": bodies.contentType },
        body,
      });
      await res.arrayBuffer();
      latencies.push(performance.now() - s);
      if (res.status === 202) requests++;
      else failures++;
    }
  }),
);
const seconds = (performance.now() - t0) / 1000;
const usage = process.resourceUsage();
latencies.sort((a, b) => a - b);
console.log(
  JSON.stringify({
    requests,
    failures,
    runs: requests * BATCH,
    seconds,
    latencyMedianMs: latencies[latencies.length >> 1],
    latencyP99Ms: latencies[Math.floor(latencies.length * 0.99)],
    cpuMs: (usage.userCPUTime + usage.systemCPUTime - usage0.userCPUTime - usage0.systemCPUTime) / 1000,
    voluntarySwitches: usage.voluntaryContextSwitches - usage0.voluntaryContextSwitches,
    involuntarySwitches: usage.involuntaryContextSwitches - usage0.involuntaryContextSwitches,
  }),
);
