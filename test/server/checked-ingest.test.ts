/**
 * One check per request, and large fields stored as received:
 * - the collector checks each record once (the store's BatchCheck), and the
 *   store ingests that CheckedBatch without a second pass;
 * - an object that merely looks like a checked batch is checked by the store;
 * - a large-field part's JSON text is written as is (whitespace, escapes),
 *   except where the check changed the value (epoch-ms event times);
 * - a later patch that does not touch a field leaves its stored text alone.
 */
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { Run } from "../../src/run/schema.js";
import { ValidationError } from "../../src/errors.js";
import { SqliteStore } from "../../src/store/sqlite/index.js";
import { BatchCheck } from "../../src/store/validate.js";
import type { CheckedBatch } from "../../src/store/index.js";
import { runRecord, startCollector, type Running } from "../helpers/collector.js";

let c: Running;
beforeAll(async () => {
  c = await startCollector();
});
afterAll(() => c.close());

function column(id: string, col: string): unknown {
  const db = new Database(c.dbPath, { readonly: true });
  try {
    return (db.prepare(`SELECT ${col} AS v FROM runs WHERE id = ?`).get(id) as { v: unknown } | undefined)?.v;
  } finally {
    db.close();
  }
}

/** A multipart body whose large fields are given as JSON text, some as string fields, some as file parts. */
function parts(kind: "post" | "patch", head: Record<string, unknown>, texts: Record<string, string>, asFile = false): FormData {
  const fd = new FormData();
  const id = head.id as string;
  fd.append(`${kind}.${id}`, JSON.stringify(head));
  for (const [k, text] of Object.entries(texts)) {
    if (asFile) fd.append(`${kind}.${id}.${k}`, new Blob([text], { type: "application/json" }), k);
    else fd.append(`${kind}.${id}.${k}`, text);
  }
  return fd;
}

async function send(fd: FormData): Promise<number> {
  const res = await fetch(c.url + "/runs/multipart", { method: "POST", body: fd });
  await res.text();
  return res.status;
}

describe("each request is checked once, by the store's check", () => {
  it("parses each of three multipart runs with the Run schema once, not once per layer", async () => {
    // Epoch-millisecond start times: the schema itself must turn them into strings (the quick way,
    // store/run-fast-check.ts, leaves such records to it), so every check of a record is a safeParse.
    const runs = [runRecord({ start_time: Date.now() }), runRecord({ start_time: Date.now() }), runRecord({ start_time: Date.now() })];
    const fd = new FormData();
    for (const r of runs) fd.append(`post.${r.id as string}`, JSON.stringify(r));
    const spy = vi.spyOn(Run, "safeParse");
    try {
      expect(await send(fd)).toBe(202);
      expect(spy).toHaveBeenCalledTimes(3);
    } finally {
      spy.mockRestore();
    }
    for (const r of runs) expect(column(r.id as string, "name")).toBe("test-run");
  });

  it("checks a batch that only looks checked, and refuses its invalid record", async () => {
    const store = new SqliteStore(":memory:");
    try {
      const forged = { post: [{ ...runRecord(), start_time: "not a time" }], patch: [] } as unknown as CheckedBatch;
      await expect(store.ingest(forged)).rejects.toBeInstanceOf(ValidationError);
      expect(await store.countRuns()).toBe(0);
      const issues: { loc: unknown[] }[] = [];
      const check = new BatchCheck(issues);
      expect(await check.post(runRecord(), ["post", 0])).toBe(true);
      expect(await check.post({ ...runRecord(), name: 5 }, ["post", 1])).toBe(false);
      expect(issues.map((i) => i.loc)).toEqual([["post", 1, "name"]]);
      // A check with problems gives no batch: nothing half-checked reaches the store.
      expect(() => check.batch()).toThrow();
    } finally {
      store.close();
    }
  });
});

describe("large fields stored as received", () => {
  for (const asFile of [false, true]) {
    it(`writes a ${asFile ? "file" : "field"} part's JSON text as is and reads back the same value`, async () => {
      const head = runRecord({ inputs: undefined });
      // CRLF: FormData turns a string field's lone LF into CRLF on the wire; that is the text received.
      const inputs = '{ "question" : "caf\\u00e9 \\ud83d\\ude00",\r\n  "n": [1, 2.5e3, null] }';
      const extra = '{"metadata": {"k": "v"}, "other": true}';
      expect(await send(parts("post", head, { inputs, extra }, asFile))).toBe(202);
      const id = head.id as string;
      expect(column(id, "inputs")).toBe(inputs);
      expect(column(id, "extra")).toBe(extra);
      const got = (await (await fetch(`${c.url}/runs/${id}`)).json()) as Record<string, unknown>;
      expect(got.inputs).toEqual(JSON.parse(inputs));
      expect(got.extra).toEqual(JSON.parse(extra));
    });
  }

  it("re-serializes events whose times the check turned from epoch milliseconds into ISO strings", async () => {
    const head = runRecord();
    const id = head.id as string;
    const kept = '[ {"name": "start", "time": "2026-11-22T10:15:00.5Z"} ]';
    expect(await send(parts("post", head, { events: kept }))).toBe(202);
    expect(column(id, "events")).toBe(kept);
    const epoch = '[{"name": "new_token", "time": 1763806500123}]';
    expect(await send(parts("patch", { id }, { events: epoch }))).toBe(202);
    const stored = JSON.parse(column(id, "events") as string) as { time: string }[];
    expect(stored).toEqual([{ name: "new_token", time: "2025-11-22T10:15:00.123000Z" }]);
    expect(column(id, "first_token_time")).toBe("2025-11-22T10:15:00.123000Z");
  });

  it("leaves a field's stored text alone when a later patch does not touch it, and replaces it when one does", async () => {
    const head = runRecord({ inputs: undefined });
    const id = head.id as string;
    const inputs = '{"question":   "spaced"}';
    expect(await send(parts("post", head, { inputs }))).toBe(202);
    expect(await send(parts("patch", { id, end_time: "2026-11-22T10:15:01Z" }, { outputs: '{"answer": 42}' }))).toBe(202);
    expect(column(id, "inputs")).toBe(inputs);
    expect(column(id, "outputs")).toBe('{"answer": 42}');
    expect(column(id, "end_time")).toBe("2026-11-22T10:15:01.000000Z");
    expect(await send(parts("patch", { id }, { outputs: '{"answer":43}' }))).toBe(202);
    expect(column(id, "outputs")).toBe('{"answer":43}');
    // A post after the patch fills nothing that is set: the patched text stays.
    expect(await send(parts("post", head, { inputs: '{"question":"other"}' }))).toBe(202);
    expect(column(id, "inputs")).toBe(inputs);
  });
});

describe("large stored columns left in the row", () => {
  const big = "w".repeat(10_000); // past the 4 KiB read with the row
  const omit = (r: Record<string, unknown> | undefined) => {
    const { received_at: _r, updated_at: _u, ...rest } = (r ?? {}) as Record<string, unknown>;
    return rest;
  };

  it("merges posts and patches into the same run as one complete post, without rewriting what they did not touch", async () => {
    const id = runRecord().id as string;
    const full = runRecord({
      id,
      run_type: "llm",
      inputs: { messages: [{ role: "user", content: big }] },
      outputs: { choices: [{ index: 0, message: { role: "assistant", content: big }, finish_reason: "stop" }] },
      events: [
        { name: "start", time: "2026-11-22T10:15:00.2Z", kwargs: { pad: big } },
        { name: "new_token", time: "2026-11-22T10:15:00.3Z" },
      ],
      extra: { metadata: { pad: big } },
      end_time: "2026-11-22T10:15:01Z",
    });
    const { outputs, end_time, ...first } = full;
    const once = new SqliteStore(":memory:");
    const split = new SqliteStore(":memory:");
    try {
      await once.ingest({ post: [full] });
      await split.ingest({ post: [first] });
      const before = await split.getRun(id);
      expect(before?.first_token_time).toBe("2026-11-22T10:15:00.3Z");
      // An end time only: the large columns stay as they were.
      await split.ingest({ patch: [{ id, end_time }] });
      expect(omit(await split.getRun(id))).toEqual({ ...omit(before), end_time: "2026-11-22T10:15:01.000000Z" });
      // Outputs: derived again, reading the large inputs left in the row.
      await split.ingest({ patch: [{ id, outputs }] });
      // A duplicate post fills nothing that is set.
      await split.ingest({ post: [{ ...first, inputs: { messages: [{ role: "user", content: "other" }] } }] });
      expect(omit(await split.getRun(id))).toEqual(omit(await once.getRun(id)));
      expect((await split.getRun(id))?.normalized_outputs).toEqual((await once.getRun(id))?.normalized_outputs);
    } finally {
      once.close();
      split.close();
    }
  });

  it("completes a run whose patch arrived first with large outputs", async () => {
    const id = runRecord().id as string;
    const post = runRecord({ id, run_type: "llm", inputs: { messages: [{ role: "user", content: "hi" }] } });
    const patch = {
      id,
      outputs: { choices: [{ index: 0, message: { role: "assistant", content: big }, finish_reason: "stop" }] },
      end_time: "2026-11-22T10:15:01Z",
    };
    const once = new SqliteStore(":memory:");
    const split = new SqliteStore(":memory:");
    try {
      await once.ingest({ post: [post], patch: [patch] });
      await split.ingest({ patch: [patch] });
      await split.ingest({ post: [post] });
      expect(omit(await split.getRun(id))).toEqual(omit(await once.getRun(id)));
      expect((await split.getRun(id))?.detected_format).not.toBeNull();
    } finally {
      once.close();
      split.close();
    }
  });
});
