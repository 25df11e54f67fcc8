/**
 * A side of an llm run larger than DERIVE_ON_READ_BYTES keeps no stored
 * native copy (it would double the row and the memory its request costs);
 * readers get the same native messages anyway, derived when read. Runs below
 * the threshold keep their stored copy.
 */
import Database from "better-sqlite3";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { deriveLlm } from "../../src/store/derive.js";
import { SqliteStore } from "../../src/store/sqlite/index.js";
import { DERIVE_ON_READ_BYTES } from "../../src/store/sqlite/columns.js";
import { startCollector, runRecord } from "../helpers/collector.js";
import { tempDir } from "../helpers/runs.js";

const outputs = {
  object: "chat.completion",
  model: "gpt-4o-2024-08-06",
  choices: [{ index: 0, message: { role: "assistant", content: "hello" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
};

/** OpenAI chat inputs of about `bytes` bytes of JSON, in ~1 KB messages. */
function chatInputs(bytes: number): { model: string; messages: { role: string; content: string }[] } {
  const content = "x".repeat(1000);
  return {
    model: "gpt-4o",
    messages: Array.from({ length: Math.ceil(bytes / 1040) }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content })),
  };
}

function storedColumns(
  path: string,
  id: string,
): { inputs: number; normalized_inputs: string | null; normalized_outputs: string | null; detected_format: string | null } {
  const db = new Database(path, { readonly: true });
  try {
    return db
      .prepare(
        "SELECT coalesce(octet_length(inputs), json_extract(pieces, '$.inputs')) AS inputs, normalized_inputs, normalized_outputs, detected_format FROM runs WHERE id = ?",
      )
      .get(id) as never;
  } finally {
    db.close();
  }
}

describe("native copy of a large side: derived when read, not stored", () => {
  const dir = tempDir("tp-derive-");
  const path = join(dir, "runs.db");
  const store = new SqliteStore(path);
  afterAll(() => store.close());

  it("stores no copy of a large side, and getRun / queryRuns return what ingest would have stored", async () => {
    const big = runRecord({ run_type: "llm", session_name: "big", inputs: chatInputs(DERIVE_ON_READ_BYTES + 200_000), outputs });
    const small = runRecord({ run_type: "llm", session_name: "big", inputs: chatInputs(20_000), outputs });
    await store.ingest({ post: [big, small] });

    const expected = deriveLlm(big.inputs, big.outputs);
    expect(expected.normalized_inputs?.messages.length).toBeGreaterThan(1000);

    const bigRow = storedColumns(path, big.id as string);
    expect(bigRow.inputs).toBeGreaterThan(DERIVE_ON_READ_BYTES);
    expect(bigRow.detected_format).toBe("openai-chat");
    expect(bigRow.normalized_inputs).toBeNull();
    // The small side of the same run keeps its stored copy (usage in the trace list reads it).
    expect(JSON.parse(bigRow.normalized_outputs!)).toEqual(expected.normalized_outputs);
    // Below the threshold nothing changes: both copies stored.
    const smallRow = storedColumns(path, small.id as string);
    expect(JSON.parse(smallRow.normalized_inputs!)).toEqual(deriveLlm(small.inputs, small.outputs).normalized_inputs);

    const got = (await store.getRun(big.id as string))!;
    expect(got.detected_format).toBe("openai-chat");
    expect(got.normalize_error).toBeNull();
    expect(got.normalized_inputs).toEqual(expected.normalized_inputs);
    expect(got.normalized_outputs).toEqual(expected.normalized_outputs);
    const listed = (await store.queryRuns({ project: "big" })).runs.find((r) => r.id === big.id)!;
    expect(listed.normalized_inputs).toEqual(expected.normalized_inputs);
  });

  it("a patch to a large run (end time, then new outputs) leaves it derivable on read", async () => {
    const run = runRecord({ run_type: "llm", session_name: "patched", inputs: chatInputs(DERIVE_ON_READ_BYTES * 2) });
    await store.ingest({ post: [run] });
    await store.ingest({
      patch: [{ id: run.id, trace_id: run.trace_id, dotted_order: run.dotted_order, end_time: "2026-11-22T10:15:02Z" }],
    });
    await store.ingest({ patch: [{ id: run.id, trace_id: run.trace_id, dotted_order: run.dotted_order, outputs }] });
    const expected = deriveLlm(run.inputs, outputs);
    const row = storedColumns(path, run.id as string);
    expect(row.normalized_inputs).toBeNull();
    expect(row.normalized_outputs).not.toBeNull();
    const got = (await store.getRun(run.id as string))!;
    expect(got.end_time).toBe("2026-11-22T10:15:02.000000Z");
    expect(got.normalized_inputs).toEqual(expected.normalized_inputs);
    expect(got.normalized_outputs).toEqual(expected.normalized_outputs);
  });

  it("a large native run (nothing to convert) reads back with no native copy, as before", async () => {
    const content = [{ type: "text", text: "y".repeat(1000) }];
    const inputs = { messages: Array.from({ length: Math.ceil((DERIVE_ON_READ_BYTES * 1.5) / 1040) }, () => ({ role: "user", content })) };
    const run = runRecord({ run_type: "llm", session_name: "native", inputs });
    await store.ingest({ post: [run] });
    const got = (await store.getRun(run.id as string))!;
    expect(got.detected_format).toBe("native");
    expect(got.normalized_inputs).toBeNull();
    expect(got.inputs).toEqual(inputs);
  });
});

describe("through the collector", () => {
  it("GET /runs/:id of a large vendor run sent as a multipart part carries its native messages", async () => {
    const c = await startCollector();
    try {
      const run = runRecord({ run_type: "llm", inputs: chatInputs(DERIVE_ON_READ_BYTES * 3), outputs });
      const { inputs, ...head } = run;
      const form = new FormData();
      form.append(`post.${run.id as string}`, new Blob([JSON.stringify(head)], { type: "application/json" }));
      form.append(`post.${run.id as string}.inputs`, new Blob([JSON.stringify(inputs)], { type: "application/json" }));
      const res = await fetch(`${c.url}/runs/multipart`, { method: "POST", body: form });
      expect(res.status).toBe(202);
      const got = (await (await fetch(`${c.url}/runs/${run.id as string}`)).json()) as {
        normalized_inputs: unknown;
        detected_format: string;
      };
      expect(got.detected_format).toBe("openai-chat");
      expect(got.normalized_inputs).toEqual(deriveLlm(inputs, outputs).normalized_inputs);
      expect(storedColumns(c.dbPath, run.id as string).normalized_inputs).toBeNull();
    } finally {
      await c.close();
    }
  });
});
