/**
 * Cost at the collector, over HTTP with a real SQLite file: the trace list
 * filters (min_cost / max_cost) and sorts (sort=cost) by a trace's summed
 * cost, pages by cursor in that order, and a run sent as a vendor payload
 * without a cost (as the langsmith SDK sends) is priced when it is stored.
 */
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { startCollector, startServeProcess, type Running } from "../helpers/collector.js";
import { fixture } from "../helpers/replay-server.js";
import { tempDir } from "../helpers/runs.js";

let col: Running;

const START = Date.parse("2026-11-20T00:00:00Z");
const time = (s: number) => new Date(START + s * 1000).toISOString().replace("Z", "000Z");
const user = { role: "user", content: [{ type: "text", text: "q" }] };
const reply = (usage?: Record<string, unknown>) => ({
  messages: [{ role: "assistant", content: [{ type: "text", text: "a" }], ...(usage ? { usage_metadata: usage } : {}) }],
});
const tokens = { input_tokens: 10, output_tokens: 5, total_tokens: 15 };

function run(
  name: string,
  s: number,
  over: Record<string, unknown> = {},
  parent?: { id: string; dotted: string },
): Record<string, unknown> & { id: string; dotted_order: string } {
  const id = randomUUID();
  const seg = `${time(s).replace(/[-:.]/g, "")}${id}`;
  return {
    id,
    trace_id: parent ? (over.trace_id as string) : id,
    ...(parent ? { parent_run_id: parent.id } : {}),
    dotted_order: parent ? `${parent.dotted}.${seg}` : seg,
    name,
    run_type: "chain",
    start_time: time(s),
    end_time: time(s + 1),
    inputs: {},
    session_name: "costs",
    ...over,
  };
}

beforeAll(async () => {
  col = await startCollector({ rateLimits: false });
  // Trace "pricey": two llm runs under a chain, 0.5 + 0.25.
  const pricey = run("pricey", 1);
  const p = { id: pricey.id, dotted: pricey.dotted_order };
  const children = [0.5, 0.25].map((c, i) =>
    run(
      `llm-${i}`,
      1 + i,
      { trace_id: pricey.id, run_type: "llm", inputs: { messages: [user] }, outputs: reply({ ...tokens, total_cost: c }) },
      p,
    ),
  );
  // Trace "cheap": one llm root at 0.1.
  const cheap = run("cheap", 2, { run_type: "llm", inputs: { messages: [user] }, outputs: reply({ ...tokens, total_cost: 0.1 }) });
  // Trace "free": no cost anywhere (a model without a price).
  const free = run("free", 3, { run_type: "llm", inputs: { messages: [user] }, outputs: reply(tokens) });
  // Trace "vendor": an OpenAI request and response as logged by another SDK, with usage and no cost.
  const vendor = run("vendor", 4, {
    run_type: "llm",
    inputs: { model: "gpt-4o", messages: [{ role: "user", content: "Weather in Paris?" }] },
    outputs: fixture("openai-completion.json"),
  });
  const res = await fetch(`${col.url}/runs/batch`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ post: [pricey, ...children, cheap, free, vendor] }),
  });
  expect(res.status).toBe(202);
});
afterAll(async () => {
  await col.close();
});

async function names(query: string): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | null = null;
  do {
    const res = await fetch(
      `${col.url}/api/viewer/traces?project=costs&limit=1${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    expect(res.status).toBe(200);
    const page = (await res.json()) as { traces: { name: string }[]; cursor: string | null };
    out.push(...page.traces.map((t) => t.name));
    cursor = page.cursor;
  } while (cursor);
  return out;
}

describe("the trace list by cost", () => {
  it("prices a vendor payload stored without a cost, in its normalized reply", async () => {
    const page = (await (await fetch(`${col.url}/api/viewer/traces?project=costs&name=vendor`)).json()) as {
      traces: { trace_id: string; total_cost: number }[];
    };
    // gpt-4o-2024-08-06 priced as gpt-4o: 25 in at $2.50, 9 out at $10 per million.
    expect(page.traces[0]!.total_cost).toBe(0.0001525);
    const stored = (await (await fetch(`${col.url}/runs/${page.traces[0]!.trace_id}`)).json()) as {
      outputs: unknown;
      normalized_outputs: { messages: { usage_metadata: Record<string, unknown> }[] };
    };
    expect(stored.normalized_outputs.messages[0]!.usage_metadata).toMatchObject({
      input_tokens: 25,
      output_tokens: 9,
      input_cost: 0.0000625,
      output_cost: 0.00009,
      total_cost: 0.0001525,
    });
    // What was sent is kept as sent.
    expect(JSON.stringify(stored.outputs)).not.toContain("total_cost");
  });

  it("sorts by summed trace cost, most first, traces without a cost last; page by page", async () => {
    expect(await names("&sort=cost")).toEqual(["pricey", "cheap", "vendor", "free"]);
    expect(await names("&sort=cost&order=asc")).toEqual(["vendor", "cheap", "pricey", "free"]);
  });

  it("filters by min_cost and max_cost (USD); a trace without a cost matches neither", async () => {
    expect(await names("&min_cost=0.2")).toEqual(["pricey"]);
    expect(await names("&max_cost=0.2&sort=cost")).toEqual(["cheap", "vendor"]);
    expect(await names("&min_cost=0.1&max_cost=0.75&sort=cost&order=asc")).toEqual(["cheap", "pricey"]);
    // Newest first (the default sort), the trace without a cost left out.
    expect(await names("&min_cost=0")).toEqual(["vendor", "cheap", "pricey"]);
  });

  it("answers 422 naming the query field for a bad cost or sort", async () => {
    for (const [q, field] of [
      ["min_cost=cheap", "min_cost"],
      ["max_cost=-1", "max_cost"],
      ["sort=price", "sort"],
    ] as const) {
      const res = await fetch(`${col.url}/api/viewer/traces?${q}`);
      expect(res.status).toBe(422);
      const body = (await res.json()) as { detail: { loc: unknown[] }[] };
      expect(body.detail[0]!.loc).toEqual(["query", field]);
    }
  });

  it("sums a trace's cost from the (trace_id, cost) index alone, not the runs' JSON", () => {
    const db = new Database(col.dbPath, { readonly: true });
    try {
      const cost = "json_extract(c.v_usage, '$.total_cost')";
      const plan = db
        .prepare(`EXPLAIN QUERY PLAN SELECT sum(${cost}) FROM runs c WHERE c.trace_id = ? AND ${cost} IS NOT NULL`)
        .all("x") as { detail: string }[];
      expect(plan.map((p) => p.detail).join(" ")).toMatch(/COVERING INDEX runs_trace_cost/);
    } finally {
      db.close();
    }
  });
});

describe("tracepipe serve --prices", () => {
  it("prices vendor payloads with the file's prices (a model the table lacks)", async () => {
    const dir = tempDir("tp-serve-prices-");
    const prices = join(dir, "prices.json");
    writeFileSync(
      prices,
      JSON.stringify({ prices: [{ model: "acme-chat", input: 1, output: 2, source: "internal", date: "2026-11-01" }] }),
    );
    const serve = await startServeProcess(["--no-rate-limit", "--prices", prices]);
    try {
      const completion = { ...fixture("openai-completion.json"), model: "acme-chat-2026-01-01" };
      const r = run("acme", 1, {
        run_type: "llm",
        inputs: { model: "acme-chat", messages: [{ role: "user", content: "hi" }] },
        outputs: completion,
      });
      expect(
        (await fetch(`${serve.url}/runs`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(r) }))
          .status,
      ).toBe(202);
      const stored = (await (await fetch(`${serve.url}/runs/${r.id}`)).json()) as {
        normalized_outputs: { messages: { usage_metadata: Record<string, unknown> }[] };
      };
      // 25 in at $1, 9 out at $2 per million; the dated name resolves to the file's row.
      expect(stored.normalized_outputs.messages[0]!.usage_metadata).toMatchObject({
        input_cost: 0.000025,
        output_cost: 0.000018,
        total_cost: 0.000043,
      });
    } finally {
      await serve.close();
    }
  });

  it("refuses to start on a bad price file (exit 2), naming the row and field", async () => {
    const dir = tempDir("tp-serve-prices-");
    const prices = join(dir, "prices.json");
    writeFileSync(prices, JSON.stringify([{ model: "acme-chat", input: 1 }]));
    const r = await runCli(["serve", "--port", "0", "--db", ":memory:", "--prices", prices]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("prices.0.output");
  });
});
