/**
 * A keep-alive HTTP/1.1 connection for the load generators: it writes a
 * request head built once and a body, one request at a time, and reads
 * each response's status, skipping its body (by content-length or chunked).
 * A load generator on fetch spends more CPU per request than the
 * collector it measures spends on a small batch, on the same cores; this
 * spends a few microseconds. The head holds the header lines fetch sends,
 * in fetch's order, so the collector reads the same bytes either way.
 */
import { connect, type Socket } from "node:net";

/** The request head fetch (undici) sends for a POST with a body of `length` bytes. */
export function requestHead(url: URL, contentType: string, length: number): Buffer {
  return Buffer.from(
    `POST ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\nconnection: keep-alive\r\ncontent-type: ${contentType}\r\n` +
      `accept: */*\r\naccept-language: *\r\nsec-fetch-mode: cors\r\nuser-agent: node\r\naccept-encoding: gzip, deflate\r\n` +
      `content-length: ${length}\r\n\r\n`,
    "latin1",
  );
}

const CRLF2 = Buffer.from("\r\n\r\n");

/** How far a response read so far extends: its whole length in bytes once known, and whether the server closes after it. */
function responseEnd(buf: Buffer): { status: number; end: number; close: boolean } | undefined {
  const headEnd = buf.indexOf(CRLF2);
  if (headEnd < 0) return undefined;
  const head = buf.toString("latin1", 0, headEnd).toLowerCase();
  const status = Number(head.slice(9, 12));
  const close = /\r\nconnection: *close/.test(head);
  const length = /\r\ncontent-length: *(\d+)/.exec(head);
  let at = headEnd + 4;
  if (length) {
    const end = at + Number(length[1]);
    return end <= buf.length ? { status, end, close } : undefined;
  }
  if (!/\r\ntransfer-encoding: *chunked/.test(head)) return { status, end: at, close };
  for (;;) {
    const line = buf.indexOf("\r\n", at);
    if (line < 0) return undefined;
    const size = parseInt(buf.toString("latin1", at, line), 16);
    at = line + 2 + size + 2;
    if (at > buf.length) return undefined;
    if (size === 0) return { status, end: at, close };
  }
}

interface Waiter {
  socket: Socket;
  resolve: (status: number) => void;
  reject: (err: Error) => void;
}

export class RawHttpConnection {
  private socket: Socket | undefined;
  private pending: Buffer = Buffer.alloc(0);
  /** The request in flight, and the socket it went out on (a closed earlier socket must not fail it). */
  private waiter: Waiter | undefined;

  constructor(private readonly url: URL) {}

  private settle(s: Socket): Waiter | undefined {
    const w = this.waiter;
    if (w?.socket !== s) return undefined;
    this.waiter = undefined;
    return w;
  }

  private open(): Socket {
    const s = connect({ host: this.url.hostname, port: Number(this.url.port) });
    s.setNoDelay(true);
    s.on("data", (d: Buffer) => {
      if (this.socket !== s) return;
      this.pending = this.pending.length ? Buffer.concat([this.pending, d]) : d;
      const r = responseEnd(this.pending);
      if (!r) return;
      this.pending = this.pending.subarray(r.end);
      const w = this.settle(s);
      if (r.close) this.drop(s);
      w?.resolve(r.status);
    });
    const fail = (err: Error) => {
      this.drop(s);
      this.settle(s)?.reject(err);
    };
    s.on("error", fail);
    s.on("close", () => fail(new Error("connection closed before the response")));
    return s;
  }

  private drop(s: Socket): void {
    if (this.socket === s) {
      this.socket = undefined;
      this.pending = Buffer.alloc(0);
    }
    s.destroy();
  }

  /** Send one request (head, then body) and resolve with the response's status. */
  send(head: Buffer, body: Buffer): Promise<number> {
    const s = (this.socket ??= this.open());
    return new Promise((resolve, reject) => {
      this.waiter = { socket: s, resolve, reject };
      s.cork();
      s.write(head);
      s.write(body);
      s.uncork();
    });
  }

  close(): void {
    if (this.socket) this.drop(this.socket);
  }
}
