/**
 * Collectors side by side: three `serve` processes on one PostgreSQL, each
 * request to any of them, one killed without warning and started again
 * midway. Every run is stored once and complete, and the newest update wins.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seeded, sendAnywhere, shuffled } from "../helpers/any-collector.js";
import { skipWithoutPostgres, sharedPostgres, type PostgresDatabases } from "../helpers/postgres.js";
import { runRecord } from "../helpers/runs.js";
import { startServeChildren, stopServeChildren, type ServeChild } from "../helpers/serve-processes.js";

const RUNS = 210;
const WORKERS = 12;

describe.skipIf(skipWithoutPostgres())("three collectors on one PostgreSQL", () => {
  let cluster: PostgresDatabases;
  let url: string;
  let children: ServeChild[] = [];
  beforeAll(async () => {
    cluster = await sharedPostgres();
    url = await cluster.database();
    children = await startServeChildren(3, ["--store", url, "--no-rate-limit"]);
  }, 90_000);
  afterAll(async () => {
    await stopServeChildren(children);
  }, 60_000);

  it("stores every run once and complete, the newest update winning, with posts and patches on different collectors and one collector killed midway", async () => {
    const random = seeded(34);
    const project = "side-by-side";
    const ids = Array.from({ length: RUNS }, () => randomUUID());
    let done = 0;
    let killed: Promise<void> | undefined;
    const json = (v: unknown) => JSON.stringify(v);
    const one = async (id: string, i: number) => {
      const post = runRecord({
        id,
        trace_id: id,
        dotted_order: `20261122T101500123456Z${id}`,
        name: `run-${i}`,
        session_name: project,
        inputs: { i },
      });
      const first = { end_time: "2026-11-22T10:15:01.000000Z", outputs: { answer: "first", i } };
      // The post and the first patch at once, each to any collector: either may arrive first.
      const sent = await Promise.all(
        shuffled(
          [
            () => sendAnywhere(children, "POST", "/runs", json(post), undefined, { random }),
            () => sendAnywhere(children, "PATCH", `/runs/${id}`, json(first), undefined, { random }),
          ],
          random,
        ).map((f) => f()),
      );
      for (const s of sent) expect(s.status, s.body).toBeLessThan(300);
      // Once both are in, a newer update, to any collector: it must win.
      const newest = await sendAnywhere(
        children,
        "PATCH",
        `/runs/${id}`,
        json({ end_time: "2026-11-22T10:15:02.000000Z", outputs: { answer: "newest", i } }),
        undefined,
        { random },
      );
      expect(newest.status, newest.body).toBeLessThan(300);
      if (++done === RUNS / 3) killed = children[0]!.kill("SIGKILL").then(() => children[0]!.restart());
    };
    let next = 0;
    await Promise.all(
      Array.from({ length: WORKERS }, async () => {
        for (let i = next++; i < RUNS; i = next++) await one(ids[i]!, i);
      }),
    );
    await killed;
    expect(killed).toBeDefined();
    expect(children[0]!.alive()).toBe(true);

    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      const rows = (
        await db.query<{ id: string; name: string; session_name: string; end_time: string; inputs: string; outputs: string }>(
          "SELECT id, name, session_name, end_time, inputs, outputs FROM runs WHERE id = ANY($1::text[])",
          [ids],
        )
      ).rows;
      // Once: one row per id, and nothing else in the project.
      expect(rows).toHaveLength(RUNS);
      expect(new Set(rows.map((r) => r.id)).size).toBe(RUNS);
      expect(Number((await db.query("SELECT count(*) AS n FROM runs WHERE session_name = $1", [project])).rows[0].n)).toBe(RUNS);
      const parse = (v: unknown) => (typeof v === "string" ? JSON.parse(v) : v);
      const byId = new Map(rows.map((r) => [r.id, r]));
      ids.forEach((id, i) => {
        const r = byId.get(id)!;
        // Complete: the post's fields and the newest patch's.
        expect({
          name: r.name,
          session_name: r.session_name,
          inputs: parse(r.inputs),
          end_time: r.end_time,
          outputs: parse(r.outputs),
        }).toEqual({
          name: `run-${i}`,
          session_name: project,
          inputs: { i },
          end_time: "2026-11-22T10:15:02.000000Z",
          outputs: { answer: "newest", i },
        });
      });
    } finally {
      await db.end();
    }
  }, 90_000);
});
