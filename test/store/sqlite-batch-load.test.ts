/**
 * The SQLite ingest reads the stored rows of a batch's ids together (several
 * ids per statement): each run is merged with its own row, whether the batch
 * holds one id or more than one statement reads, and ids not yet stored are
 * created.
 */
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Run, RunPatch } from "../../src/run/schema.js";
import { SqliteStore } from "../../src/store/sqlite/index.js";
import { runRecord, tempDir } from "../helpers/runs.js";

describe("SQLite ingest of a batch's stored rows", () => {
  it("merges each of 75 runs with its own stored row and creates the ones not stored yet", async () => {
    const store = new SqliteStore(join(tempDir("tp-batch-load-"), "t.db"));
    const ids = Array.from({ length: 75 }, () => randomUUID());
    const stored = ids.slice(0, 70);
    const posts = stored.map((id, i) => runRecord({ id, session_name: "load", name: `run-${i}` }) as unknown as Run);
    expect(await store.ingest({ post: posts })).toMatchObject({ created: 70, updated: 0 });
    const patches = stored.map(
      (id, i) => ({ id, trace_id: id, end_time: "2026-11-22T10:15:01.000000Z", outputs: { answer: `answer-${i}` } }) as unknown as RunPatch,
    );
    const fresh = ids.slice(70).map((id) => runRecord({ id, session_name: "load", name: "fresh" }) as unknown as Run);
    expect(await store.ingest({ post: fresh, patch: patches })).toMatchObject({ created: 5, updated: 70 });
    for (const [i, id] of stored.entries()) {
      const run = await store.getRun(id);
      expect(run).toMatchObject({ id, name: `run-${i}`, outputs: { answer: `answer-${i}` }, end_time: "2026-11-22T10:15:01.000000Z" });
    }
    for (const id of ids.slice(70)) expect(await store.getRun(id)).toMatchObject({ id, name: "fresh" });
    // One id alone, stored: merged with its row.
    expect(await store.ingest({ patch: [{ id: ids[0]!, trace_id: ids[0]!, error: "late" } as unknown as RunPatch] })).toMatchObject({
      created: 0,
      updated: 1,
    });
    expect(await store.getRun(ids[0]!)).toMatchObject({ name: "run-0", error: "late", outputs: { answer: "answer-0" } });
    expect(await store.countRuns("load")).toBe(75);
    await store.close();
  });
});
