/**
 * The PostgreSQL store under concurrent writers: several stores (as several
 * collectors would be), each with a pool of connections, post and patch the
 * same runs in random order at once. Every run is created exactly once and
 * ends complete, whatever order its post and patches met in, and counted once
 * with its final values in the monitoring rollups, whenever their queued
 * deltas are folded in.
 */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { foldRollups } from "../../src/store/postgres/rollup-queue.js";
import { PostgresStore } from "../../src/store/postgres/store.js";
import { HIST_ALPHA } from "../../src/store/rollup.js";
import { skipWithoutPostgres, sharedPostgres, type PostgresDatabases } from "../helpers/postgres.js";

const skip = skipWithoutPostgres();

/** A seeded shuffle, so a failure can be replayed. */
function shuffle<T>(items: T[], seed: number): T[] {
  let s = seed >>> 0;
  const rand = () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

describe.skipIf(skip)("PostgreSQL store: concurrent posts and patches", () => {
  let pg: PostgresDatabases;
  beforeAll(async () => {
    pg = await sharedPostgres();
  }, 120_000);

  it("creates each run once and ends with every field of its post and patches, in any order, on many connections", async () => {
    const url = await pg.database();
    const stores = await Promise.all([0, 1, 2, 3].map(() => PostgresStore.open(url, { max: 4 })));
    try {
      const RUNS = 150;
      type Op = { kind: "post" | "patch"; record: Record<string, unknown> };
      const ops: Op[] = [];
      const ids: string[] = [];
      for (let i = 0; i < RUNS; i++) {
        const id = randomUUID();
        ids.push(id);
        const post = {
          id,
          trace_id: id,
          dotted_order: `20261127T101500${String(i).padStart(6, "0")}Z${id}`,
          name: `run-${i}`,
          run_type: "llm",
          start_time: `2026-11-27T10:15:00.${String(i).padStart(6, "0")}Z`,
          session_name: "concurrency",
          inputs: { messages: [{ role: "user", content: [{ type: "text", text: `question ${i}` }] }] },
          extra: { metadata: { trace_model_name: "gpt-4o", n: i, session_id: `conv-${i % 5}` } },
        };
        ops.push({ kind: "post", record: post });
        ops.push({ kind: "post", record: { ...post } }); // a retried post: the same run again
        ops.push({ kind: "patch", record: { id, end_time: `2026-11-27T10:15:01.${String(i).padStart(6, "0")}Z` } });
        ops.push({
          kind: "patch",
          record: {
            id,
            outputs: {
              messages: [
                {
                  role: "assistant",
                  content: [{ type: "text", text: `answer ${i}` }],
                  usage_metadata: { input_tokens: i, output_tokens: 1, total_tokens: i + 1 },
                },
              ],
            },
          },
        });
        ops.push({
          kind: "patch",
          record: { id, tags: [`t${i}`], events: [{ name: "new_token", time: `2026-11-27T10:15:00.5${String(i).padStart(5, "0")}Z` }] },
        });
      }
      shuffle(ops, 20261127);
      // Batches of 1 to 7 records, sent from 16 workers over the four stores at once.
      const batches: Op[][] = [];
      for (let i = 0; i < ops.length;) {
        const n = 1 + (i % 7);
        batches.push(ops.slice(i, i + n));
        i += n;
      }
      let created = 0;
      let updated = 0;
      let next = 0;
      await Promise.all(
        Array.from({ length: 16 }, async (_, w) => {
          for (;;) {
            const b = batches[next++];
            if (!b) return;
            const r = await stores[w % stores.length]!.ingest({
              post: b.filter((o) => o.kind === "post").map((o) => o.record),
              patch: b.filter((o) => o.kind === "patch").map((o) => o.record),
            });
            created += r.created;
            updated += r.updated;
          }
        }),
      );
      // Each id's records met in one batch (grouped) or several: one creation per id, the rest updates.
      const perBatchIds = batches.reduce((n, b) => n + new Set(b.map((o) => o.record.id)).size, 0);
      expect(created).toBe(RUNS);
      expect(created + updated).toBe(perBatchIds);
      expect(await stores[0]!.countRuns()).toBe(RUNS);
      expect(await stores[0]!.countRuns("concurrency")).toBe(RUNS);
      for (const [i, id] of ids.entries()) {
        const run = await stores[i % 4]!.getRun(id);
        expect(run).toMatchObject({
          id,
          name: `run-${i}`,
          run_type: "llm",
          start_time: `2026-11-27T10:15:00.${String(i).padStart(6, "0")}Z`,
          end_time: `2026-11-27T10:15:01.${String(i).padStart(6, "0")}Z`,
          inputs: { messages: [{ role: "user", content: [{ type: "text", text: `question ${i}` }] }] },
          outputs: { messages: [{ role: "assistant", content: [{ type: "text", text: `answer ${i}` }] }] },
          tags: [`t${i}`],
          extra: { metadata: { trace_model_name: "gpt-4o", n: i } },
          detected_format: "native",
          first_token_time: `2026-11-27T10:15:00.5${String(i).padStart(5, "0")}Z`,
        });
      }
      const page = await stores[1]!.listTraces({ project: "concurrency", limit: 500 });
      expect(page.traces).toHaveLength(RUNS);
      expect(page.traces.reduce((n, t) => n + (t.input_tokens ?? 0), 0)).toBe((RUNS * (RUNS - 1)) / 2);
      // The monitoring rollups, kept by every writer as increments, count each run once with its final values.
      const q = {
        project: "concurrency",
        from_ms: Date.parse("2026-11-27T10:00:00Z"),
        to_ms: Date.parse("2026-11-27T11:00:00Z"),
        step_ms: 3_600_000,
      };
      const m = await stores[2]!.monitorSeries(q);
      expect([m.traces.runs, m.llm.runs, m.llm.streamed, m.llm.input_tokens, m.llm.output_tokens, m.traces.errors]).toEqual([
        [RUNS],
        [RUNS],
        [RUNS],
        [(RUNS * (RUNS - 1)) / 2],
        [RUNS],
        [0],
      ]);
      expect(Math.abs(m.llm.latency_p50[0]! - 1000)).toBeLessThanOrEqual(HIST_ALPHA * 1000);
      const [gpt] = await stores[3]!.monitorBreakdown(q, "model");
      expect([gpt!.value, gpt!.runs, gpt!.input_tokens]).toEqual(["gpt-4o", RUNS, (RUNS * (RUNS - 1)) / 2]);
      // So does the threads table: five conversations, each with its turns, first and last.
      const { threads } = await stores[0]!.listThreads({ project: "concurrency" });
      const at = (i: number) => `2026-11-27T10:15:00.${String(i).padStart(6, "0")}Z`;
      expect(threads.map((t) => [t.thread_id, t.turns, t.first_time, t.last_time])).toEqual(
        [4, 3, 2, 1, 0].map((k) => [`conv-${k}`, RUNS / 5, at(k), at(RUNS - 5 + k)]),
      );
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  }, 120_000);

  it("counts each run once in the monitoring numbers while folds move queued deltas into the rollups during ingest", async () => {
    const url = await pg.database();
    const stores = await Promise.all([0, 1, 2].map(() => PostgresStore.open(url, { max: 4 })));
    try {
      const RUNS = 240;
      const run = (i: number, id: string) => ({
        id,
        trace_id: id,
        dotted_order: `20261127T101500${String(i).padStart(6, "0")}Z${id}`,
        name: `fold-${i % 3}`,
        run_type: "llm",
        start_time: `2026-11-27T10:15:00.${String(i).padStart(6, "0")}Z`,
        session_name: "fold",
        extra: { metadata: { trace_model_name: "gpt-4o" } },
      });
      const ids = Array.from({ length: RUNS }, () => randomUUID());
      let ingesting = true;
      let folds = 0;
      const folding = (async () => {
        while (ingesting) if (await foldRollups(stores[folds % 3]!.pool)) folds++;
      })();
      // Posts, then each run's end time from another store (its latency moves it to another histogram bucket).
      await Promise.all(
        Array.from({ length: 6 }, async (_, w) => {
          for (let i = w; i < RUNS; i += 6) {
            await stores[w % 3]!.ingest({ post: [run(i, ids[i]!)], patch: [] });
            const end = `2026-11-27T10:15:0${1 + (i % 2)}.${String(i).padStart(6, "0")}Z`;
            await stores[(w + 1) % 3]!.ingest({ post: [], patch: [{ id: ids[i]!, end_time: end }] });
          }
        }),
      );
      ingesting = false;
      await folding;
      expect(folds).toBeGreaterThan(0);
      const q = {
        project: "fold",
        from_ms: Date.parse("2026-11-27T10:00:00Z"),
        to_ms: Date.parse("2026-11-27T11:00:00Z"),
        step_ms: 3_600_000,
      };
      const before = await stores[0]!.monitorSeries(q);
      expect([before.traces.runs, before.llm.runs]).toEqual([[RUNS], [RUNS]]);
      expect(Math.abs(before.llm.latency_p50[0]! - 1000)).toBeLessThanOrEqual(HIST_ALPHA * 1000);
      expect(Math.abs(before.llm.latency_p99[0]! - 2000)).toBeLessThanOrEqual(HIST_ALPHA * 2000);
      // A last fold empties the queue and changes no number (the stores' own folds may hold the lock a moment).
      const deadline = Date.now() + 20_000;
      while (!(await foldRollups(stores[1]!.pool))) {
        expect(Date.now()).toBeLessThan(deadline);
        await new Promise((r) => setTimeout(r, 50));
      }
      expect((await stores[1]!.pool.query("SELECT count(*)::int AS n FROM monitor_rollup_queue")).rows[0]!.n).toBe(0);
      expect(await stores[2]!.monitorSeries(q)).toEqual(before);
      const names = await stores[2]!.monitorBreakdown(q, "name");
      expect(names.map((r) => [r.value, r.runs])).toEqual([0, 1, 2].map((k) => [`fold-${k}`, RUNS / 3]));
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  }, 120_000);

  it("lets the later of two patches win when they set the same field one after the other, from two stores", async () => {
    const url = await pg.database();
    const [a, b] = await Promise.all([PostgresStore.open(url), PostgresStore.open(url)]);
    try {
      const id = randomUUID();
      await Promise.all([
        a.ingest({
          post: [
            {
              id,
              trace_id: id,
              dotted_order: `20261127T101500000000Z${id}`,
              name: "r",
              run_type: "chain",
              start_time: "2026-11-27T10:15:00Z",
              outputs: { v: "post" },
            },
          ],
        }),
        b.ingest({ patch: [{ id, outputs: { v: "first patch" } }] }),
      ]);
      await b.ingest({ patch: [{ id, outputs: { v: "second patch" }, error: "late" }] });
      await a.ingest({
        post: [
          {
            id,
            trace_id: id,
            dotted_order: `20261127T101500000000Z${id}`,
            name: "again",
            run_type: "chain",
            start_time: "2026-11-27T10:15:00Z",
            outputs: { v: "post again" },
          },
        ],
      });
      expect(await a.getRun(id)).toMatchObject({ name: "r", outputs: { v: "second patch" }, error: "late" });
      expect(await a.countRuns()).toBe(1);
    } finally {
      await a.close();
      await b.close();
    }
  }, 60_000);
});
