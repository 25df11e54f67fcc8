import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { encodeMultipart, FILE_PART_CHARS, INLINE_MAX } from "../../src/ingest/multipart.js";
import { postOp, patchOp } from "../../src/ingest/ops.js";
import { multipart, runRecord, startCollector, type Running } from "../helpers/collector.js";

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

async function collector(): Promise<Running> {
  const c = await startCollector();
  cleanup.push(() => c.close());
  return c;
}

/** Every stored column of every run but the arrival times, in id order. */
function rows(c: Running): Record<string, unknown>[] {
  const db = new Database(c.dbPath, { readonly: true });
  try {
    const all = db.prepare("SELECT * FROM runs ORDER BY id").all() as Record<string, unknown>[];
    for (const r of all) {
      delete r.received_at;
      delete r.updated_at;
    }
    return all;
  } finally {
    db.close();
  }
}

/** The part names of an encoded body. */
function partNames(body: Buffer): string[] {
  return [...body.toString("latin1").matchAll(/name="([^"]+)"/g)].map((m) => m[1]!);
}

describe("small large fields inside the run's part", () => {
  const messages = { messages: [{ role: "user", content: [{ type: "text", text: "What is 2+2?" }] }] };
  const runs = [
    // An LLM run as the span processor makes it: everything small, so one part.
    runRecord({
      run_type: "llm",
      inputs: messages,
      outputs: {
        messages: [
          {
            role: "assistant",
            content: [{ type: "text", text: "4" }],
            usage_metadata: { input_tokens: 9, output_tokens: 1, total_tokens: 10 },
          },
        ],
      },
      events: [],
      extra: { metadata: { ls_provider: "openai", n: 0.0000159 } },
      error: "boom",
    }),
    // Fields the checked value would serialize in another key order stay in parts of their own.
    runRecord({
      extra: { runtime: { sdk: "x" }, metadata: { a: 1 } },
      events: [{ time: "2026-11-22T10:15:01.000000Z", name: "new_token" }],
    }),
    // Big fields keep their own parts (the collector stores their text as received).
    runRecord({ inputs: { text: "y".repeat(INLINE_MAX) }, outputs: { text: "z".repeat(INLINE_MAX) } }),
  ];

  it("sends a run with small fields as one part, and big or reorderable ones in parts of their own", () => {
    const [small, reorder, big] = runs.map((r) => partNames(encodeMultipart([postOp(r)]).body));
    expect(small).toEqual([`post.${runs[0]!.id}`]);
    expect(reorder).toEqual([`post.${runs[1]!.id}`, `post.${runs[1]!.id}.extra`, `post.${runs[1]!.id}.events`]);
    expect(big).toEqual([`post.${runs[2]!.id}`, `post.${runs[2]!.id}.inputs`, `post.${runs[2]!.id}.outputs`]);
  });

  it("stores the same rows as one part per field does", async () => {
    const inline = await collector();
    const perField = await collector();
    const patch = {
      id: runs[0]!.id as string,
      end_time: "2026-11-22T10:15:02.000000Z",
      outputs: { messages: [] },
      extra: { metadata: { done: true } },
    };
    const { body, contentType } = encodeMultipart([...runs.map((r) => postOp(r)), patchOp(patch.id, patch)]);
    const a = await fetch(`${inline.url}/runs/multipart`, { method: "POST", headers: { "content-type": contentType }, body });
    expect(a.status).toBe(202);
    const b = await fetch(`${perField.url}/runs/multipart`, { method: "POST", body: multipart({ post: runs, patch: [patch] }) });
    expect(b.status).toBe(202);
    const stored = rows(inline);
    expect(stored).toHaveLength(3);
    expect(stored).toEqual(rows(perField));
  });
});

describe("parts over FILE_PART_CHARS go as files", () => {
  it("names a filename on a part over the threshold only, and the collector stores the same run either way", async () => {
    const big = runRecord({
      inputs: { text: "é€".repeat(FILE_PART_CHARS / 2) + "!" },
      outputs: { text: "small but own part ".repeat(100) },
    });
    const { body, contentType } = encodeMultipart([postOp(big)]);
    const headers = [...body.toString("utf8").matchAll(/Content-Disposition: ([^\r]+)/g)].map((m) => m[1]);
    expect(headers).toEqual([
      `form-data; name="post.${big.id}"`,
      `form-data; name="post.${big.id}.inputs"; filename="inputs.json"`,
      `form-data; name="post.${big.id}.outputs"`,
    ]);
    const c = await collector();
    const res = await fetch(`${c.url}/runs/multipart`, { method: "POST", headers: { "content-type": contentType }, body });
    expect(res.status).toBe(202);
    const got = (await c.collector.store.getRun(big.id as string))!;
    expect(got.inputs).toEqual(big.inputs);
    expect(got.outputs).toEqual(big.outputs);
  });
});
