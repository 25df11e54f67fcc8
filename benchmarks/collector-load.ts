/**
 * The load generator for benchmarks/collector.ts, in its own process so its
 * CPU is not charged to the collector:
 *   node --import tsx benchmarks/collector-load.ts <url[,url...]> <seconds> <clients> <batch> [v4|v7] [rate]
 * With several URLs (collectors side by side), requests go to them in turn.
 * Without a rate (or 0) each client sends its next request as soon as the
 * last is answered: the collectors' saturation. With `rate` (requests/s, all
 * clients together) the k-th request leaves at k/rate seconds, or as soon as
 * a client is free when it is late: a fixed offered load, whatever the
 * number of collectors it is spread over (up to what `clients` connections
 * can carry; `offered` in the answer says what was asked). Latency counts
 * from a request's send, so a schedule that falls behind shows as fewer
 * requests/s than offered, not as longer latency.
 * Every request carries BATCH runs (~2 KB each) with fresh ids
 * (benchmarks/run-bodies.ts): random v4 ids, or with `v7` time-ordered
 * UUIDv7 ids and the request's own start/end times. Prints one JSON line:
 * {requests, failures, failedWith (by status, 0 for a failed connection), offered (requests/s, 0 for as fast as answered), runs, seconds, latencyMedianMs, latencyP99Ms, cpuMs,
 * cpuUsPerRequest, voluntarySwitches, involuntarySwitches}: the CPU and the
 * switches are this process's own, over the sending only (not its start-up),
 * so a benchmark can charge it.
 *
 * Each client holds one keep-alive connection per URL and writes a request
 * head built once and the body (benchmarks/raw-http.ts): the same bytes
 * fetch would send, for a few microseconds of this process's CPU instead of
 * fetch's hundreds, which would come out of the cores the collectors and the
 * database are measured on.
 */
import { RawHttpConnection, requestHead } from "./raw-http.js";
import { runBodies } from "./run-bodies.js";

const [urlArg, secondsArg, clientsArg, batchArg, idsArg, rateArg] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string | undefined,
  string | undefined,
];
const TIME_ORDERED = idsArg === "v7";
const RATE = Number(rateArg ?? "0");
const urls = urlArg.split(",");
let turn = 0;
const SECONDS = Number(secondsArg);
const CLIENTS = Number(clientsArg);
const BATCH = Number(batchArg);
const bodies = await runBodies(BATCH, TIME_ORDERED);
const targets = urls.map((u) => new URL(u.replace(/\/$/, "") + "/runs/multipart"));
const heads = targets.map((t) => requestHead(t, bodies.contentType, bodies.length));

let requests = 0;
let failures = 0;
/** Failed requests by status (0: the connection failed before a response). */
const failedWith: Record<number, number> = {};
const latencies: number[] = [];
const usage0 = process.resourceUsage();
const t0 = performance.now();
const deadline = t0 + SECONDS * 1000;
/** The next request's slot in the paced schedule (with a rate). */
let slot = 0;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
await Promise.all(
  Array.from({ length: CLIENTS }, async () => {
    const connections = targets.map((t) => new RawHttpConnection(t));
    while (performance.now() < deadline) {
      if (RATE > 0) {
        const due = t0 + (slot++ * 1000) / RATE;
        if (due >= deadline) break;
        const early = due - performance.now();
        if (early > 0) await sleep(early);
      }
      const body = bodies.fresh();
      const i = turn++ % urls.length;
      const s = performance.now();
      const status = await connections[i]!.send(heads[i]!, body).catch(() => 0);
      latencies.push(performance.now() - s);
      if (status === 202) requests++;
      else {
        failures++;
        failedWith[status] = (failedWith[status] ?? 0) + 1;
      }
    }
    for (const c of connections) c.close();
  }),
);
const seconds = (performance.now() - t0) / 1000;
const usage = process.resourceUsage();
latencies.sort((a, b) => a - b);
console.log(
  JSON.stringify({
    requests,
    failures,
    failedWith,
    offered: RATE,
    runs: requests * BATCH,
    seconds,
    latencyMedianMs: latencies[latencies.length >> 1],
    latencyP99Ms: latencies[Math.floor(latencies.length * 0.99)],
    cpuMs: (usage.userCPUTime + usage.systemCPUTime - usage0.userCPUTime - usage0.systemCPUTime) / 1000,
    cpuUsPerRequest:
      (usage.userCPUTime + usage.systemCPUTime - usage0.userCPUTime - usage0.systemCPUTime) / Math.max(1, requests + failures),
    voluntarySwitches: usage.voluntaryContextSwitches - usage0.voluntaryContextSwitches,
    involuntarySwitches: usage.involuntaryContextSwitches - usage0.involuntaryContextSwitches,
  }),
);
