/**
 * Webhooks exactly once per completed root run across collectors side by
 * side: three `serve` processes on one PostgreSQL, 500 traces whose post and
 * patch go to different collectors, one collector SIGKILLed while deliveries
 * are under way and started again, and a real loopback receiver counting what
 * it gets. A few receivers time out on purpose (their runs are retried) and a
 * few always fail (their runs end `failed` after the last attempt).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore, type Store } from "../../src/store/index.js";
import { skipWithoutPostgres, sharedPostgres, type PostgresDatabases } from "../helpers/postgres.js";
import { runRecord, tempDir } from "../helpers/runs.js";
import { startServeChildren, stopServeChildren, type ServeChild } from "../helpers/serve-processes.js";

const TRACES = 500;
/** Long beside the receiver's 40 ms answers, so an answer late only because the machine is busy is rare. */
const TIMEOUT_MS = 2000;
/** Runs whose receiver answers their first attempt too late (a retry the test provokes). */
const SLOW = new Set([7, 61, 123, 250, 333, 401, 488]);
/** Runs whose receiver always answers 500 (out of attempts: failed). */
const FAILING = new Set([19, 222, 444]);
const ATTEMPTS = 3;
const noAnswer = new RegExp(`no answer within ${TIMEOUT_MS} ms`);
/** The delivery loop's default concurrency: at most this many attempts die with a collector. */
const CONCURRENCY = 8;

interface Hit {
  runId: string;
  attempt: string;
  path: string;
}

interface Deliveries {
  deliveries: { status: string; attempts: { status_code?: number; error?: string; duration_ms: number }[] }[];
}

async function receiver(): Promise<{ server: Server; port: number; hits: Hit[] }> {
  const hits: Hit[] = [];
  const server = createServer(async (req, res) => {
    for await (const _ of req) void _;
    const hit = {
      runId: String(req.headers["x-tracepipe-run-id"]),
      attempt: String(req.headers["x-tracepipe-attempt"]),
      path: req.url ?? "",
    };
    hits.push(hit);
    const n = Number(/\/hook\/(\d+)/.exec(hit.path)?.[1]);
    // Answers take a moment, so deliveries are under way when a collector is killed.
    const delay = SLOW.has(n) && hit.attempt === "1" ? 2 * TIMEOUT_MS : 40;
    await new Promise((r) => setTimeout(r, delay));
    res.writeHead(FAILING.has(n) ? 500 : 200).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { server, port: (server.address() as AddressInfo).port, hits };
}

async function until(what: string, ok: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.skipIf(skipWithoutPostgres())("webhooks from three collectors on one PostgreSQL", () => {
  let pg: PostgresDatabases;
  let url: string;
  let children: ServeChild[] = [];
  let rx: Awaited<ReturnType<typeof receiver>>;
  let store: Store;
  beforeAll(async () => {
    pg = await sharedPostgres();
    url = await pg.database();
    rx = await receiver();
    const graph = join(tempDir("tp-hooks-side-"), "graph.json");
    writeFileSync(graph, JSON.stringify({ webhooks: { url: { allowed_ports: [rx.port], allowed_networks: ["127.0.0.0/8"] } } }));
    children = await startServeChildren(3, [
      "--store",
      url,
      "--no-rate-limit",
      "--graph-config",
      graph,
      "--webhook-timeout",
      String(TIMEOUT_MS),
      "--webhook-attempts",
      String(ATTEMPTS),
      "--webhook-backoff",
      "200",
    ]);
    store = await openStore(url);
  }, 120_000);
  afterAll(async () => {
    await stopServeChildren(children);
    await store?.close();
    await new Promise((r) => rx?.server.close(r));
  });

  it("delivers every completed root run at least once, and once apart from the retries it provokes and the attempts a killed collector left unrecorded", async () => {
    const runs = Array.from({ length: TRACES }, (_, i) =>
      runRecord({ session_name: "side-by-side", extra: { metadata: { webhook: `http://127.0.0.1:${rx.port}/hook/${i}` } } }),
    );
    const ids = runs.map((r) => r.id as string);
    const send = async (c: ServeChild, body: unknown) => {
      const res = await fetch(`${c.url}/runs/batch`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(res.status, await res.text()).toBeLessThan(300);
    };
    // Each trace's post goes to one collector and its completing patch to the next.
    for (let k = 0; k < 3; k++) await send(children[k]!, { post: runs.filter((_, i) => i % 3 === k) });
    await Promise.all(
      [0, 1, 2].map((k) =>
        send(children[(k + 1) % 3]!, {
          patch: runs
            .filter((_, i) => i % 3 === k)
            .map((r) => ({
              id: r.id,
              trace_id: r.id,
              dotted_order: r.dotted_order,
              end_time: "2026-11-22T10:15:02.000000Z",
              outputs: { ok: true },
            })),
        }),
      ),
    );

    // Kill a collector while deliveries are under way: some received, more to come.
    await until("the first deliveries", () => rx.hits.length >= 120, 30_000);
    await children[0]!.kill("SIGKILL");
    const atKill = rx.hits.length;
    expect(atKill).toBeLessThan(TRACES);
    // It comes back while the others take over its claims once their lease ends.
    const back = children[0]!.restart();
    await until("the outbox to drain", async () => (await store.pendingWebhooks()).count === 0, 60_000);
    await back;

    const received = new Map<string, number>();
    for (const h of rx.hits) received.set(h.runId, (received.get(h.runId) ?? 0) + 1);
    expect(ids.filter((id) => !received.has(id))).toEqual([]);
    expect([...received.keys()].filter((id) => !ids.includes(id))).toEqual([]);

    // What each run's deliveries say, through GET /runs/:id/webhooks on any collector.
    const recorded = new Map<string, Deliveries["deliveries"][number]>();
    for (let i = 0; i < ids.length; i += 25) {
      await Promise.all(
        ids.slice(i, i + 25).map(async (id, j) => {
          const res = await fetch(`${children[(i + j) % 3]!.url}/runs/${id}/webhooks`);
          expect(res.status).toBe(200);
          const body = (await res.json()) as Deliveries;
          expect(body.deliveries).toHaveLength(1);
          recorded.set(id, body.deliveries[0]!);
        }),
      );
    }

    let unrecorded = 0;
    let exactlyOnce = 0;
    for (const [i, id] of ids.entries()) {
      const d = recorded.get(id)!;
      const got = received.get(id)!;
      // Every request the receiver got is a recorded attempt, but for one a collector was killed during.
      expect(got - d.attempts.length, `run ${i}`).toBeGreaterThanOrEqual(0);
      expect(got - d.attempts.length, `run ${i}`).toBeLessThanOrEqual(1);
      unrecorded += got - d.attempts.length;
      if (FAILING.has(i)) {
        expect(d.status).toBe("failed");
        // Each attempt failed: the receiver's 500, or (its answer late on a busy machine) no answer in time.
        expect(d.attempts).toHaveLength(ATTEMPTS);
        for (const a of d.attempts) expect(a.status_code ?? a.error, `run ${i}`).toSatisfy((x) => x === 500 || noAnswer.test(String(x)));
        continue;
      }
      expect(d.status, `run ${i}`).toBe("delivered");
      expect(d.attempts.at(-1)!.status_code).toBe(200);
      // Every recorded attempt before the last is a failure: a retry follows only a failed attempt.
      for (const a of d.attempts.slice(0, -1)) expect(a.status_code ?? 0, `run ${i}`).not.toBe(200);
      if (SLOW.has(i)) {
        expect(d.attempts[0]!.error, `run ${i}`).toMatch(noAnswer);
        expect(d.attempts[0]!.duration_ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
      }
      if (got === 1) exactlyOnce++;
    }
    // Only the attempts under way in the killed collector can have gone unrecorded.
    expect(unrecorded).toBeLessThanOrEqual(CONCURRENCY);
    // Apart from the provoked retries, the kill and a retry after a timeout under load, each run arrived exactly once.
    const retried = ids.filter((id, i) => !SLOW.has(i) && !FAILING.has(i) && recorded.get(id)!.attempts.length > 1).length;
    expect(exactlyOnce).toBeGreaterThanOrEqual(TRACES - SLOW.size - FAILING.size - unrecorded - retried);
    expect(retried).toBeLessThanOrEqual(CONCURRENCY);
  }, 120_000);
});
