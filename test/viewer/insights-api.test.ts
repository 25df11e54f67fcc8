/**
 * Monitoring aggregates, threads, metadata / tag filters and feedback through
 * the collector's API: a generated week (week.ts) delivered by our Client over
 * HTTP, feedback through the same client, then the numbers read back.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { Client } from "../../src/ingest/index.js";
import { HIST_ALPHA } from "../../src/store/rollup.js";
import { startCollector, type Running } from "../helpers/collector.js";
import { tempDir } from "../helpers/runs.js";
import { BURST_HOUR, generateWeek, HOUR, MARKUP, MARKUP_KEY, MODELS, PROJECT, STEP_HOUR, THREADS, WEEK_START, type Week } from "./week.js";

const KEY = "k-insights";
let col: Running;
let week: Week;

const get = async (path: string) => {
  const res = await fetch(col.url + path, { headers: { "x-api-key": KEY } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};
const range = `project=${PROJECT}&range=custom&from=${new Date(WEEK_START).toISOString()}&to=${new Date(WEEK_START + 168 * HOUR).toISOString()}`;

beforeAll(async () => {
  col = await startCollector({ apiKey: KEY });
  week = generateWeek();
  const client = new Client({
    endpoint: col.url,
    apiKey: KEY,
    project: PROJECT,
    spoolDir: join(tempDir("tp-insights-"), "spool"),
    warn: () => {},
  });
  for (const r of week.runs) client.createRun(r as never);
  const [a, b] = week.llmRuns;
  client.createFeedback(a!.id, "correctness", { score: 1, comment: MARKUP, traceId: a!.trace });
  client.createFeedback(a!.id, "helpfulness", { score: 0.5, value: "mostly" });
  client.createFeedback(b!.id, "correctness", { score: false });
  const r = await client.shutdown({ timeoutMs: 20_000 });
  expect(r.ok).toBe(true);
}, 60_000);
afterAll(async () => {
  await col.close();
});

describe("monitoring series", () => {
  it("answers hourly buckets for a week: traces, the error burst, the latency step and tokens", async () => {
    const { status, body } = await get(`/api/viewer/monitor?${range}&bucket=hour`);
    expect(status).toBe(200);
    const m = body as { buckets: number[]; traces: Record<string, (number | null)[]>; llm: Record<string, (number | null)[]> };
    expect(m.buckets).toHaveLength(168);
    expect(m.buckets[0]).toBe(WEEK_START);
    const errors = m.traces.errors!;
    expect(Math.max(...(errors as number[]))).toBe(6);
    expect(errors.indexOf(6)).toBe(BURST_HOUR);
    expect(m.traces.runs![BURST_HOUR]).toBe(8);
    const p95 = m.llm.latency_p95!;
    expect(new Set(p95.slice(0, STEP_HOUR).map((v) => Math.round(v!)))).toEqual(new Set([400]));
    expect(new Set(p95.slice(STEP_HOUR).map((v) => Math.round(v!)))).toEqual(new Set([1200]));
    const rootP95 = m.traces.latency_p95!;
    expect(Math.round(rootP95[STEP_HOUR - 1]!)).toBe(450);
    // Percentiles are read from histograms of two significant digits (store/rollup.ts): 1250 ms reads as 1300, within HIST_ALPHA.
    expect(Math.abs(rootP95[STEP_HOUR]! - 1250)).toBeLessThanOrEqual(HIST_ALPHA * 1250);
    const ttft = m.llm.ttft_p50!.filter((v) => v !== null).map((v) => Math.round(v!));
    expect(new Set(ttft)).toEqual(new Set([150]));
    const sum = (a: (number | null)[]) => a.reduce<number>((s, v) => s + (v ?? 0), 0);
    expect(sum(m.llm.input_tokens!)).toBe(Object.values(week.totals).reduce((s, t) => s + t.input, 0));
    expect(sum(m.llm.output_tokens!)).toBe(Object.values(week.totals).reduce((s, t) => s + t.output, 0));
  });

  it("breaks llm runs down by model with exact token and cost totals, and traces by name", async () => {
    const { body } = await get(`/api/viewer/monitor/breakdown?${range}&bucket=day&by=model`);
    const rows = body.rows as { value: string; runs: number; input_tokens: number; output_tokens: number; cost: number; spark: number[] }[];
    expect(rows.map((r) => r.value).sort()).toEqual(MODELS.map((m) => m.model).sort());
    for (const r of rows) {
      const t = week.totals[r.value]!;
      expect([r.runs, r.input_tokens, r.output_tokens, r.cost]).toEqual([t.runs, t.input, t.output, t.cost]);
      expect(r.spark).toHaveLength(7);
      expect(r.spark.reduce((a, b) => a + b, 0)).toBe(t.runs);
    }
    const byName = (await get(`/api/viewer/monitor/breakdown?${range}&by=name`)).body.rows as {
      value: string;
      runs: number;
      input_tokens: unknown;
    }[];
    expect(byName.find((r) => r.value === "chat-turn")?.runs).toBe(15);
    expect(byName[0]!.input_tokens).toBeNull();
  });

  it("refuses a range it cannot chart, naming the field", async () => {
    const r = await get(`/api/viewer/monitor?project=${PROJECT}&range=custom&from=${new Date(WEEK_START).toISOString()}`);
    expect(r.status).toBe(422);
    expect((r.body.detail as { loc: string[] }[])[0]!.loc).toEqual(["query", "to"]);
    const many = await get(`/api/viewer/monitor?${range}&bucket=minute`);
    expect(many.status).toBe(422);
    expect((many.body.detail as { loc: string[] }[])[0]!.loc).toEqual(["query", "bucket"]);
  });
});

describe("threads", () => {
  it("groups turns by session_id, thread_id or conversation_id, most recent first", async () => {
    const { body } = await get(`/api/viewer/threads?project=${PROJECT}`);
    const threads = body.threads as {
      thread_id: string;
      turns: number;
      first_message: string;
      last_message: string;
      total_tokens: number;
    }[];
    expect(threads.map((t) => t.thread_id)).toEqual([...THREADS].reverse().map((t) => t.id));
    for (const t of threads) {
      expect(t.turns).toBe(5);
      expect(t.first_message).toBe(week.threads[t.thread_id]!.questions[0]);
      expect(t.last_message).toBe(`Reply 5 to ${t.thread_id}`);
    }
  });

  it("pages threads one at a time by next_cursor, each once, and names a bad cursor", async () => {
    const seen: string[] = [];
    let cursor = "";
    for (let i = 0; i < THREADS.length + 1; i++) {
      const { body } = await get(`/api/viewer/threads?project=${PROJECT}&limit=1${cursor ? `&cursor=${cursor}` : ""}`);
      seen.push(...(body.threads as { thread_id: string }[]).map((t) => t.thread_id));
      if (!body.next_cursor) break;
      cursor = body.next_cursor as string;
    }
    expect(seen).toEqual([...THREADS].reverse().map((t) => t.id));
    const bad = await get(`/api/viewer/threads?cursor=nope`);
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toEqual([{ loc: ["query", "cursor"], msg: "invalid cursor", type: "value_error" }]);
  });

  it("shows one thread's turns in order, each with its trace", async () => {
    const id = THREADS[1].id;
    const { status, body } = await get(`/api/viewer/threads/${encodeURIComponent(id)}`);
    expect(status).toBe(200);
    const turns = body.turns as { trace_id: string; user: string; assistant: string }[];
    expect(turns.map((t) => t.trace_id)).toEqual(week.threads[id]!.traces);
    expect(turns.map((t) => t.user)).toEqual(week.threads[id]!.questions);
    expect((await get(`/api/viewer/threads/no-such-thread`)).status).toBe(404);
  });
});

describe("metadata and tag filters", () => {
  it("narrow the trace list to traces with a run carrying the key and value, and the tag", async () => {
    const ids = async (q: string) =>
      ((await get(`/api/viewer/traces?project=${PROJECT}&limit=500&${q}`)).body.traces as { trace_id: string }[])
        .map((t) => t.trace_id)
        .sort();
    expect(await ids("metadata=experiment%3De7")).toEqual([...week.experiment].sort());
    expect(await ids("tag=beta")).toEqual([...week.beta].sort());
    expect(await ids(`metadata=${encodeURIComponent(`${MARKUP_KEY}=${MARKUP}`)}`)).toEqual([week.markupTrace]);
    const both = await ids("metadata=experiment%3De7&tag=beta");
    expect(both).toEqual(week.experiment.filter((t) => week.beta.includes(t)).sort());
    expect((await get(`/api/viewer/traces?metadata=novalue`)).status).toBe(422);
  });

  it("narrow POST /runs/query the same way, by run", async () => {
    const res = await fetch(`${col.url}/runs/query`, {
      method: "POST",
      headers: { "x-api-key": KEY, "content-type": "application/json" },
      body: JSON.stringify({ project: PROJECT, metadata: { experiment: "e7" }, limit: 1000 }),
    });
    const { runs } = (await res.json()) as { runs: { id: string }[] };
    expect(runs.map((r) => r.id).sort()).toEqual([...week.experiment].sort());
  });
});

describe("feedback from our Client", () => {
  it("is stored beside its run, shown on the run, summed on its trace and filterable", async () => {
    const [a, b] = week.llmRuns;
    const run = (await get(`/api/viewer/runs/${a!.id}`)).body as {
      feedback: { key: string; score: number; value: unknown; comment: string | null; source: string }[];
    };
    expect(run.feedback.map((f) => [f.key, f.score, f.value, f.comment, f.source])).toEqual([
      ["correctness", 1, null, MARKUP, "api"],
      ["helpfulness", 0.5, "mostly", null, "api"],
    ]);
    const list = (await get(`/api/viewer/traces?project=${PROJECT}&feedback_key=correctness&limit=500`)).body.traces as {
      trace_id: string;
      feedback: { key: string; count: number; avg_score: number }[];
    }[];
    expect(list.map((t) => t.trace_id).sort()).toEqual([a!.trace, b!.trace].sort());
    expect(list.find((t) => t.trace_id === b!.trace)!.feedback).toEqual([{ key: "correctness", count: 1, avg_score: 0 }]);
  });
});
