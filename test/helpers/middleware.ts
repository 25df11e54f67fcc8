/** A node:http server on loopback running a middleware chain, for the middleware tests. */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { sendReply } from "../../src/server/http.js";
import { compose, exchangeOf, type Middleware, type Terminal } from "../../src/server/middleware/compose.js";

export interface Served {
  url: string;
  close(): Promise<void>;
}

/** Serves `middleware` in order, ending in `last` (default: 200 `{ok: true}`). */
export async function serveChain(
  middleware: Middleware[],
  last: Terminal = async () => ({ status: 200, body: { ok: true } }),
): Promise<Served> {
  const handle = compose(middleware, last);
  const server = createServer((req, res) => {
    handle(exchangeOf(req, res)).then(
      (reply) => sendReply(res, reply),
      (err: Error) => sendReply(res, { status: 599, body: { unhandled: err.message } }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
