/**
 * The collector over PostgreSQL when the database goes away: PostgreSQL is
 * stopped (`pg_ctl -m fast stop`) while a real tracepipe Client sends runs,
 * then started again. Meanwhile the collector answers 503 with Retry-After
 * (never 500) and /info says the store is down; afterwards the pool has
 * reconnected by itself and every run has arrived exactly once, complete.
 */
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "../../src/ingest/client.js";
import { createCollector, type Collector } from "../../src/server/app.js";
import { openStore } from "../../src/store/open.js";
import { skipWithoutPostgres, startPostgres, type RunningPostgres } from "../helpers/postgres.js";
import { tempDir } from "../helpers/runs.js";
import { expectEveryRunOnce } from "../helpers/outage.js";

const skip = skipWithoutPostgres();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(skip)("collector over PostgreSQL: database outage", () => {
  let pg: RunningPostgres;
  let collector: Collector;
  let url: string;
  beforeAll(async () => {
    pg = await startPostgres();
    const store = await openStore(await pg.database(), {});
    collector = await createCollector({ db: store, rateLimits: false });
    url = (await collector.listen(0)).url;
  }, 120_000);
  afterAll(async () => {
    await collector?.close();
    await collector?.store.close();
    await pg?.close();
  });

  it("answers 503 with Retry-After while PostgreSQL is down, and loses or doubles no run the Client sent", async () => {
    const dir = tempDir("tp-pg-outage-");
    const warnings: string[] = [];
    const client = new Client({
      endpoint: url,
      project: "outage",
      spoolDir: join(dir, "spool"),
      deadLetterPath: join(dir, "dead.jsonl"),
      batchSize: 10,
      flushIntervalMs: 20,
      backoff: { baseMs: 50, maxMs: 1000 },
      maxAttempts: 1000,
      exitHooks: false,
      warn: (m) => warnings.push(m),
    });
    const ids: string[] = [];
    const send = (n: number) => {
      for (let i = 0; i < n; i++) {
        const id = randomUUID();
        ids.push(id);
        const start = new Date().toISOString();
        client.createRun({
          id,
          trace_id: id,
          dotted_order: `${start.replace(/[-:.]/g, "").replace("Z", "000Z")}${id}`,
          name: `run ${ids.length}`,
          run_type: "chain",
          start_time: start,
          inputs: { n: ids.length },
        });
        client.updateRun(id, { end_time: new Date().toISOString(), outputs: { done: true } });
      }
    };
    send(50);
    await client.flush({ timeoutMs: 30_000 });
    expect(await collector.store.countRuns("outage")).toBe(50);

    await pg.stop();
    // Sent while the database is away: the collector refuses them for now, the Client holds them.
    send(50);
    const down = await fetch(`${url}/runs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        id: randomUUID(),
        trace_id: randomUUID(),
        dotted_order: "x",
        name: "probe",
        run_type: "chain",
        start_time: new Date().toISOString(),
      }),
    });
    expect(down.status).toBe(503);
    expect(Number(down.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(((await down.json()) as { detail: string }).detail).toMatch(/unavailable/);
    const info = (await (await fetch(`${url}/info`)).json()) as { store: { ok: boolean; error?: string } };
    expect(info.store.ok).toBe(false);
    await sleep(300);
    send(50);

    await pg.start();
    send(50);
    const result = await client.flush({ timeoutMs: 60_000 });
    expect(result).toMatchObject({ ok: true, dropped: 0, deadLettered: 0 });
    await client.shutdown({ timeoutMs: 10_000 });

    await expectEveryRunOnce(url, collector.store, "outage", ids);
  }, 120_000);
});
