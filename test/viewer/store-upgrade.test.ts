/** A traces.db written before the viewer (schema 2) opens with its runs listed, tokens included. */
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import Database from "better-sqlite3";
import { MIGRATIONS } from "../../src/store/sqlite/migrations.js";
import { SqliteStore } from "../../src/store/sqlite/index.js";
import { inTrace, inTraceOfRow } from "../../src/store/sqlite/trace-members.js";
import { THREAD_ID } from "../../src/store/sqlite/threads.js";
import { tempDir } from "../helpers/runs.js";
import { XSS } from "./traces.js";

/** What migration 7 (feedback, threads, monitoring indexes) added, taken away again. */
const UNDO_7 = "DROP TABLE feedback; DROP INDEX runs_threads; DROP INDEX runs_roots_monitor; DROP INDEX runs_llm_monitor";
/** What migrations 11 (monitoring rollups, threads table) and 12 (webhook outbox) added, taken away again. */
const UNDO_11 = "DROP TABLE monitor_rollups; DROP TABLE threads; DROP TABLE webhook_outbox";
/** An index as the migration that made it wrote it. */
const made = (version: number, index: string) =>
  new RegExp(`CREATE INDEX ${index} ON runs \\([^;]*;`).exec(MIGRATIONS.find((m) => m.version === version)!.sql)![0];
/** What migration 13 changed, undone: the monitoring indexes of migrations 7 and 9 back, the llm runs' start index gone. */
const UNDO_13 = `DROP INDEX runs_llm_project_start; ${made(7, "runs_roots_monitor")} ${made(9, "runs_llm_monitor")}`;
/** The start-time indexes migration 14 made again without the run id. */
const START_INDEXES = [
  [1, "runs_start"],
  [1, "runs_project_start"],
  [3, "runs_roots_start"],
  [3, "runs_roots_project_start"],
] as const;
/** What migration 14 changed, undone: the start-time indexes as migrations 1 and 3 made them, the run id last in each. */
const UNDO_14 = START_INDEXES.map(([v, name]) => `DROP INDEX ${name}; ${made(v, name)}`).join(" ");
/** What migration 15 changed, undone: the trace index as migration 1 made it, every run in it. */
const UNDO_15 = `DROP INDEX runs_trace; ${made(1, "runs_trace")}`;
/** What migration 16 changed, undone: the threads index as migration 7 made it, every root in it. */
const UNDO_16 = `DROP INDEX runs_threads; ${made(7, "runs_threads")}`;

describe("store upgrade to the viewer's schema", () => {
  it("adds the summary columns and indexes to a populated schema-2 file", async () => {
    const path = join(tempDir("tp-upgrade-"), "traces.db");
    // Build the file as the previous release did: its migrations, then a run through its ingest.
    const old = new SqliteStore(path);
    await old.ingest({ post: [XSS.run] });
    old.close();
    const db = new Database(path);
    db.exec(UNDO_16);
    db.exec(UNDO_15);
    db.exec(UNDO_14);
    db.exec(UNDO_13);
    db.exec(UNDO_11);
    db.exec("DROP TABLE otel_logs");
    db.exec(UNDO_7);
    db.exec("DROP TABLE otel_rootless; ALTER TABLE otel_spans DROP COLUMN parent_remote");
    db.exec("DROP TABLE run_pieces; ALTER TABLE runs DROP COLUMN pieces");
    db.exec("DROP INDEX runs_trace_cost; DROP INDEX runs_roots_start; DROP INDEX runs_roots_project_start; DROP INDEX runs_errors");
    for (const c of ["v_model", "v_provider", "v_usage", "v_latency_ms"]) db.exec(`ALTER TABLE runs DROP COLUMN ${c}`);
    db.prepare("DELETE FROM schema_migrations WHERE version >= 3").run();
    db.close();

    const store = new SqliteStore(path);
    try {
      const { traces } = await store.listTraces();
      expect(traces).toHaveLength(1);
      expect(traces[0]).toMatchObject({ trace_id: XSS.run.id, total_tokens: 18, models: ["gpt-4o"], latency_ms: 1000 });
      const check = new Database(path, { readonly: true });
      const versions = (check.prepare("SELECT version FROM schema_migrations ORDER BY version").all() as { version: number }[]).map(
        (r) => r.version,
      );
      expect(versions).toEqual(MIGRATIONS.map((m) => m.version));
      check.close();
    } finally {
      store.close();
    }
  });

  it("builds the monitoring rollups and the threads table of a populated schema-10 file from its runs", async () => {
    const path = join(tempDir("tp-upgrade-"), "traces.db");
    const old = new SqliteStore(path);
    const start = Date.parse(XSS.run.start_time as string);
    const hour = Math.floor(start / 3_600_000) * 3_600_000;
    const root = {
      ...XSS.run,
      session_name: "upgrade",
      extra: { metadata: { ...(XSS.run.extra as { metadata?: object } | undefined)?.metadata, session_id: "conv-1" } },
    };
    await old.ingest({ post: [root] });
    const q = { project: "upgrade", from_ms: hour, to_ms: hour + 3_600_000, step_ms: 3_600_000 };
    const expected = await old.monitorSeries(q);
    const threads = (await old.listThreads({ project: "upgrade" })).threads;
    old.close();
    const db = new Database(path);
    db.exec(UNDO_16);
    db.exec(UNDO_15);
    db.exec(UNDO_14);
    db.exec(UNDO_13);
    db.exec(UNDO_11);
    db.prepare("DELETE FROM schema_migrations WHERE version >= 11").run();
    db.close();

    const store = new SqliteStore(path);
    try {
      expect(expected.traces.runs).toEqual([1]);
      expect(await store.monitorSeries(q)).toEqual(expected);
      expect(threads.map((t) => [t.thread_id, t.turns])).toEqual([["conv-1", 1]]);
      expect((await store.listThreads({ project: "upgrade" })).threads).toEqual(threads);
      const check = new Database(path, { readonly: true });
      const indexes = (
        check.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'runs'").all() as { name: string }[]
      ).map((r) => r.name);
      check.close();
      expect(indexes).toContain("runs_llm_project_start");
      expect(indexes).not.toContain("runs_roots_monitor");
      expect(indexes).not.toContain("runs_llm_monitor");
    } finally {
      store.close();
    }
  });

  it("adds the cost index to a schema-3 file, and its traces sort and filter by cost", async () => {
    const path = join(tempDir("tp-upgrade-"), "traces.db");
    const old = new SqliteStore(path);
    const priced = {
      ...XSS.run,
      outputs: {
        messages: [
          {
            role: "assistant",
            content: [{ type: "text", text: "a" }],
            usage_metadata: { input_tokens: 1, output_tokens: 1, total_tokens: 2, total_cost: 0.5 },
          },
        ],
      },
    };
    await old.ingest({ post: [priced] });
    old.close();
    const db = new Database(path);
    db.exec(UNDO_16);
    db.exec(UNDO_15);
    db.exec(UNDO_14);
    db.exec(UNDO_13);
    db.exec(UNDO_11);
    db.exec("DROP TABLE otel_logs");
    db.exec(UNDO_7);
    db.exec("DROP TABLE otel_rootless; ALTER TABLE otel_spans DROP COLUMN parent_remote");
    db.exec("DROP TABLE run_pieces; ALTER TABLE runs DROP COLUMN pieces");
    db.exec("DROP INDEX runs_trace_cost");
    db.prepare("DELETE FROM schema_migrations WHERE version >= 4").run();
    db.close();

    const store = new SqliteStore(path);
    try {
      expect((await store.listTraces({ sort: "cost", min_cost: 0.5 })).traces.map((t) => t.total_cost)).toEqual([0.5]);
      const check = new Database(path, { readonly: true });
      expect(check.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'runs_trace_cost'").get()).toBeDefined();
      check.close();
    } finally {
      store.close();
    }
  });

  it("remakes the start-time indexes of a schema-13 file without the run id, and runs sharing a start time still list in id order", async () => {
    const path = join(tempDir("tp-upgrade-"), "traces.db");
    const old = new SqliteStore(path);
    const at = XSS.run.start_time as string;
    // Ids out of order against their writing order, every run at one start time, so only the id orders them.
    const ids = ["3", "1", "4", "2"].map((d) => `0000000${d}-0000-4000-8000-000000000000`);
    const stamp = (XSS.run.dotted_order as string).slice(0, 22);
    await old.ingest({ post: ids.map((id) => ({ ...XSS.run, id, trace_id: id, dotted_order: stamp + id, session_name: "ties" })) });
    old.close();
    const db = new Database(path);
    db.exec(UNDO_16);
    db.exec(UNDO_15);
    db.exec(UNDO_14);
    db.prepare("DELETE FROM schema_migrations WHERE version >= 14").run();
    db.close();

    const store = new SqliteStore(path);
    try {
      const check = new Database(path, { readonly: true });
      for (const [, name] of START_INDEXES) {
        const { sql } = check.prepare("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?").get(name) as { sql: string };
        expect(sql).toMatch(/\(\s*(session_name, )?start_time\)/);
      }
      // The roots' page is an index walk, sorted only within a start time, not a sort of every root.
      const plan = (
        check
          .prepare("EXPLAIN QUERY PLAN SELECT id FROM runs r WHERE parent_run_id IS NULL ORDER BY r.start_time DESC, r.id DESC LIMIT 51")
          .all() as { detail: string }[]
      ).map((p) => p.detail);
      check.close();
      expect(plan.join(" | ")).toMatch(/INDEX runs_roots_start.*LAST TERM OF ORDER BY/);
      const sorted = [...ids].sort();
      expect((await store.listTraces({ project: "ties", order: "asc" })).traces.map((t) => t.trace_id)).toEqual(sorted);
      expect((await store.listTraces({ project: "ties" })).traces.map((t) => t.trace_id)).toEqual([...sorted].reverse());
      const first = await store.queryRuns({ project: "ties", limit: 2 });
      const rest = await store.queryRuns({ project: "ties", limit: 2, cursor: first.cursor! });
      expect([...first.runs, ...rest.runs].map((r) => [r.id, r.start_time])).toEqual(sorted.map((id) => [id, at]));
    } finally {
      store.close();
    }
  });

  it("leaves runs whose id is their trace id out of the trace index of a schema-14 file, and every trace read answers as before", async () => {
    const path = join(tempDir("tp-upgrade-"), "traces.db");
    const old = new SqliteStore(path);
    const id = (d: string) => `0000000${d}-0000-4000-8000-000000000000`;
    const root = id("1");
    const stamp = (XSS.run.dotted_order as string).slice(0, 22);
    const child = (d: string, parent: string, more: object) => ({
      ...XSS.run,
      id: id(d),
      trace_id: root,
      parent_run_id: parent,
      dotted_order: `${stamp}${root}.${stamp}${id(d)}`,
      name: `child ${d}`,
      extra: { metadata: { trace_model_name: `model-${d}`, tier: d } },
      ...more,
    });
    await old.ingest({
      post: [
        { ...XSS.run, id: root, trace_id: root, dotted_order: `${stamp}${root}`, session_name: "tree" },
        { ...child("2", root, {}), session_name: "tree" },
        { ...child("3", id("2"), { error: "boom" }), session_name: "tree" },
        // A trace of one run, and a run whose trace is another's (a root numbered apart from its trace).
        { ...XSS.run, id: id("4"), trace_id: id("4"), dotted_order: `${stamp}${id("4")}`, session_name: "tree", error: "lonely" },
        { ...XSS.run, id: id("5"), trace_id: id("6"), dotted_order: `${stamp}${id("5")}`, session_name: "tree" },
      ],
    });
    await old.storeFeedback([{ id: id("7"), run_id: id("3"), key: "ok", score: 1 }]);
    const reads = async (s: SqliteStore) => ({
      runs: await s.traceRuns(root),
      alone: await s.traceRuns(id("4")),
      apart: await s.traceRuns(id("6")),
      queried: (await s.queryRuns({ trace_id: root })).runs.map((r) => r.id),
      list: (await s.listTraces({ project: "tree" })).traces,
      byModel: (await s.listTraces({ project: "tree", model: "model-3" })).traces.map((t) => t.trace_id),
      byMetadata: (await s.listTraces({ project: "tree", metadata: { tier: "2" } })).traces.map((t) => t.trace_id),
      byText: (await s.listTraces({ project: "tree", q: "boom" })).traces.map((t) => t.trace_id),
      byRootText: (await s.listTraces({ project: "tree", q: "lonely" })).traces.map((t) => t.trace_id),
      feedback: await s.traceFeedback(root),
    });
    const before = await reads(old);
    old.close();
    const db = new Database(path);
    db.exec(UNDO_16);
    db.exec(UNDO_15);
    db.prepare("DELETE FROM schema_migrations WHERE version >= 15").run();
    db.close();

    const store = new SqliteStore(path);
    try {
      const check = new Database(path, { readonly: true });
      const { sql } = check.prepare("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = 'runs_trace'").get() as { sql: string };
      const indexed = (
        check.prepare("SELECT id FROM runs INDEXED BY runs_trace WHERE trace_id > '' AND trace_id <> id ORDER BY id").all() as {
          id: string;
        }[]
      ).map((r) => r.id);
      const planOf = (sql: string) =>
        (check.prepare(`EXPLAIN QUERY PLAN ${sql}`).all({ t: root }) as { detail: string }[]).map((p) => p.detail).join(" | ");
      const plan = planOf(`SELECT id FROM runs WHERE ${inTrace("@t")}`);
      const rootPlan = planOf(
        `SELECT r.id FROM runs r WHERE r.parent_run_id IS NULL AND EXISTS (SELECT 1 FROM runs c WHERE ${inTraceOfRow("r", "c")})`,
      );
      check.close();
      expect(sql).toMatch(/WHERE trace_id <> id$/);
      expect(indexed).toEqual([id("2"), id("3"), id("5")]);
      expect(plan).toMatch(/INDEX runs_trace .*sqlite_autoindex_runs_1/);
      expect(rootPlan).toMatch(/INDEX runs_trace .*INTEGER PRIMARY KEY/);
      expect(before.runs.map((r) => r.id)).toEqual([root, id("2"), id("3")]);
      expect(before.apart.map((r) => r.id)).toEqual([id("5")]);
      expect(before.byModel).toEqual([root]);
      expect(before.byMetadata).toEqual([root]);
      expect(before.byText).toEqual([root]);
      expect(before.byRootText).toEqual([id("4")]);
      expect(before.feedback).toEqual([{ key: "ok", count: 1, avg_score: 1 }]);
      expect(await reads(store)).toEqual(before);
      // Pruning takes whole traces: the root's, found through both indexes, goes with its runs.
      await store.pruneTraces(new Date("2100-01-01T00:00:00Z"));
      expect(await store.countRuns("tree")).toBe(0);
    } finally {
      store.close();
    }
  });

  it("keeps only roots with a thread id in the threads index of a schema-15 file, and threads read and grow as before", async () => {
    const path = join(tempDir("tp-upgrade-"), "traces.db");
    const old = new SqliteStore(path);
    const id = (d: string) => `0000000${d}-0000-4000-8000-000000000000`;
    const stamp = (XSS.run.dotted_order as string).slice(0, 22);
    const root = (d: string, metadata: object, more: object = {}) => ({
      ...XSS.run,
      id: id(d),
      trace_id: id(d),
      dotted_order: `${stamp}${id(d)}`,
      session_name: "talk",
      extra: { metadata },
      ...more,
    });
    await old.ingest({
      post: [
        root("1", { session_id: "s-1" }),
        root("2", { thread_id: "t-1" }),
        root("3", { conversation_id: "c-1" }),
        root("4", {}),
        root("5", { thread_id: 42 }),
        // A child naming a thread is no turn of it.
        {
          ...root("6", { thread_id: "t-1" }),
          trace_id: id("2"),
          parent_run_id: id("2"),
          dotted_order: `${stamp}${id("2")}.${stamp}${id("6")}`,
        },
      ],
    });
    const reads = async (s: SqliteStore) => ({
      threads: (await s.listThreads({ project: "talk" })).threads,
      turns: await s.threadTurns("t-1", "talk"),
      numeric: (await s.threadTurns("42", "talk")).map((t) => t.trace_id),
    });
    const before = await reads(old);
    old.close();
    const db = new Database(path);
    db.exec(UNDO_16);
    db.prepare("DELETE FROM schema_migrations WHERE version >= 16").run();
    db.close();

    const store = new SqliteStore(path);
    try {
      const check = new Database(path, { readonly: true });
      const { sql } = check.prepare("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = 'runs_threads'").get() as {
        sql: string;
      };
      // Entries in the index itself (its leaf cells), and the runs a read through it finds.
      const { entries } = check
        .prepare("SELECT sum(ncell) AS entries FROM dbstat WHERE name = 'runs_threads' AND pagetype = 'leaf'")
        .get() as {
        entries: number;
      };
      const indexed = (
        check
          .prepare(`SELECT id FROM runs INDEXED BY runs_threads WHERE parent_run_id IS NULL AND ${THREAD_ID} IS NOT NULL ORDER BY id`)
          .all() as { id: string }[]
      ).map((r) => r.id);
      check.close();
      expect(sql).toMatch(/WHERE parent_run_id IS NULL AND coalesce\(.*\) IS NOT NULL$/);
      expect(entries).toBe(4);
      expect(indexed).toEqual([id("1"), id("2"), id("3"), id("5")]);
      expect(before.threads.map((t) => [t.thread_id, t.turns]).sort()).toEqual([
        ["42", 1],
        ["c-1", 1],
        ["s-1", 1],
        ["t-1", 1],
      ]);
      expect(before.numeric).toEqual([id("5")]);
      expect(await reads(store)).toEqual(before);
      // A turn that moves in time makes the thread's bounds be found again through the index.
      const later = "2099-01-01T00:00:00.000000Z";
      await store.ingest({ post: [root("7", { thread_id: "t-1" }, { start_time: later, end_time: later })] });
      await store.ingest({ patch: [{ id: id("7"), start_time: "2098-01-01T00:00:00.000000Z" }] });
      const grown = (await store.listThreads({ project: "talk" })).threads.find((t) => t.thread_id === "t-1")!;
      expect(grown.turns).toBe(2);
      expect((await store.threadTurns("t-1", "talk")).map((t) => t.trace_id)).toEqual([id("2"), id("7")]);
    } finally {
      store.close();
    }
  });
});
