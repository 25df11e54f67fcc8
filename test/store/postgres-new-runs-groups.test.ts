/**
 * Group commit of new runs in the PostgreSQL store (store/postgres/new-runs-groups.ts):
 * batches that wait while statements run go together in one statement, and
 * every batch still ends as it would alone: its runs stored once, counted
 * once in the rollups, a conflict or a bad value confined to what it touches.
 */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { MAX_IN_FLIGHT, NewRunsGroups } from "../../src/store/postgres/new-runs-groups.js";
import { newRunRows, sendNewRuns, type NewRunsBatch } from "../../src/store/postgres/new-runs.js";
import { runsById } from "../../src/store/postgres/run-state.js";
import { PostgresStore } from "../../src/store/postgres/store.js";
import { skipWithoutPostgres, sharedPostgres, type PostgresDatabases } from "../helpers/postgres.js";

const skip = skipWithoutPostgres();

function run(i: number, id = randomUUID()): Record<string, unknown> {
  const start = `2026-11-27T10:15:00.${String(i).padStart(6, "0")}Z`;
  return {
    id,
    trace_id: id,
    dotted_order: `20261127T101500${String(i).padStart(6, "0")}Z${id}`,
    name: `root-${i % 3}`,
    run_type: "chain",
    start_time: start,
    end_time: start,
    session_name: "groups",
    inputs: { i },
  };
}

/** A batch of posts as the statement's input (what the store builds before writing). */
async function batchOf(posts: Record<string, unknown>[]): Promise<NewRunsBatch> {
  const { byId, ids } = runsById(posts, []);
  const rows = await newRunRows(ids, byId, new Date().toISOString(), { normalizeOnIngest: true });
  return { rows: rows!, webhooks: [] };
}

const rootsCounted = async (store: PostgresStore) =>
  (
    await store.pool.query(
      `SELECT coalesce(sum(runs), 0)::int AS n FROM (SELECT runs FROM monitor_rollups WHERE scope = 'root' UNION ALL SELECT runs FROM monitor_rollup_queue WHERE scope = 'root') q`,
    )
  ).rows[0]!.n as number;

/**
 * A store on a database of its own and groups over it that run one statement at a time (or
 * `maxInFlight`), each statement recorded in `sent` by how many runs it carries; the store is closed after `fn`.
 */
async function withGroups(
  pg: PostgresDatabases,
  fn: (store: PostgresStore, groups: NewRunsGroups, sent: number[]) => Promise<void>,
  maxInFlight = 1,
): Promise<void> {
  const store = await PostgresStore.open(await pg.database());
  try {
    const sent: number[] = [];
    const send = sendNewRuns(store.pool);
    await fn(store, new NewRunsGroups(store.pool, (b) => (sent.push(b.rows.ids.length), send(b)), maxInFlight), sent);
  } finally {
    await store.close();
  }
}

describe.skipIf(skip)("PostgreSQL store: batches of new runs grouped into fewer statements", () => {
  let pg: PostgresDatabases;
  beforeAll(async () => {
    pg = await sharedPostgres();
  }, 120_000);

  it("writes batches that wait for a running statement together, each batch's runs stored and counted once", async () => {
    await withGroups(pg, async (store, groups, sent) => {
      const batches = await Promise.all(Array.from({ length: 12 }, (_, k) => batchOf(Array.from({ length: 5 }, (_, i) => run(k * 5 + i)))));
      const written = await Promise.all(batches.map((b) => groups.write(b)));
      expect(written).toEqual(batches.map(() => true));
      // The first alone, the eleven that waited for it in one statement.
      expect(sent).toEqual([5, 55]);
      expect(await store.countRuns()).toBe(60);
      expect(await rootsCounted(store)).toBe(60);
    });
  });

  it("starts a second statement only for a group that is closed, so waiting batches go as one statement while one runs", async () => {
    await withGroups(
      pg,
      async (store, groups, sent) => {
        const small = await Promise.all(Array.from({ length: 12 }, (_, k) => batchOf(Array.from({ length: 5 }, (_, i) => run(k * 5 + i)))));
        expect(await Promise.all(small.map((b) => groups.write(b)))).toEqual(small.map(() => true));
        // The first alone; the eleven that came while it ran wait for it as one group, not a second statement.
        expect(sent).toEqual([5, 55]);
        sent.length = 0;
        // Batches of 100 behind a running one: the second and third fill a group (250 runs at most), the fourth
        // opens another, so the full group goes at once beside the first.
        const large = await Promise.all(
          Array.from({ length: 4 }, (_, k) => batchOf(Array.from({ length: 100 }, (_, i) => run(100 + k * 100 + i)))),
        );
        const order: number[] = [];
        await Promise.all(large.map((b, k) => groups.write(b).then(() => order.push(k))));
        expect(sent).toEqual([100, 200, 100]);
        expect(order.indexOf(3)).toBe(3);
        expect(await store.countRuns()).toBe(460);
        expect(await rootsCounted(store)).toBe(460);
      },
      MAX_IN_FLIGHT,
    );
  });

  it("sends a group meeting a stored run to the merge: every batch of it merged, nothing stored or counted twice", async () => {
    const store = await PostgresStore.open(await pg.database());
    try {
      const stored = run(0);
      expect(await store.ingest({ post: [stored] })).toMatchObject({ created: 1 });
      const posts = Array.from({ length: 8 }, (_, k) => Array.from({ length: 4 }, (_, i) => run(1 + k * 4 + i)));
      posts[5]!.push({ ...stored }); // a client's retry, in one batch of many
      const results = await Promise.all(posts.map((post) => store.ingest({ post })));
      expect(results.reduce((n, r) => n + r.created, 0)).toBe(32);
      expect(results.reduce((n, r) => n + r.updated, 0)).toBe(1);
      expect(results[5]).toMatchObject({ created: 4, updated: 1 });
      expect(await store.countRuns()).toBe(33);
      expect((await store.pool.query("SELECT count(*)::int AS n FROM run_keys")).rows[0]!.n).toBe(33);
      expect(await rootsCounted(store)).toBe(33);
    } finally {
      await store.close();
    }
  });

  it("starts another statement where a group would carry more than its bound of payload", async () => {
    await withGroups(pg, async (store, groups, sent) => {
      const text = "p".repeat(200_000);
      // Three batches of about 4 M characters each behind a small one: two fit one statement's bound (8 Mi), the third does not.
      const big = (k: number) => Array.from({ length: 20 }, (_, i) => ({ ...run(k * 20 + i), inputs: { text } }));
      const batches = await Promise.all([batchOf([run(999)]), batchOf(big(0)), batchOf(big(1)), batchOf(big(2))]);
      expect(await Promise.all(batches.map((b) => groups.write(b)))).toEqual([true, true, true, true]);
      expect(sent).toEqual([1, 40, 20]);
      expect(await store.countRuns()).toBe(61);
    });
  });

  it("never puts two batches with the same run id in one statement", async () => {
    await withGroups(pg, async (store, groups, sent) => {
      const shared = randomUUID();
      const batches = await Promise.all([
        batchOf([run(1)]),
        batchOf([run(2), run(3, shared)]),
        batchOf([run(4, shared), run(5)]),
        batchOf([run(6)]),
      ]);
      const written = await Promise.all(batches.map((b) => groups.write(b)));
      // The second batch to carry the shared id goes in a later statement, which meets the stored key and writes nothing.
      expect(sent).toEqual([1, 2, 3]);
      expect(written).toEqual([true, true, false, false]);
      expect((await store.pool.query("SELECT count(*)::int AS n FROM runs WHERE id = $1", [shared])).rows[0]!.n).toBe(1);
    });
  });

  it("sends a failed group again batch by batch: only the batch with the bad value fails", async () => {
    await withGroups(pg, async (store, groups, sent) => {
      const batches = await Promise.all([batchOf([run(1)]), batchOf([run(2), run(3)]), batchOf([run(4)]), batchOf([run(5), run(6)])]);
      // A value the database refuses (not a time), which the store's own rows never hold.
      const bad = batches[2]!;
      bad.rows = { ...bad.rows, rows: [{ ...bad.rows.rows[0]!, trace_start: "not a time" }] };
      const settled = await Promise.allSettled(batches.map((b) => groups.write(b)));
      expect(settled.map((s) => s.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
      expect(sent).toEqual([1, 5, 2, 1, 2]);
      expect(await store.countRuns()).toBe(5);
      expect(await rootsCounted(store)).toBe(5);
    });
  });
});

describe.skipIf(skip)("PostgreSQL store: close() while batches of new runs wait", () => {
  let pg: PostgresDatabases;
  beforeAll(async () => {
    pg = await sharedPostgres();
  }, 120_000);

  it("sends the queued and running statements before ending the pool: every ingest resolves with its runs stored", async () => {
    const url = await pg.database();
    const store = await PostgresStore.open(url);
    const batches = Array.from({ length: 20 }, (_, k) => Array.from({ length: 5 }, (_, i) => run(k * 5 + i)));
    // One statement runs, the rest wait in the queue when close() is called.
    const ingests = batches.map((post) => store.ingest({ post }));
    await store.close();
    const settled = await Promise.allSettled(ingests);
    expect(settled.map((s) => (s.status === "rejected" ? String(s.reason) : s.value.created))).toEqual(batches.map(() => 5));
    const reader = await PostgresStore.open(url);
    try {
      const ids = batches.flat().map((r) => r.id as string);
      const stored = await reader.pool.query("SELECT count(*)::int AS n FROM runs WHERE id = ANY($1::text[])", [ids]);
      expect(stored.rows[0]!.n).toBe(ids.length);
    } finally {
      await reader.close();
    }
  });
});
