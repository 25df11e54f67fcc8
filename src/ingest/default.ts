/** The default client, used by wrappers and traceable() when no `client` is given. */
import { Client, type FlushOptions, type FlushResult } from "./client.js";

let client: Client | undefined;

export function getDefaultClient(): Client {
  return (client ??= new Client());
}

/** Replace the default client (tests, or an app that configures one at start-up). */
export function setDefaultClient(c: Client | undefined): void {
  client = c;
}

/**
 * Flush the default client: `await flush({ timeoutMs })` at the end of a
 * serverless handler. Same options and result as `Client.flush`; with no
 * default client yet, nothing was handed over and the result says so.
 */
export async function flush(opts: FlushOptions = {}): Promise<FlushResult> {
  if (client) return client.flush(opts);
  return { ok: true, timedOut: false, pending: 0, spooled: 0, dropped: 0, deadLettered: 0 };
}
