import { createServer } from "node:http";
import { connect } from "node:net";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { dropIdleSockets, serverTimeouts } from "../../../src/server/middleware/timeouts.js";
import { DEFAULT_TIMEOUTS } from "../../../src/server/limits.js";

describe("connection timeouts", () => {
  it("maps the collector's timeouts onto node:http, the request deadline never shorter than the headers'", () => {
    const o = serverTimeouts({ ...DEFAULT_TIMEOUTS, headersMs: 8000, requestMs: 4000 });
    expect(o).toMatchObject({
      headersTimeout: 8000,
      requestTimeout: 8000,
      keepAliveTimeout: DEFAULT_TIMEOUTS.keepAliveMs,
      connectionsCheckingInterval: 1000,
    });
    expect(serverTimeouts({ ...DEFAULT_TIMEOUTS, headersMs: 100 }).connectionsCheckingInterval).toBe(25);
  });

  it("drops a connection that sends nothing", async () => {
    const server = createServer((_req, res) => res.end());
    dropIdleSockets(server, 200);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const socket = connect((server.address() as AddressInfo).port, "127.0.0.1");
      const closedAt = await new Promise<number>((resolve) => socket.on("close", () => resolve(Date.now())));
      expect(closedAt).toBeGreaterThan(0);
    } finally {
      server.close();
    }
  });
});
