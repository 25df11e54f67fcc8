/**
 * The SQLite store's group commit: ingests handed over in one turn of the
 * event loop share one transaction; a refused one, or one whose write fails
 * part-way, takes nothing else with it; none is reported stored before the
 * group commits; closing the store writes what is pending; and the rows a
 * group's ingests share (rollups, projects) are written once, with the parts
 * of the ingests that were kept.
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../src/errors.js";
import type { Run } from "../../src/run/schema.js";
import { SqliteStore } from "../../src/store/sqlite/index.js";
import { GroupCommit } from "../../src/store/sqlite/group-commit.js";
import { rebuildRollups } from "../../src/store/sqlite/rollups.js";
import { runRecord, tempDir } from "../helpers/runs.js";

const post = (overrides: Record<string, unknown> = {}) => ({
  post: [runRecord({ session_name: "group", ...overrides }) as unknown as Run],
});

describe("SQLite group commit", () => {
  it("writes the ingests of one turn in one transaction, a refused one taking nothing else with it", async () => {
    const store = new SqliteStore(join(tempDir("tp-group-"), "t.db"));
    const group = (store as unknown as { group: GroupCommit<unknown, unknown> }).group;
    const good1 = post();
    const bad = post({ start_time: "not a time" });
    const good2 = post();
    const outcomes = await Promise.allSettled([store.ingest(good1), store.ingest(bad), store.ingest(good2)]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    const refusal = (outcomes[1] as PromiseRejectedResult).reason as ValidationError;
    expect(refusal).toBeInstanceOf(ValidationError);
    expect(refusal.issues[0]).toMatchObject({ loc: ["post", 0, "start_time"] });
    expect(group.stats).toEqual({ groups: 1, ingests: 3 });
    expect(await store.countRuns("group")).toBe(2);
    expect(await store.getRun(good1.post[0]!.id)).toBeDefined();
    expect(await store.getRun(bad.post[0]!.id)).toBeUndefined();
    // The next turn's ingest is a group of its own.
    await store.ingest(post());
    expect(group.stats).toEqual({ groups: 2, ingests: 4 });
    await store.close();
  });

  it("reports none of a group stored when its transaction is undone, and writes what is pending on close", async () => {
    const db = new Database(":memory:");
    db.exec("CREATE TABLE t (v INTEGER NOT NULL)");
    const insert = db.prepare("INSERT INTO t (v) VALUES (?)");
    const committed: string[] = [];
    const gc = new GroupCommit<number, number>(
      db,
      (v) => () => {
        insert.run(v);
        // Stands for SQLite rolling the whole transaction back (a full disk): the group's writes are gone.
        if (v === 3) db.exec("ROLLBACK");
        return v;
      },
      (err) => new Error(`mapped: ${(err as Error).message}`),
      () => committed.push("commit"),
    );
    const outcomes = await Promise.allSettled([gc.add(1), gc.add(2), gc.add(3)]);
    expect(outcomes.map((o) => o.status)).toEqual(["rejected", "rejected", "rejected"]);
    expect(String((outcomes[0] as PromiseRejectedResult).reason)).toMatch(/^Error: mapped: /);
    expect(db.prepare("SELECT count(*) AS n FROM t").get()).toEqual({ n: 0 });
    expect(committed).toEqual([]);

    const pending = [gc.add(4), gc.add(5)];
    gc.flush();
    expect(db.prepare("SELECT v FROM t ORDER BY v").all()).toEqual([{ v: 4 }, { v: 5 }]);
    expect(await Promise.all(pending)).toEqual([4, 5]);
    expect(gc.stats).toEqual({ groups: 1, ingests: 2 });
  });

  it("undoes only the ingest whose write fails part-way, and keeps the others of its group", async () => {
    const db = new Database(":memory:");
    db.exec("CREATE TABLE t (v INTEGER NOT NULL CHECK (v <> 23))");
    const insert = db.prepare("INSERT INTO t (v) VALUES (?)");
    const gc = new GroupCommit<number[], number>(
      db,
      (vs) => {
        if (vs.length === 0) throw new Error("refused: nothing to write");
        // Writes row by row: [21, 22, 23] writes two rows before the constraint refuses the third.
        return () => vs.reduce((n, v) => (insert.run(v), n + 1), 0);
      },
      (err) => err,
      () => {},
    );
    const outcomes = await Promise.allSettled([gc.add([1, 2]), gc.add([21, 22, 23]), gc.add([]), gc.add([3])]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "rejected", "fulfilled"]);
    expect(String((outcomes[1] as PromiseRejectedResult).reason)).toMatch(/CHECK constraint failed/);
    expect(String((outcomes[2] as PromiseRejectedResult).reason)).toMatch(/refused: nothing to write/);
    expect((outcomes[0] as PromiseFulfilledResult<number>).value).toBe(2);
    // Each row once: the undone first attempt left nothing behind.
    expect(db.prepare("SELECT v FROM t ORDER BY v").all()).toEqual([{ v: 1 }, { v: 2 }, { v: 3 }]);
    expect(gc.stats).toEqual({ groups: 1, ingests: 4 });
  });
  it("writes a group's tail once, last, with the parts of the writes that were kept", async () => {
    const db = new Database(":memory:");
    db.exec("CREATE TABLE t (v INTEGER NOT NULL CHECK (v <> 23)); CREATE TABLE total (n INTEGER NOT NULL, writes INTEGER NOT NULL)");
    db.exec("INSERT INTO total VALUES (0, 0)");
    const insert = db.prepare("INSERT INTO t (v) VALUES (?)");
    const addTotal = db.prepare("UPDATE total SET n = n + ?, writes = writes + 1");
    let opened = 0;
    const gc = new GroupCommit<number[], number, { n: number }>(
      db,
      (vs) => (tail) => {
        for (const v of vs) insert.run(v);
        tail.n += vs.length;
        return vs.length;
      },
      (err) => err,
      () => {},
      { open: () => (opened++, { n: 0 }), write: (tail) => addTotal.run(tail.n) },
    );
    const outcomes = await Promise.allSettled([gc.add([1, 2]), gc.add([21, 22, 23]), gc.add([3])]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    // The first attempt was undone (its tail with it); the second wrote the tail once, without the undone write's part.
    expect(opened).toBe(2);
    expect(db.prepare("SELECT n, writes FROM total").get()).toEqual({ n: 3, writes: 1 });
    expect(db.prepare("SELECT count(*) AS n FROM t").get()).toEqual({ n: 3 });
  });

  it("sums the rollups of one turn's ingests into the rows a rebuild from the runs gives, with one refused among them", async () => {
    const dir = tempDir("tp-group-tail-");
    const store = new SqliteStore(join(dir, "t.db"));
    const group = (store as unknown as { group: GroupCommit<unknown, unknown> }).group;
    const at = (i: number) => ({ start_time: `2026-11-22T10:15:0${i}.000000Z`, end_time: `2026-11-22T10:15:0${i}.${i}00000Z` });
    const batches = [
      { post: [runRecord({ session_name: "tail", ...at(1) }), runRecord({ session_name: "tail", ...at(2), error: "boom" })] },
      { post: [runRecord({ session_name: "tail", start_time: "not a time" })] },
      { post: [runRecord({ session_name: "tail", ...at(3) }), runRecord({ session_name: "other", ...at(4) })] },
    ] as unknown as { post: Run[] }[];
    const outcomes = await Promise.allSettled(batches.map((b) => store.ingest(b)));
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(group.stats).toEqual({ groups: 1, ingests: 3 });
    await store.close();
    const db = new Database(join(dir, "t.db"));
    const rollups = () => db.prepare("SELECT * FROM monitor_rollups ORDER BY project, hour, scope, name").all();
    const kept = rollups();
    expect(kept.map((r) => (r as { runs: number }).runs)).toEqual([1, 3]);
    rebuildRollups(db);
    expect(kept).toEqual(rollups());
    expect(db.prepare("SELECT name FROM projects ORDER BY name").all()).toEqual([{ name: "other" }, { name: "tail" }]);
    db.close();
  });

  it("merges a post of an id already stored, before its group or in it, into that run: it fills gaps only and counts as an update", async () => {
    const dir = tempDir("tp-group-again-");
    const store = new SqliteStore(join(dir, "t.db"));
    const group = (store as unknown as { group: GroupCommit<unknown, unknown> }).group;
    const first = runRecord({ session_name: "again", name: "first", end_time: undefined });
    const earlier = runRecord({ session_name: "again", name: "earlier" });
    expect(await store.ingest({ post: [earlier] } as unknown as { post: Run[] })).toMatchObject({ created: 1, updated: 0 });
    const again = { ...first, name: "second", outputs: { answer: 42 }, end_time: "2026-11-22T10:15:09.000000Z" };
    const outcomes = await Promise.all(
      [{ post: [first, { ...earlier, name: "renamed" }] }, { post: [again] }, { post: [runRecord({ session_name: "again" })] }].map((b) =>
        store.ingest(b as unknown as { post: Run[] }),
      ),
    );
    expect(group.stats).toEqual({ groups: 2, ingests: 4 });
    expect(outcomes.map((o) => [o.created, o.updated])).toEqual([
      [1, 1],
      [0, 1],
      [1, 0],
    ]);
    expect(await store.countRuns("again")).toBe(3);
    const got = (await store.getRun(first.id as string))!;
    expect([got.name, got.outputs, got.end_time]).toEqual(["first", { answer: 42 }, "2026-11-22T10:15:09.000000Z"]);
    expect((await store.getRun(earlier.id as string))!.name).toBe("earlier");
    await store.close();
    const db = new Database(join(dir, "t.db"));
    const rollups = () => db.prepare("SELECT * FROM monitor_rollups ORDER BY project, hour, scope, name").all();
    const kept = rollups();
    rebuildRollups(db);
    expect(kept).toEqual(rollups());
    db.close();
  });
});
