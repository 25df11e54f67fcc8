/**
 * Back-pressure instead of memory growth: a collector with a small bound on
 * requests in flight, hit by many concurrent large requests, refuses the
 * excess with 503 and Retry-After, its memory stays bounded, and every run it
 * answered 2xx is in the store (the client sends the refused ones again).
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sendAnywhere } from "../helpers/any-collector.js";
import { skipWithoutPostgres, sharedPostgres, type PostgresDatabases } from "../helpers/postgres.js";
import { runRecord } from "../helpers/runs.js";
import { startServeChildren, stopServeChildren, type ServeChild } from "../helpers/serve-processes.js";

const REQUESTS = 120;
const RUN_BYTES = 900 * 1024; // under the large-body threshold: only the in-flight bound holds these back
const MAX_IN_FLIGHT = 4;
const SERIAL = 24;

const memoryMiB = (pid: number, field: "VmRSS" | "VmHWM") =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) / 1024;

describe.skipIf(skipWithoutPostgres() || process.platform !== "linux")("a collector past its bound on requests in flight", () => {
  let cluster: PostgresDatabases;
  let url: string;
  let children: ServeChild[] = [];
  beforeAll(async () => {
    cluster = await sharedPostgres();
    url = await cluster.database();
    children = await startServeChildren(1, [
      "--store",
      url,
      "--no-rate-limit",
      "--max-in-flight",
      String(MAX_IN_FLIGHT),
      "--store-connections",
      "2",
      "--store-max-waiting",
      "4",
    ]);
  }, 90_000);
  afterAll(async () => {
    await stopServeChildren(children);
  }, 60_000);

  it("answers 503 with Retry-After past the bound, keeps its memory bounded, and stores every run it accepted", async () => {
    const c = children[0]!;
    const pid = c.pid()!;
    const filler = "y".repeat(RUN_BYTES);
    const ids = Array.from({ length: REQUESTS }, () => randomUUID());
    // The same runs one at a time first: the memory the work itself takes (heap, buffers, garbage between collections).
    const serialIds = Array.from({ length: SERIAL }, () => randomUUID());
    for (const id of serialIds) {
      const res = await fetch(`${c.url}/runs`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(runRecord({ id, session_name: "overload", inputs: { filler } })),
      });
      expect(res.status).toBeLessThan(300);
    }
    const serialPeak = memoryMiB(pid, "VmHWM");
    // First, all at once with no retry: the bound refuses most, with Retry-After. A refused body still arriving
    // after the drain's whole time has its connection dropped; on a starved machine a client that has not read
    // its 503 by then sees a network error instead, which clients retry like a 503 (status 0 here).
    const first = await Promise.all(
      ids.map(async (id) => {
        try {
          const res = await fetch(`${c.url}/runs`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(runRecord({ id, session_name: "overload", inputs: { filler } })),
          });
          await res.arrayBuffer();
          return { id, status: res.status, retryAfter: res.headers.get("retry-after") };
        } catch (err) {
          return { id, status: 0, retryAfter: null, error: String((err as { cause?: unknown }).cause ?? err) };
        }
      }),
    );
    const refused = first.filter((r) => r.status === 503);
    const dropped = first.filter((r) => r.status === 0);
    // Bounded: the burst (REQUESTS bodies, ~105 MiB, sent at once) costs a few bodies' worth over the serial peak
    // (20-40 MiB here, more when the machine is busy and garbage waits longer), where the same burst with
    // neither bound (--max-in-flight and --store-max-waiting at 1000) raised the peak by ~290 MiB.
    const burstPeak = memoryMiB(pid, "VmHWM");
    expect(burstPeak - serialPeak).toBeLessThan(MAX_IN_FLIGHT * 16);
    expect(refused.length).toBeGreaterThan(REQUESTS / 2);
    for (const r of refused) expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(first.every((r) => r.status === 503 || r.status === 202 || r.status === 200 || r.status === 0)).toBe(true);
    expect(dropped.length, JSON.stringify(dropped.slice(0, 3))).toBeLessThan(refused.length);
    // Then the refused ones (and any whose connection dropped) again, the way a client honours Retry-After.
    // As many at a time as the bound takes, so a starved machine does not make this phase the test's whole time.
    const resend = [...refused, ...dropped];
    await Promise.all(
      Array.from({ length: MAX_IN_FLIGHT }, async () => {
        for (let r = resend.pop(); r; r = resend.pop()) {
          const again = await sendAnywhere(
            children,
            "POST",
            "/runs",
            JSON.stringify(runRecord({ id: r.id, session_name: "overload", inputs: { filler } })),
          );
          expect(again.status, again.body).toBeLessThan(300);
        }
      }),
    );
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      const stored = (
        await db.query<{ id: string; n: number }>("SELECT id, length(inputs) AS n FROM runs WHERE id = ANY($1::text[])", [
          [...ids, ...serialIds],
        ])
      ).rows;
      expect(stored).toHaveLength(REQUESTS + SERIAL);
      expect(stored.every((r) => Number(r.n) > RUN_BYTES)).toBe(true);
    } finally {
      await db.end();
    }
  }, 240_000);
});
