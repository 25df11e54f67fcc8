import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Client } from "../../src/ingest/client.js";
import { flush, setDefaultClient } from "../../src/ingest/default.js";
import { makeRun, tempDir } from "../helpers/runs.js";

afterEach(() => setDefaultClient(undefined));

describe("flush() of the default client", () => {
  it("answers ok when nothing was handed over", async () => {
    expect(await flush({ timeoutMs: 10 })).toMatchObject({ ok: true, timedOut: false, pending: 0 });
  });

  it("honours timeoutMs with the endpoint down, and says what was not delivered", async () => {
    const dir = tempDir("tp-default-flush-");
    const client = new Client({
      endpoint: "http://127.0.0.1:9",
      apiKey: "k",
      spoolDir: join(dir, "spool"),
      exitHooks: false,
      warn: () => {},
      backoff: { baseMs: 1000, maxMs: 1000 },
    });
    setDefaultClient(client);
    for (let i = 0; i < 5; i++) client.createRun(makeRun("down"));
    const r = await flush({ timeoutMs: 300 });
    expect(r.ok).toBe(false);
    expect(r.pending + r.spooled).toBeGreaterThan(0);
    await client.shutdown({ timeoutMs: 100 });
  });
});
