/**
 * The collector's reading of a new run's rollup contribution
 * (store/postgres/new-run-cells.ts) against PostgreSQL's own: the histogram
 * bucket of a value as histBucketSql computes it, and a whole row's
 * contribution as rollups.ts's CONTRIBUTION reads the stored row. Where the
 * collector answers, it must answer what SQL does (what a later merge or
 * retention takes away is read in SQL); where it cannot be sure, it leaves
 * the row to SQL.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { histBucket, newRunContribution } from "../../src/store/postgres/new-run-cells.js";
import { newRunRows } from "../../src/store/postgres/new-runs.js";
import { CONTRIBUTION } from "../../src/store/postgres/rollups.js";
import { runsById } from "../../src/store/postgres/run-state.js";
import { PostgresStore } from "../../src/store/postgres/store.js";
import { histBucketSql } from "../../src/store/rollup.js";
import { skipWithoutPostgres, sharedPostgres, type PostgresDatabases } from "../helpers/postgres.js";

const skip = skipWithoutPostgres();

/** Values at the edges of buckets and decades and ties of the rounding; then (from `edges` on) values as run timings give them (whole microseconds) and others. */
function values(): { vs: number[]; edges: number } {
  const out = [0, -1, -0.001, 1e-9, 1e-300, 1e300];
  for (let e = -6; e <= 9; e++) {
    const p = Number(`1e${e}`);
    out.push(p, p * 0.999999, p * 1.000001, p * 9.95, p * 9.949999, p * 1.05, p * 1.15, p * 1.25, p * 9.5, p * 99.5);
    for (let m = 10; m < 100; m++) out.push(Number(`${m}.5e${e - 1}`), Number(`${m}e${e - 1}`));
  }
  const edges = out.length;
  // Timings: whole microseconds as ms (what msBetween and the first token give), across the decades.
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  for (let i = 0; i < 4000; i++) out.push(Math.round(rand() * 10 ** (1 + (i % 9))) / 1000);
  for (let i = 0; i < 1000; i++) out.push(rand() * 10 ** ((i % 20) - 6));
  return { vs: out, edges };
}

describe.skipIf(skip)("new runs' rollup cells worked out by the collector", () => {
  let dbs: PostgresDatabases;
  let url: string;
  let client: pg.Client;
  let store: PostgresStore;

  beforeAll(async () => {
    dbs = await sharedPostgres();
    url = await dbs.database();
    store = await PostgresStore.open(url);
    client = new pg.Client({ connectionString: url });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await store?.close();
  });

  it("put a value in the histogram bucket PostgreSQL does, or leave it to PostgreSQL", async () => {
    const { vs, edges } = values();
    const sql = await client.query<{ b: number | null }>(
      `SELECT ${histBucketSql("t.v")} AS b FROM unnest($1::float8[]) WITH ORDINALITY AS t(v, i) ORDER BY t.i`,
      [vs],
    );
    let left = 0;
    vs.forEach((v, i) => {
      const mine = histBucket(v);
      if (mine === undefined) left += i >= edges ? 1 : 0;
      else expect([v, mine]).toEqual([v, sql.rows[i]!.b]);
    });
    // Values that are not at an edge on purpose are seldom left to SQL.
    expect(left).toBeLessThan((vs.length - edges) / 100);
    for (const v of [0.001, 0.5, 1, 12.5, 37, 125, 1000, 2345.678]) expect(histBucket(v), String(v)).not.toBeUndefined();
    expect(histBucket(null)).toBeNull();
    expect(histBucket(Number.NaN)).toBeUndefined();
  });

  it("read a new run's contribution as CONTRIBUTION reads the stored row, or leave the row to SQL", async () => {
    const start = "2026-11-27T10:59:59.999500Z";
    const later = (us: number) => {
      const t = Date.parse(start) * 1000 + 500 + us; // µs since the epoch, exact
      return `${new Date(Math.floor(t / 1000)).toISOString().slice(0, 19)}.${String(t % 1_000_000).padStart(6, "0")}Z`;
    };
    const posts: Record<string, unknown>[] = [];
    for (let i = 0; i < 40; i++) {
      const id = randomUUID();
      const llm = i % 2 === 1;
      posts.push({
        id,
        trace_id: id,
        dotted_order: `20261127T105959999500Z${id}`,
        name: `run-${i % 3}`,
        run_type: llm ? "llm" : i % 5 === 0 ? "tool" : "chain",
        ...(i % 6 === 5 ? { parent_run_id: randomUUID() } : {}),
        start_time: start,
        ...(i % 7 === 3 ? {} : { end_time: later(1 + 12_345 * i) }),
        session_name: i % 4 === 0 ? "cells-a" : "cells-b",
        ...(i % 5 === 2 ? { error: "boom" } : {}),
        ...(llm
          ? {
              extra: {
                metadata: {
                  ls_model_name: i % 3 ? "gpt-4o" : "claude-sonnet",
                  usage_metadata: { input_tokens: i, output_tokens: 2 * i + 1, ...(i % 4 === 1 ? { total_cost: 0.001 * i } : {}) },
                },
              },
              events: [{ name: "new_token", time: i % 9 === 7 ? "2026-11-27T12:00:00+01:00" : later(i % 3 === 0 ? -5 : 999 * i) }],
            }
          : {}),
      });
    }
    const { byId, ids } = runsById(posts, []);
    const r = newRunRows(ids, byId, new Date().toISOString(), { normalizeOnIngest: true })!;
    await store.ingest({ post: posts, patch: [] });
    const stored = await client.query(`SELECT id, ${CONTRIBUTION} FROM runs WHERE id = ANY($1::text[])`, [ids]);
    const byStoredId = new Map(stored.rows.map((row) => [row.id as string, row]));
    const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
    let read = 0;
    let leftToSql = 0;
    for (const row of r.rows) {
      const mine = newRunContribution(row);
      if (mine === undefined) {
        leftToSql++;
        continue;
      }
      const s = byStoredId.get(row.id as string)!;
      if (!mine.root && !mine.llm) {
        expect(s.root || s.llm).toBe(false);
        continue;
      }
      read++;
      expect({ ...mine, hour: num(mine.hour) }).toEqual({
        project: s.project,
        hour: num(s.hour),
        root: s.root,
        llm: s.llm,
        name: s.name,
        model: s.model,
        provider: s.provider,
        errors: s.errors,
        lat_b: s.lat_b,
        ttft_b: s.ttft_b,
        input_tokens: num(s.input_tokens),
        output_tokens: num(s.output_tokens),
        cost: num(s.cost),
        cost_runs: s.cost_runs,
      });
    }
    // The first token's time as text PostgreSQL parses but not canonical: that row is left to SQL.
    expect(leftToSql).toBe(posts.filter((p) => (p.events as { time: string }[] | undefined)?.[0]?.time.includes("+01:00")).length);
    expect(leftToSql).toBeGreaterThan(0);
    expect(read).toBeGreaterThan(25);
  });
});
