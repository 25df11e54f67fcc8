import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** Headers that describe one hop (and a body fetch() re-frames itself), never forwarded. */
const HOP_BY_HOP = new Set(["host", "connection", "content-length", "transfer-encoding", "keep-alive", "expect", "upgrade"]);

export type Verdict = "pass" | { status: number; headers?: Record<string, string>; body?: unknown };

export interface Proxy {
  url: string;
  /** Arrival times (performance.now()) of ingest requests (POST /runs/multipart, /otel/v1/traces) that reached the proxy. */
  times: number[];
  statuses: number[];
  close(): Promise<void>;
}

/**
 * A scripted loopback proxy in front of a real collector: it forwards requests,
 * or answers them itself (a 429, a 500) as `script` decides, and records when
 * each ingest request arrived.
 */
export async function startProxy(target: string, script: (n: number, req: IncomingMessage) => Verdict = () => "pass"): Promise<Proxy> {
  const times: number[] = [];
  const statuses: number[] = [];
  let n = 0;
  const server: Server = createServer(async (req, res) => {
    const ingest = req.method === "POST" && (req.url === "/runs/multipart" || req.url === "/otel/v1/traces");
    // Stamp arrival as a server would count it: when the request line arrives.
    if (ingest) times.push(performance.now());
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const verdict = ingest ? script(++n, req) : "pass";
    if (verdict !== "pass") {
      statuses.push(verdict.status);
      res.writeHead(verdict.status, { "content-type": "application/json", ...verdict.headers });
      res.end(JSON.stringify(verdict.body ?? { detail: `scripted ${verdict.status}` }));
      return;
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string" && !HOP_BY_HOP.has(k)) headers[k] = v;
    try {
      const upstream = await fetch(target + req.url, {
        method: req.method,
        headers,
        body: req.method === "GET" || req.method === "HEAD" ? undefined : body,
      });
      const out = Buffer.from(await upstream.arrayBuffer());
      if (ingest) statuses.push(upstream.status);
      const h: Record<string, string> = {};
      upstream.headers.forEach((v, k) => {
        if (k !== "content-length" && k !== "transfer-encoding" && k !== "connection" && k !== "keep-alive") h[k] = v;
      });
      res.writeHead(upstream.status, h);
      res.end(out);
    } catch {
      res.writeHead(502, { "content-type": "application/json" });
      res.end(JSON.stringify({ detail: "upstream unreachable" }));
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    times,
    statuses,
    close: () =>
      new Promise((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

/** The most requests in any sliding window of `windowMs`. */
export function maxInWindow(times: number[], windowMs: number): number {
  const t = [...times].sort((a, b) => a - b);
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < t.length; hi++) {
    while (t[hi]! - t[lo]! >= windowMs) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}
