/** A traces.db written before the viewer (schema 2) opens with its runs listed, tokens included. */
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import Database from "better-sqlite3";
import { MIGRATIONS } from "../../src/store/sqlite/migrations.js";
import { SqliteStore } from "../../src/store/sqlite/index.js";
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

describe("store upgrade to the viewer's schema", () => {
  it("adds the summary columns and indexes to a populated schema-2 file", async () => {
    const path = join(tempDir("tp-upgrade-"), "traces.db");
    // Build the file as the previous release did: its migrations, then a run through its ingest.
    const old = new SqliteStore(path);
    await old.ingest({ post: [XSS.run] });
    old.close();
    const db = new Database(path);
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
});
