/** The default client, used by wrappers and traceable() when no `client` is given. */
import { Client } from "./client.js";

let client: Client | undefined;

export function getDefaultClient(): Client {
  return (client ??= new Client());
}

/** Replace the default client (tests, or an app that configures one at start-up). */
export function setDefaultClient(c: Client | undefined): void {
  client = c;
}

/** Flush the default client: `await flush()` at the end of a serverless handler. */
export async function flush(): Promise<void> {
  if (client) await client.flush();
}
