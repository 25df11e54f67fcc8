/**
 * JSON columns over PIECE_COLUMN_BYTES are stored in pieces (run_pieces), not
 * in the run's row (issue 13 item 13): what is read back is exactly what was
 * written, whatever characters sit on a piece boundary; patches move a column
 * between the row and its pieces without leaving stale pieces; the trace
 * search finds text across a piece boundary; deleting a project deletes its
 * pieces; a file written before pieces existed still reads.
 */
import Database from "better-sqlite3";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MIGRATIONS } from "../../src/store/sqlite/migrations.js";
import { PIECE_CHARS, PIECE_COLUMN_BYTES } from "../../src/store/sqlite/pieces.js";
import { SqliteStore } from "../../src/store/sqlite/index.js";
import { collectGarbage, GC_PART_CHARS } from "../../src/server/gc.js";
import { multipart, runRecord, startCollector } from "../helpers/collector.js";
import { tempDir } from "../helpers/runs.js";

function rawColumns(
  path: string,
  id: string,
): { inputs: string | null; outputs: string | null; pieces: string | null; counts: Record<string, number> } {
  const db = new Database(path, { readonly: true });
  try {
    const row = db.prepare("SELECT inputs, outputs, pieces FROM runs WHERE id = ?").get(id) as {
      inputs: string | null;
      outputs: string | null;
      pieces: string | null;
    };
    const counts = Object.fromEntries(
      (db.prepare("SELECT col, count(*) AS n FROM run_pieces WHERE run_id = ? GROUP BY col").all(id) as { col: string; n: number }[]).map(
        (r) => [r.col, r.n],
      ),
    );
    return { ...row, counts };
  } finally {
    db.close();
  }
}

/**
 * A string whose JSON text is over the threshold and puts a surrogate pair,
 * a 3-byte character and a 2-byte one across every piece boundary (JSON text
 * offset = string offset + the `{"text":"` prefix).
 */
function trickyText(): string {
  const prefix = '{"text":"'.length;
  const unit = "ab😀€é ";
  let s = "";
  while (Buffer.byteLength(s) < PIECE_COLUMN_BYTES * 1.6) s += unit.repeat(4096);
  // Put a surrogate pair exactly across the first piece boundary.
  const at = PIECE_CHARS - prefix - 1;
  return s.slice(0, at) + "😀" + s.slice(at);
}

describe("large JSON columns in pieces", () => {
  const dir = tempDir("tp-pieces-");
  const path = join(dir, "runs.db");
  const store = new SqliteStore(path);
  afterAll(() => store.close());

  it("stores a large column in pieces and reads back exactly what was written", async () => {
    const text = trickyText();
    const run = runRecord({ session_name: "pieces", inputs: { text }, outputs: { answer: "small" } });
    await store.ingest({ post: [run] });
    const raw = rawColumns(path, run.id as string);
    expect(raw.inputs).toBeNull();
    expect(raw.outputs).toBe('{"answer":"small"}');
    expect(JSON.parse(raw.pieces!)).toEqual({ inputs: Buffer.byteLength(JSON.stringify({ text })) });
    expect(raw.counts.inputs).toBeGreaterThan(1);
    const got = (await store.getRun(run.id as string))!;
    expect((got.inputs as { text: string }).text === text).toBe(true);
    expect(got.outputs).toEqual({ answer: "small" });
    expect((await store.queryRuns({ project: "pieces" })).runs[0]!.inputs).toEqual({ text });
  });

  it("patches: an end time leaves the pieces alone; small outputs go back to the row; new large inputs replace every old piece", async () => {
    const big = "x".repeat(PIECE_COLUMN_BYTES * 3);
    const run = runRecord({ session_name: "patched", inputs: { big }, outputs: { big } });
    await store.ingest({ post: [run] });
    const before = rawColumns(path, run.id as string);
    expect(Object.keys(before.counts).sort()).toEqual(["inputs", "outputs"]);

    await store.ingest({
      patch: [{ id: run.id, trace_id: run.trace_id, dotted_order: run.dotted_order, end_time: "2026-11-22T10:15:02Z" }],
    });
    expect(rawColumns(path, run.id as string).counts).toEqual(before.counts);

    await store.ingest({ patch: [{ id: run.id, trace_id: run.trace_id, dotted_order: run.dotted_order, outputs: { answer: "done" } }] });
    let raw = rawColumns(path, run.id as string);
    expect(raw.outputs).toBe('{"answer":"done"}');
    expect(raw.counts.outputs).toBeUndefined();
    expect(Object.keys(JSON.parse(raw.pieces!))).toEqual(["inputs"]);

    // Fewer pieces than before: none of the old ones may survive and be joined in.
    const smaller = "y".repeat(PIECE_COLUMN_BYTES + 10);
    await store.ingest({ patch: [{ id: run.id, trace_id: run.trace_id, dotted_order: run.dotted_order, inputs: { smaller } }] });
    raw = rawColumns(path, run.id as string);
    expect(raw.counts.inputs).toBe(Math.ceil(JSON.stringify({ smaller }).length / PIECE_CHARS));
    const got = (await store.getRun(run.id as string))!;
    expect(got.inputs).toEqual({ smaller });
    expect(got.outputs).toEqual({ answer: "done" });
    expect(got.end_time).toBe("2026-11-22T10:15:02.000000Z");
    // A post repeated after all that changes nothing (posts only fill gaps).
    await store.ingest({ post: [run] });
    expect((await store.getRun(run.id as string))!.inputs).toEqual({ smaller });
  });

  it("the trace search finds text inside pieces, and across a piece boundary", async () => {
    const prefix = '{"text":"'.length;
    const text = "z".repeat(PIECE_CHARS - prefix - 3) + "NEEDLE" + "z".repeat(PIECE_COLUMN_BYTES);
    const run = runRecord({ session_name: "search", inputs: { text } });
    await store.ingest({ post: [run] });
    expect(rawColumns(path, run.id as string).counts.inputs).toBeGreaterThan(1);
    expect((await store.listTraces({ project: "search", q: "needle" })).traces.map((t) => t.trace_id)).toEqual([run.id]);
    expect((await store.listTraces({ project: "search", q: "haystack" })).traces).toEqual([]);
  });

  it("deleting a project deletes its runs' pieces", async () => {
    const run = runRecord({ session_name: "doomed", inputs: { big: "q".repeat(PIECE_COLUMN_BYTES * 2) } });
    await store.ingest({ post: [run] });
    expect(rawColumns(path, run.id as string).counts.inputs).toBeGreaterThan(0);
    expect(await store.deleteProject("doomed")).toBe(1);
    expect(rawColumns(path, run.id as string).counts).toEqual({});
  });

  it("a file written before pieces existed keeps its large inline columns readable and patchable", async () => {
    const oldPath = join(tempDir("tp-pieces-old-"), "runs.db");
    // Schema 4 as the previous release made it, with a large column inline in its row.
    const db = new Database(oldPath);
    db.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)");
    for (const m of MIGRATIONS.filter((m) => m.version <= 4)) {
      db.exec(m.sql);
      db.prepare("INSERT INTO schema_migrations VALUES (?, ?, ?)").run(m.version, m.name, "2026-11-01T00:00:00Z");
    }
    const run = runRecord({ session_name: "old" });
    const inputs = { big: "w".repeat(PIECE_COLUMN_BYTES * 2) };
    db.prepare(
      "INSERT INTO runs (id, trace_id, dotted_order, name, run_type, session_name, start_time, has_post, inputs, received_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?)",
    ).run(
      run.id,
      run.trace_id,
      run.dotted_order,
      run.name,
      run.run_type,
      "old",
      "2026-11-22T10:15:00.123456Z",
      JSON.stringify(inputs),
      "2026-11-01T00:00:00Z",
      "2026-11-01T00:00:00Z",
    );
    db.close();

    const upgraded = new SqliteStore(oldPath);
    try {
      expect((await upgraded.getRun(run.id as string))!.inputs).toEqual(inputs);
      await upgraded.ingest({
        patch: [
          { id: run.id, trace_id: run.trace_id, dotted_order: run.dotted_order, end_time: "2026-11-22T10:15:02Z", outputs: { ok: true } },
        ],
      });
      const got = (await upgraded.getRun(run.id as string))!;
      expect(got.inputs).toEqual(inputs);
      expect(got.outputs).toEqual({ ok: true });
      expect(rawColumns(oldPath, run.id as string).counts).toEqual({});
    } finally {
      upgraded.close();
    }
  });

  it("over the collector: a large part sent as a file (decoded as it streams) arrives exactly, multibyte characters and all", async () => {
    const c = await startCollector();
    try {
      const text = trickyText();
      const run = runRecord({ session_name: "wire", inputs: { text } });
      const res = await fetch(`${c.url}/runs/multipart`, { method: "POST", body: multipart({ post: [run] }) });
      expect(res.status).toBe(202);
      const got = (await c.collector.store.getRun(run.id as string))!;
      expect((got.inputs as { text: string }).text === text).toBe(true);
      expect(rawColumns(c.dbPath, run.id as string).counts.inputs).toBeGreaterThan(1);
    } finally {
      await c.close();
    }
  });

  it("over the collector: a plain field part past GC_PART_CHARS (collected before it is parsed) arrives exactly", async () => {
    // The collection is there to be had even in a process started without --expose-gc (as vitest's workers are).
    expect(collectGarbage()).toBe(true);
    const c = await startCollector();
    try {
      const run = runRecord({ session_name: "field" });
      const inputs = { text: "é".repeat(GC_PART_CHARS / 2) + "v".repeat(GC_PART_CHARS / 2 + 7) };
      const boundary = "----tp-field-part";
      const { inputs: _inputs, ...head } = run;
      const part = (name: string, json: string) =>
        `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\nContent-Type: application/json\r\n\r\n${json}\r\n`;
      const body =
        part(`post.${run.id}`, JSON.stringify(head)) + part(`post.${run.id}.inputs`, JSON.stringify(inputs)) + `--${boundary}--\r\n`;
      const res = await fetch(`${c.url}/runs/multipart`, {
        method: "POST",
        headers: { "content-type": `multipart/form-data; boundary=${boundary}` },
        body,
      });
      expect(res.status).toBe(202);
      expect((await c.collector.store.getRun(run.id as string))!.inputs).toEqual(inputs);
    } finally {
      await c.close();
    }
  });

  it("a writer killed (SIGKILL) in the middle of writing pieces leaves every run whole: no half-written column, no orphan pieces", async () => {
    const killPath = join(tempDir("tp-pieces-kill-"), "runs.db");
    new SqliteStore(killPath).close(); // migrated before the child races to open it
    const script = fileURLToPath(new URL("./fixtures/pieces-writer.ts", import.meta.url));
    // The three writers load side by side (loading is most of their time on a busy machine); each
    // writes only when told, so one writer at a time meets the kill.
    const writers = Array.from({ length: 3 }, () => {
      const child = spawn(process.execPath, ["--import", "tsx", script, killPath], { stdio: ["pipe", "pipe", "inherit"] });
      const lines = createInterface({ input: child.stdout! });
      const exited = new Promise((r) => child.once("exit", r));
      const line = (match: RegExp) =>
        new Promise<void>((resolve, reject) => {
          const onLine = (l: string) => match.test(l) && (lines.off("line", onLine), resolve());
          lines.on("line", onLine);
          void exited.then(() => reject(new Error(`the writer exited before printing ${match}`)));
        });
      const ready = line(/^ready$/);
      ready.catch(() => undefined); // awaited in its round; a writer killed before its round is not an error
      return { child, exited, ready, line };
    });
    try {
      for (const [round, w] of writers.entries()) {
        await w.ready;
        const committed = w.line(/^wrote \d+$/);
        w.child.stdin!.write("go\n");
        // One run committed, so the file holds runs; then a moment more, to land inside a later run's piece writes.
        await committed;
        await new Promise((r) => setTimeout(r, 50 + round * 170));
        w.child.kill("SIGKILL");
        await w.exited;
      }
    } finally {
      for (const w of writers) w.child.kill("SIGKILL");
    }
    const db = new Database(killPath, { readonly: true });
    try {
      const orphans = db.prepare("SELECT count(*) AS n FROM run_pieces WHERE run_id NOT IN (SELECT id FROM runs)").get() as { n: number };
      expect(orphans.n).toBe(0);
      const rows = db.prepare("SELECT id, pieces FROM runs").all() as { id: string; pieces: string | null }[];
      expect(rows.length).toBeGreaterThan(0);
      const read = db.prepare("SELECT text FROM run_pieces WHERE run_id = ? AND col = ? ORDER BY seq");
      for (const row of rows) {
        const map = JSON.parse(row.pieces!) as Record<string, number>;
        expect(Object.keys(map)).toContain("inputs");
        for (const [col, bytes] of Object.entries(map)) {
          const text = (read.all(row.id, col) as { text: string }[]).map((r) => r.text).join("");
          expect(Buffer.byteLength(text)).toBe(bytes);
          expect(typeof (JSON.parse(text) as { text: string }).text).toBe("string");
        }
      }
    } finally {
      db.close();
    }
  });
});
