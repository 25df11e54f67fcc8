/**
 * A light stand-in for the collector, for benchmarks that measure the client
 * side (overhead.ts, otel.ts): it reads each request, counts the run ids it
 * carries per API key (so a tracer that drops runs cannot look fast) and
 * answers at once, storing nothing. Runs in its own process, so its CPU is not
 * charged to the tracers being measured; the SQLite collector would add
 * seconds of writes on the same two cores and make the figures swing.
 *
 *   node benchmarks/capture-server.ts   # (through tsx) prints "listening on http://…"
 *
 * Answers: GET /info (the collector's batch limits, no compression flags);
 * POST /runs/multipart (post.<id> / patch.<id> parts), POST /runs/batch
 * ({post, patch} JSON), POST /runs, PATCH /runs/<id>; POST /v1/traces and
 * /otel/v1/traces (OTLP, JSON or protobuf: counted as requests and bytes);
 * GET /count?key=<api key> -> {runs, requests, bytes}.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";

interface Tally {
  ids: Set<string>;
  requests: number;
  bytes: number;
}
const tallies = new Map<string, Tally>();
const tally = (key: string) => {
  let t = tallies.get(key);
  if (!t) tallies.set(key, (t = { ids: new Set(), requests: 0, bytes: 0 }));
  return t;
};
const PART = /name="(?:post|patch)\.([0-9a-fA-F-]{36})"/g;
const info = JSON.stringify({
  version: "capture",
  batch_ingest_config: {
    use_multipart_endpoint: true,
    size_limit: 1000,
    size_limit_bytes: 20_971_520,
    max_body_bytes: 26_214_400,
    supports_gzip: true,
  },
});

const server = createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on("data", (c: Buffer) => parts.push(c));
  req.on("end", () => {
    const url = new URL(req.url ?? "/", "http://x");
    if (req.method === "GET" && url.pathname === "/info") return reply(res, 200, info);
    if (req.method === "GET" && url.pathname === "/count") {
      const t = tally(url.searchParams.get("key") ?? "");
      return reply(res, 200, JSON.stringify({ runs: t.ids.size, requests: t.requests, bytes: t.bytes }));
    }
    let body = Buffer.concat(parts);
    if (req.headers["content-encoding"] === "gzip") body = gunzipSync(body);
    const t = tally(String(req.headers["x-api-key"] ?? ""));
    t.requests++;
    t.bytes += body.length;
    const path = url.pathname;
    if (path.endsWith("/v1/traces")) return reply(res, 200, String(req.headers["content-type"]).includes("json") ? "{}" : "");
    if (path === "/runs/multipart") {
      for (const m of body.toString("latin1").matchAll(PART)) t.ids.add(m[1]!);
    } else if (path === "/runs/batch") {
      const b = JSON.parse(body.toString("utf8")) as { post?: { id: string }[]; patch?: { id: string }[] };
      for (const r of [...(b.post ?? []), ...(b.patch ?? [])]) t.ids.add(r.id);
    } else if (path === "/runs" && req.method === "POST") {
      t.ids.add((JSON.parse(body.toString("utf8")) as { id: string }).id);
    } else if (path.startsWith("/runs/") && req.method === "PATCH") {
      t.ids.add(path.slice("/runs/".length));
    } else return reply(res, 404, '{"detail":"not found"}');
    reply(res, 202, '{"success":true}');
  });
});

function reply(res: import("node:http").ServerResponse, status: number, body: string): void {
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`));
