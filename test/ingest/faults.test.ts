import { afterEach, describe, expect, it } from "vitest";
import { sql } from "../helpers/collector.js";
import { join } from "node:path";
import { Client } from "../../src/ingest/index.js";
import { createCollector, type Collector } from "../../src/server/app.js";
import { startProxy, type Verdict } from "../helpers/proxy.js";
import { tempDir } from "../helpers/runs.js";
import { runChild } from "./child.js";

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("fault injection: outage, 503s, an exit mid-flight and concurrent updates", () => {
  it("ends with every run stored once, holding its newest update", async () => {
    const dir = tempDir("tp-faults-");
    const db = join(dir, "traces.db");
    const spoolDir = join(dir, "spool");
    let col: Collector = await createCollector({ db, rateLimits: false });
    const { url } = await col.listen(0, "127.0.0.1");
    const port = Number(new URL(url).port);
    cleanup.push(() => col.close());
    // Every fourth ingest request is answered 503 by the proxy, whatever else happens.
    const proxy = await startProxy(url, (n): Verdict => (n % 4 === 0 ? { status: 503, headers: { "retry-after": "0" } } : "pass"));
    cleanup.push(() => proxy.close());

    // 1. A process creates 300 runs, updates each twice and exits while the first updates are in flight.
    await runChild(proxy.url, spoolDir, 300, "faults", -1);
    const ids = (sql(col.store).prepare("SELECT id FROM runs WHERE session_name = 'faults'").all() as { id: string }[]).map((r) => r.id);
    expect(ids).toHaveLength(300);
    const last = new Map<string, number>(ids.map((id) => [id, 2]));

    // 2. The collector goes down. The next process replays the spool into the outage and gives up for now.
    await col.close();
    const c = new Client({
      endpoint: proxy.url,
      apiKey: "k",
      spoolDir,
      deadLetterPath: join(dir, "dead.jsonl"),
      exitHooks: false,
      maxAttempts: 3,
      backoff: { baseMs: 10, maxMs: 300 },
      warn: () => {},
    });
    cleanup.push(async () => void (await c.shutdown({ timeoutMs: 5000 })));
    const during = await c.flush();
    expect(during.ok).toBe(false);
    expect(during.spooled).toBeGreaterThan(0);

    // 3. Two concurrent producers update the same runs while it is down; the last call per run must win.
    const update = (id: string, v: number) => {
      c.updateRun(id, { outputs: { v } });
      last.set(id, v);
    };
    const producer = async (offset: number, rounds: number) => {
      for (let r = 0; r < rounds; r++) {
        for (let i = offset; i < ids.length; i += 2) {
          update(ids[i]!, 10 + r * 2 + offset);
          if (i % 37 === 0) await sleep(1);
        }
        await sleep(120); // let retries and spool timers interleave with the updates
      }
    };
    await Promise.all([
      producer(0, 4),
      producer(1, 3),
      (async () => {
        for (let k = 0; k < 60; k++) {
          update(ids[(k * 7) % ids.length]!, 100 + k);
          await sleep(7);
        }
      })(),
    ]);

    // 4. The collector comes back on the same port and file; spooled runs go out when due, without help.
    col = await createCollector({ db, rateLimits: false });
    await col.listen(port, "127.0.0.1");
    let res = await c.flush();
    for (let i = 0; i < 200 && !res.ok; i++) {
      await sleep(50);
      res = await c.flush();
    }
    expect(res).toMatchObject({ ok: true, spooled: 0, dropped: 0, deadLettered: 0 });

    const rows = sql(col.store).prepare("SELECT id, inputs, outputs, end_time FROM runs WHERE session_name = 'faults'").all() as {
      id: string;
      inputs: string;
      outputs: string;
      end_time: string | null;
    }[];
    expect(rows).toHaveLength(300);
    expect(new Set(rows.map((r) => r.id)).size).toBe(300);
    const wrong = rows.filter((r) => JSON.parse(r.outputs).v !== last.get(r.id));
    expect(wrong).toEqual([]);
    expect(rows.every((r) => r.end_time !== null && typeof JSON.parse(r.inputs).i === "number")).toBe(true);
    expect(proxy.statuses.filter((s) => s === 503).length).toBeGreaterThan(0);
  });
});
