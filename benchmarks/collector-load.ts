/**
 * The load generator for benchmarks/collector.ts, in its own process so its
 * CPU is not charged to the collector:
 *   node --import tsx benchmarks/collector-load.ts <url[,url...]> <seconds> <clients> <batch> [v4|v7]
 * With several URLs (collectors side by side), requests go to them in turn.
 * Every request carries BATCH runs (~2 KB each) with fresh ids: a multipart
 * body is encoded once as a template, and each request gets a copy with new
 * UUIDs written over the template's, so each run is a first insert and making
 * a body costs a copy, not an encoding. Ids are random (v4, every index
 * insert lands on a random page: the store's worst case) unless `v7` is
 * given: then ids are time-ordered UUIDv7 (what tracepipe's Client and recent
 * langsmith SDKs send) and start/end times are the request's own, so runs
 * arrive in time order as they do from live clients. Prints one JSON line:
 * {requests, failures, runs, seconds, latencyMedianMs, latencyP99Ms}.
 */
import { randomUUID } from "node:crypto";
import { uuidv7 } from "../src/run/ids.js";

const [urlArg, secondsArg, clientsArg, batchArg, idsArg] = process.argv.slice(2) as [string, string, string, string, string | undefined];
const TIME_ORDERED = idsArg === "v7";
const urls = urlArg.split(",");
let turn = 0;
const SECONDS = Number(secondsArg);
const CLIENTS = Number(clientsArg);
const BATCH = Number(batchArg);
const filler = "lorem ipsum dolor sit amet ".repeat(60).slice(0, 800);

const templateIds = Array.from({ length: BATCH }, () => randomUUID());
const fd = new FormData();
const now = new Date().toISOString().replace("Z", "000Z");
for (const id of templateIds) {
  fd.append(
    `post.${id}`,
    new Blob(
      [
        JSON.stringify({
          id,
          trace_id: id,
          dotted_order: `20261122T000000000000Z${id}`,
          name: "bench",
          run_type: "chain",
          start_time: now,
          end_time: now,
          session_name: "bench",
        }),
      ],
      { type: "application/json" },
    ),
  );
  fd.append(`post.${id}.inputs`, new Blob([JSON.stringify({ text: filler })], { type: "application/json" }));
  fd.append(`post.${id}.outputs`, new Blob([JSON.stringify({ text: filler })], { type: "application/json" }));
}
const req = new Request("http://x", { method: "POST", body: fd });
const template = Buffer.from(await req.arrayBuffer());
const type = req.headers.get("content-type")!;
/** Where each template id sits in the body (part names, id, trace_id, dotted_order). */
const offsets = templateIds.map((id) => {
  const at: number[] = [];
  for (let i = template.indexOf(id); i >= 0; i = template.indexOf(id, i + 1)) at.push(i);
  return at;
});

/** Where the template's start and end times sit (each run's are the template's `now`). */
const timeOffsets: number[] = [];
for (let i = template.indexOf(now); i >= 0; i = template.indexOf(now, i + 1)) timeOffsets.push(i);

function freshBody(): Buffer {
  const b = Buffer.from(template);
  for (const at of offsets) {
    const id = TIME_ORDERED ? uuidv7() : randomUUID();
    for (const i of at) b.write(id, i, "latin1");
  }
  if (TIME_ORDERED) {
    const t = new Date().toISOString().replace("Z", "000Z");
    for (const i of timeOffsets) b.write(t, i, "latin1");
  }
  return b;
}

let requests = 0;
let failures = 0;
const latencies: number[] = [];
const t0 = performance.now();
const deadline = t0 + SECONDS * 1000;
await Promise.all(
  Array.from({ length: CLIENTS }, async () => {
    while (performance.now() < deadline) {
      const body = freshBody();
      const s = performance.now();
      const res = await fetch(urls[turn++ % urls.length] + "/runs/multipart", { method: "POST", headers: { "content-type": type }, body });
      await res.arrayBuffer();
      latencies.push(performance.now() - s);
      if (res.status === 202) requests++;
      else failures++;
    }
  }),
);
const seconds = (performance.now() - t0) / 1000;
latencies.sort((a, b) => a - b);
console.log(
  JSON.stringify({
    requests,
    failures,
    runs: requests * BATCH,
    seconds,
    latencyMedianMs: latencies[latencies.length >> 1],
    latencyP99Ms: latencies[Math.floor(latencies.length * 0.99)],
  }),
);
