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
 *   server.push({ sse: events, eventstream: true });         // Bedrock ConverseStream: binary event-stream frames
 *
 * `startReplayServer({ http2: true })` speaks HTTP/2 over cleartext (prior
 * knowledge), which is what the AWS SDK's default handler for Bedrock Runtime
 * (NodeHttp2Handler) uses against an `http://` endpoint.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import { constants as h2, createServer as createH2Server, type Http2ServerResponse, type Http2Session } from "node:http2";
import type { AddressInfo, Socket } from "node:net";
import { readFileSync } from "node:fs";
import { EventStreamCodec } from "@smithy/eventstream-codec";

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
  /**
   * AWS event-stream framing (`application/vnd.amazon.eventstream`), as Bedrock's
   * ConverseStream answers: each element is a union object `{member: payload}`,
   * sent as one binary frame with `:event-type: member` and the payload as JSON;
   * a member named `*Exception` is sent as an exception frame, as the service does.
   */
  eventstream?: boolean;
  delayMs?: number;
  breakAfter?: number;
  headers?: Record<string, string>;
}

// The codec only needs UTF-8 both ways; Node's own encoder and decoder do that.
const codec = new EventStreamCodec(
  (bytes) => new TextDecoder().decode(bytes),
  (text) => new TextEncoder().encode(text),
);

/** One `{member: payload}` event as an AWS event-stream frame. */
function eventFrame(ev: Record<string, unknown>): Uint8Array {
  const [member, payload] = Object.entries(ev)[0] ?? ["unknown", {}];
  const kind = member.endsWith("Exception") ? "exception" : "event";
  return codec.encode({
    headers: {
      ":message-type": { type: "string", value: kind },
      [kind === "exception" ? ":exception-type" : ":event-type"]: { type: "string", value: member },
      ":content-type": { type: "string", value: "application/json" },
    },
    body: new TextEncoder().encode(JSON.stringify(payload)),
  });
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

/** Cut the response off mid-stream: the HTTP/1.1 socket, or the HTTP/2 stream alone (the session lives on, as with a real server). */
function breakOff(res: ServerResponse): void {
  const stream = (res as unknown as Partial<Http2ServerResponse>).stream;
  if (stream) stream.close(h2.NGHTTP2_INTERNAL_ERROR);
  else res.socket?.destroy();
}

export async function startReplayServer(opts: { http2?: boolean } = {}): Promise<ReplayServer> {
  const script: Scripted[] = [];
  const requests: Recorded[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
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
    if (next.sse && next.eventstream) {
      res.writeHead(next.status ?? 200, {
        "content-type": "application/vnd.amazon.eventstream",
        "x-amzn-requestid": `req_${requests.length}`,
        ...next.headers,
      });
      let i = 0;
      for (const ev of next.sse) {
        if (next.breakAfter !== undefined && i === next.breakAfter) {
          await new Promise((r) => setTimeout(r, 30));
          breakOff(res);
          return;
        }
        res.write(eventFrame(ev as Record<string, unknown>));
        i++;
        if (next.delayMs) await new Promise((r) => setTimeout(r, next.delayMs));
      }
      res.end();
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
          breakOff(res);
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
  };
  const sessions = new Set<Http2Session>();
  const sockets = new Set<Socket>();
  const server = opts.http2
    ? // HTTP/2's compatibility request and response offer what `handle` uses (headers, url, writeHead, write, end).
      createH2Server((req, res) => void handle(req as unknown as IncomingMessage, res as unknown as ServerResponse))
        .on("session", (sess) => {
          sessions.add(sess);
          sess.on("close", () => sessions.delete(sess));
        })
        .on("connection", (sock: Socket) => {
          sockets.add(sock);
          sock.on("close", () => sockets.delete(sock));
        })
    : // An idle keep-alive socket stays open for the whole file: with Node's 5 s default, a
      // test that pauses that long on a busy machine races the server's close with its next
      // request on the same socket, and the SDK sees ECONNRESET.
      createServer({ keepAliveTimeout: 120_000 }, (req, res) => void handle(req, res));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    push: (...r) => script.push(...r),
    close: () =>
      new Promise((r) => {
        server.close(() => r());
        if ("closeAllConnections" in server) server.closeAllConnections();
        // A session whose client left a stream unread keeps its socket past destroy(): end the sockets themselves.
        for (const sess of sessions) sess.destroy();
        for (const sock of sockets) sock.destroy();
      }),
  };
}
