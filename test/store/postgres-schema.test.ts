/**
 * The PostgreSQL store's schema: migrations applied once when several
 * processes start at once, a newer database refused, runs in weekly
 * partitions by trace start, large payloads left in place by a patch, and
 * values PostgreSQL text cannot hold kept exactly.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { PG_MIGRATIONS, SchemaTooNewError } from "../../src/store/postgres/migrations.js";
import { foldRollups } from "../../src/store/postgres/rollup-queue.js";
import { PostgresStore } from "../../src/store/postgres/store.js";
import { skipWithoutPostgres, sharedPostgres, type PostgresDatabases } from "../helpers/postgres.js";

const skip = skipWithoutPostgres();

function root(id = randomUUID(), start = "2026-11-27T10:15:00.123456Z") {
  const dotted = start.replace(/[-:.]/g, "");
  return { id, trace_id: id, dotted_order: `${dotted}${id}`, name: "root", run_type: "chain", start_time: start, session_name: "schema" };
}

/** The CREATE INDEX statement that migration `version` holds for index `name`. */
function made(version: number, name: string): string {
  const m = new RegExp(`CREATE INDEX ${name} ON [^;]+;`).exec(PG_MIGRATIONS.find((x) => x.version === version)!.sql);
  return m![0];
}

/** A database as migration 6 left it: migration 7's indexes back to what migrations 1 and 3 made. */
const UNDO_7 = [
  "DROP INDEX runs_children_start; DROP INDEX runs_children_project_start; DROP INDEX runs_trace;",
  made(1, "runs_trace"),
  made(1, "runs_trace_start"),
  made(1, "runs_project_start"),
  made(1, "runs_start"),
  made(3, "runs_threads"),
  "DELETE FROM schema_migrations WHERE version >= 7",
].join("\n");

describe.skipIf(skip)("PostgreSQL store schema", () => {
  let server: PostgresDatabases;
  beforeAll(async () => {
    server = await sharedPostgres();
  }, 120_000);

  async function sql<T extends pg.QueryResultRow>(url: string, text: string, params: unknown[] = []): Promise<T[]> {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      return (await c.query<T>(text, params)).rows;
    } finally {
      await c.end();
    }
  }

  it("applies each migration once when six stores open a fresh database at the same moment", async () => {
    const url = await server.database();
    const stores = await Promise.all(Array.from({ length: 6 }, () => PostgresStore.open(url, { max: 2 })));
    try {
      const rows = await sql<{ version: number }>(url, "SELECT version FROM schema_migrations ORDER BY version");
      expect(rows.map((r) => r.version)).toEqual(PG_MIGRATIONS.map((m) => m.version));
      const r = root();
      await stores[5]!.ingest({ post: [r] });
      expect((await stores[0]!.getRun(r.id))?.name).toBe("root");
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  }, 60_000);

  it("refuses a database that a newer tracepipe migrated, saying so", async () => {
    const url = await server.database();
    await (await PostgresStore.open(url)).close();
    await sql(url, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'from the future', now()::text)");
    const err = await PostgresStore.open(url).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SchemaTooNewError);
    expect((err as Error).message).toMatch(/schema version 999, newer than this tracepipe knows \(up to \d+\).*Upgrade tracepipe/);
  }, 60_000);

  it("upgrades a database of schema 5: the monitoring numbers it had stay, and runs written after count once", async () => {
    const url = await server.database();
    const q = {
      project: "schema",
      from_ms: Date.parse("2026-11-27T10:00:00Z"),
      to_ms: Date.parse("2026-11-27T11:00:00Z"),
      step_ms: 3_600_000,
    };
    const old = await PostgresStore.open(url);
    await old.ingest({ post: [root(), root()] });
    // What tracepipe made of this database before migration 6: the runs' deltas in monitor_rollups, no rollup queue.
    while (!(await foldRollups(old.pool))) await new Promise((r) => setTimeout(r, 50)); // the store's own fold held the lock
    await old.close();
    expect((await sql<{ n: number }>(url, "SELECT sum(runs)::int AS n FROM monitor_rollups"))[0]!.n).toBe(2);
    await sql(url, UNDO_7);
    await sql(url, "DROP TABLE monitor_rollup_queue");
    await sql(url, "DELETE FROM schema_migrations WHERE version >= 6");
    const upgraded = await PostgresStore.open(url);
    try {
      expect((await upgraded.monitorSeries(q)).traces.runs).toEqual([2]);
      await upgraded.ingest({ post: [root()] });
      expect((await upgraded.monitorSeries(q)).traces.runs).toEqual([3]);
      const rows = await sql<{ version: number }>(url, "SELECT version FROM schema_migrations ORDER BY version");
      expect(rows.map((r) => r.version)).toEqual(PG_MIGRATIONS.map((m) => m.version));
    } finally {
      await upgraded.close();
    }
  }, 60_000);

  /** The indexes of runs (by name) and of each partition (by table, names aside: a partition's index is named by what exists when it is made). */
  async function runIndexes(url: string): Promise<string[]> {
    const rows = await sql<{ tab: string; name: string; def: string }>(
      url,
      `SELECT c.relname AS tab, x.relname AS name, pg_get_indexdef(i.indexrelid) AS def FROM pg_index i
       JOIN pg_class c ON c.oid = i.indrelid JOIN pg_class x ON x.oid = i.indexrelid
       WHERE c.relname = 'runs' OR c.oid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'runs'::regclass)`,
    );
    return rows.map((r) => (r.tab === "runs" ? r.def : `${r.tab}: ${r.def.replace(` ${r.name} `, " ")}`)).sort();
  }

  it("upgrades a database of schema 6 to the indexes a fresh one has, and reads its runs as before", async () => {
    const fresh = await server.database();
    await (await PostgresStore.open(fresh)).close();
    const url = await server.database();
    const old = await PostgresStore.open(url);
    const r = root(undefined, "2026-11-27T10:15:00.000000Z");
    const childId = randomUUID();
    const child = {
      id: childId,
      trace_id: r.id,
      parent_run_id: r.id,
      dotted_order: `${r.dotted_order}.20261127T101501000000Z${childId}`,
      name: "child",
      run_type: "tool",
      start_time: "2026-11-27T10:15:01.000000Z",
      session_name: "schema",
    };
    const turn = { ...root(undefined, "2026-11-27T10:15:02.000000Z"), extra: { metadata: { thread_id: "t-1" } } };
    await old.ingest({ post: [r, child, turn] });
    await old.close();
    await sql(url, UNDO_7);
    expect(await runIndexes(url)).not.toEqual(await runIndexes(fresh));
    const upgraded = await PostgresStore.open(url);
    try {
      expect(await runIndexes(url)).toEqual(await runIndexes(fresh));
      expect((await upgraded.queryRuns({ project: "schema", limit: 2 })).runs.map((x) => x.id)).toEqual([r.id, child.id]);
      expect(await upgraded.countRuns("schema")).toBe(3);
      expect((await upgraded.threadTurns("t-1", "schema")).map((t) => t.trace_id)).toEqual([turn.id]);
    } finally {
      await upgraded.close();
    }
  }, 60_000);

  it("puts a trace's runs in the partition of the week its root started, and an unknown start in the default one", async () => {
    const url = await server.database();
    const store = await PostgresStore.open(url);
    try {
      const now = new Date();
      const start = now.toISOString().replace(/Z$/, "000Z");
      const r = root(randomUUID(), start);
      const childId = randomUUID();
      // A child that started later, in the same trace: its dotted_order begins with the root's start.
      const child = {
        ...r,
        id: childId,
        parent_run_id: r.id,
        dotted_order: `${r.dotted_order}.${"20991231T000000000000Z"}${childId}`,
        start_time: "2099-12-31T00:00:00Z",
      };
      const orphan = randomUUID();
      await store.ingest({ post: [r, child], patch: [{ id: orphan, end_time: start }] });
      const rows = await sql<{ id: string; part: string }>(url, "SELECT id, tableoid::regclass::text AS part FROM runs");
      const part = (id: string) => rows.find((x) => x.id === id)?.part;
      expect(part(r.id)).toMatch(/^runs_p\d{8}$/);
      expect(part(childId)).toBe(part(r.id));
      expect(part(orphan)).toBe("runs_default");
      // The orphan's post arrives: its row moves to its trace's week.
      await store.ingest({ post: [{ ...root(orphan, start) }] });
      expect((await sql<{ part: string }>(url, "SELECT tableoid::regclass::text AS part FROM runs WHERE id = $1", [orphan]))[0]!.part).toBe(
        part(r.id),
      );
      expect(await store.countRuns()).toBe(3);
    } finally {
      await store.close();
    }
  }, 60_000);

  it("leaves a large payload where it is when a patch sets the end time", async () => {
    const url = await server.database();
    const store = await PostgresStore.open(url);
    try {
      const r = { ...root(), inputs: { text: "lorem ipsum ".repeat(300_000) } };
      await store.ingest({ post: [r] });
      const chunks = async () => {
        const [t] = await sql<{ toast: string }>(
          url,
          "SELECT c.reltoastrelid::regclass::text AS toast FROM pg_class c WHERE c.oid = (SELECT tableoid FROM runs WHERE id = $1)",
          [r.id],
        );
        return (await sql<{ chunk_id: number }>(url, `SELECT DISTINCT chunk_id::text::bigint AS chunk_id FROM ${t!.toast} ORDER BY 1`)).map(
          (x) => x.chunk_id,
        );
      };
      const before = await chunks();
      expect(before.length).toBeGreaterThanOrEqual(1);
      await store.ingest({ patch: [{ id: r.id, end_time: "2026-11-27T10:16:00Z", outputs: { ok: true } }] });
      expect(await chunks()).toEqual(before);
      const got = await store.getRun(r.id);
      expect(got?.inputs).toEqual(r.inputs);
      expect(got?.end_time).toBe("2026-11-27T10:16:00.000000Z");
    } finally {
      await store.close();
    }
  }, 60_000);

  it("keeps U+0000 and lone surrogates in names, errors and payloads exactly", async () => {
    const url = await server.database();
    const store = await PostgresStore.open(url);
    try {
      const r = {
        ...root(),
        name: "a\u0000b",
        inputs: { text: "nul \u0000 and \ud800 alone" },
        extra: { metadata: { trace_model_name: "m\u0000" } },
      };
      await store.ingest({ post: [r], patch: [{ id: r.id, error: "bad \udc00 \u0000" }] });
      const got = await store.getRun(r.id);
      expect(got).toMatchObject({ name: "a\u0000b", error: "bad \udc00 \u0000", inputs: r.inputs, extra: r.extra });
      const [tree] = await store.traceRuns(r.id);
      expect(tree).toMatchObject({ name: "a\u0000b", error: "bad \udc00 \u0000" });
      expect((await store.listTraces({ q: "bad \udc00" })).traces.map((t) => t.trace_id)).toEqual([r.id]);
    } finally {
      await store.close();
    }
  }, 60_000);
});
