/**
 * Slow or silent clients do not hold connections (docs/collector-api.md, "Limits"):
 * headers and whole requests have deadlines (408), idle keep-alive connections
 * close, and a socket with no traffic at all is dropped.
 */
import type { Server, ServerOptions } from "node:http";
import type { CollectorTimeouts } from "../limits.js";

/** node:http's options for the deadlines; Node checks the first two every connectionsCheckingInterval. */
export function serverTimeouts(t: CollectorTimeouts): ServerOptions {
  return {
    headersTimeout: t.headersMs,
    requestTimeout: Math.max(t.requestMs, t.headersMs),
    keepAliveTimeout: t.keepAliveMs,
    connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(t.headersMs / 4))),
  };
}

/** Drops a connection after `idleSocketMs` without traffic. */
export function dropIdleSockets(server: Server, idleSocketMs: number): void {
  server.on("connection", (socket) => {
    // With no 'timeout' listener on the server, node:http destroys a socket that times out.
    socket.setTimeout(idleSocketMs);
  });
}
