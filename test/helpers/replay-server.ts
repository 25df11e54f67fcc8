/**
 * A loopback server that replays recorded-style vendor responses to the real
 * `openai`, `@anthropic-ai/sdk` and `@google/genai` clients: JSON bodies, SSE streams (with
 * optional delays between events), error statuses, and streams that break off.
 *
 *   const server = await startReplayServer();
 *   server.push({ json: completion });                       // next request gets this
 *   server.push({ sse: chunks, delayMs: 5 });                // OpenAI-style `data:` stream
 *   server.push({ sse: events, anthropic: true });           // `event:` + `data:` stream
 *   server.push({ sse: events, named: true });               // the same, for Responses API events
 *   server.push({ status: 400, json: { error: {...} } });
 *   server.push({ sse: chunks, breakAfter: 2 });             // close the socket after 2 events
 *   server.push({ sse: chunks, bare: true });                // Gemini: `data:` lines only, no `[DONE]`
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { readFileSync } from "node:fs";

/** A recorded-style vendor payload from test/fixtures/replay. */
export function fixture(name: string): any {
  return JSON.parse(readFileSync(new URL(`../fixtures/replay/${name}`, import.meta.url), "utf8"));
}

export interface Scripted {
  status?: number;
  json?: unknown;
  sse?: unknown[];
  /** Anthropic framing: `event: <type>` lines before each `data:`, no `[DONE]`. */
  anthropic?: boolean;
  /** The same framing for the OpenAI Responses API stream (`event: response.output_text.delta` ...). */
  named?: boolean;
  /** Gemini framing (`:streamGenerateContent?alt=sse`): `data:` lines only, and no `[DONE]` (the SDK parses every data line as JSON). */
  bare?: boolean;
  delayMs?: number;
  breakAfter?: number;
  headers?: Record<string, string>;
}

export interface Recorded {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

export interface ReplayServer {
  url: string;
  requests: Recorded[];
  push(...r: Scripted[]): void;
  close(): Promise<void>;
}

export async function startReplayServer(): Promise<ReplayServer> {
  const script: Scripted[] = [];
  const requests: Recorded[] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    requests.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body: text ? JSON.parse(text) : {} });
    const next = script.shift();
    if (!next) {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "replay server: nothing scripted" } }));
      return;
    }
    if (next.sse) {
      res.writeHead(next.status ?? 200, { "content-type": "text/event-stream", "cache-control": "no-cache", ...next.headers });
      let i = 0;
      const named = next.anthropic === true || next.named === true;
      for (const ev of next.sse) {
        if (next.breakAfter !== undefined && i === next.breakAfter) {
          // Let what was written reach the client first, then cut the connection mid-stream.
          await new Promise((r) => setTimeout(r, 30));
          res.socket?.destroy();
          return;
        }
        const type = (ev as { type?: string }).type;
        res.write(`${named && type ? `event: ${type}\n` : ""}data: ${JSON.stringify(ev)}\n\n`);
        i++;
        if (next.delayMs) await new Promise((r) => setTimeout(r, next.delayMs));
      }
      if (!named && !next.bare) res.write("data: [DONE]\n\n");
      res.end();
      return;
    }
    const body = JSON.stringify(next.json ?? {});
    res.writeHead(next.status ?? 200, { "content-type": "application/json", "x-request-id": `req_${requests.length}`, ...next.headers });
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    push: (...r) => script.push(...r),
    close: () =>
      new Promise((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
