/**
 * Cost in the trace list: server time (listTraces) for the first page sorted
 * by cost and filtered by a minimum cost, against the newest-first page of
 * the same store (the peer: an index walk that stops after one page), and
 * against the same cost query with migration 4's (trace_id, cost) index
 * dropped (the peer that says what the index buys). Also what pricing one
 * usage costs (addCost), against copying the same usage with structuredClone.
 *
 *   npx tsx benchmarks/costs.ts [--runs 200000] [--rounds 9]
 *
 * The store is built through the store's real ingest: 10-run traces, nine llm
 * runs each with usage priced by the run builder's rule (gpt-4o / gpt-4o-mini).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import Database from "better-sqlite3";
import { SqliteStore } from "../src/store/sqlite/index.js";
import { addCost } from "../src/tokens/prices/index.js";
import type { UsageMetadata } from "../src/format/schema.js";

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : dflt;
}

const RUNS = Number(arg("runs", "200000"));
const ROUNDS = Number(arg("rounds", "9"));
const PER_TRACE = 10;

const stamp = (iso: string) => iso.replace(/[-:]/g, "").replace(".", "");
const iso = (ms: number) => new Date(ms).toISOString().replace("Z", "000Z");

function trace(t: number, k: number): Record<string, unknown>[] {
  const root = randomUUID();
  const rootDotted = `${stamp(iso(t))}${root}`;
  const out: Record<string, unknown>[] = [
    {
      id: root,
      trace_id: root,
      dotted_order: rootDotted,
      name: `agent-${k % 50}`,
      run_type: "chain",
      start_time: iso(t),
      end_time: iso(t + 900),
      inputs: { k },
      session_name: "bench",
    },
  ];
  const model = k % 3 ? "gpt-4o-mini" : "gpt-4o";
  for (let i = 1; i < PER_TRACE; i++) {
    const id = randomUUID();
    const s = t + i * 80;
    const usage: UsageMetadata = { input_tokens: 100 + ((k * 7 + i) % 900), output_tokens: 20 + (k % 300), total_tokens: 0 };
    usage.total_tokens = usage.input_tokens + usage.output_tokens;
    addCost(usage, model);
    out.push({
      id,
      trace_id: root,
      parent_run_id: root,
      dotted_order: `${rootDotted}.${stamp(iso(s))}${id}`,
      name: "ChatOpenAI",
      run_type: "llm",
      start_time: iso(s),
      end_time: iso(s + 70),
      session_name: "bench",
      inputs: { messages: [{ role: "user", content: [{ type: "text", text: `step ${i} of ${k}` }] }] },
      outputs: { messages: [{ role: "assistant", content: [{ type: "text", text: "ok" }], usage_metadata: usage }] },
      extra: { metadata: { trace_provider: "openai", trace_model_name: model } },
    });
  }
  return out;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}
const fmt = (xs: number[]) => `median ${median(xs).toFixed(1)} ms (range ${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)})`;

async function time(fn: () => Promise<unknown>): Promise<number[]> {
  await fn(); // warm the page cache and the statement
  const out: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "tp-costs-bench-"));
  const path = join(dir, "traces.db");
  const traces = Math.ceil(RUNS / PER_TRACE);
  const store = new SqliteStore(path, { normalizeOnIngest: false });
  const t0 = Date.parse("2026-01-01T00:00:00Z");
  const built = performance.now();
  for (let k = 0; k < traces; k += 200) {
    const post: Record<string, unknown>[] = [];
    for (let j = k; j < Math.min(traces, k + 200); j++) post.push(...trace(t0 + j * 1000, j));
    await store.ingest({ post });
  }
  console.log(`store: ${traces * PER_TRACE} runs in ${traces} traces, built in ${((performance.now() - built) / 1000).toFixed(1)} s`);

  const newest = await time(() => store.listTraces({ limit: 50 }));
  const byCost = await time(() => store.listTraces({ limit: 50, sort: "cost" }));
  const minCost = await time(() => store.listTraces({ limit: 50, min_cost: 0.01 }));
  console.log(`first page, newest first:          ${fmt(newest)}`);
  console.log(`first page, sort=cost:             ${fmt(byCost)}  (${(median(byCost) / median(newest)).toFixed(1)}x newest first)`);
  console.log(`first page, min_cost=0.01:         ${fmt(minCost)}`);
  store.close();

  // The same queries without migration 4's index: the trace totals come from each run's JSON.
  const db = new Database(path);
  db.exec("DROP INDEX runs_trace_cost");
  db.close();
  // Migration 4 is recorded as applied, so reopening does not build the index again.
  const bare = new SqliteStore(path, { normalizeOnIngest: false });
  const byCostBare = await time(() => bare.listTraces({ limit: 50, sort: "cost" }));
  const minCostBare = await time(() => bare.listTraces({ limit: 50, min_cost: 0.01 }));
  console.log(
    `sort=cost without the cost index:  ${fmt(byCostBare)}  (index: ${(median(byCostBare) / median(byCost)).toFixed(1)}x faster)`,
  );
  console.log(
    `min_cost without the cost index:   ${fmt(minCostBare)}  (index: ${(median(minCostBare) / median(minCost)).toFixed(1)}x faster)`,
  );
  bare.close();

  // Pricing a usage against copying it (the cheapest thing a producer does with one).
  const fresh = () =>
    Array.from({ length: 100_000 }, (_, i): UsageMetadata => ({
      input_tokens: 1000 + i,
      output_tokens: 200,
      total_tokens: 1200 + i,
      input_token_details: { cache_read: 512 },
    }));
  const price: number[] = [];
  const clone: number[] = [];
  for (let r = 0; r <= ROUNDS; r++) {
    const usages = fresh();
    let t = performance.now();
    for (const u of usages) structuredClone(u);
    if (r) clone.push(performance.now() - t);
    t = performance.now();
    for (const u of usages) addCost(u, "gpt-4o-2024-08-06");
    if (r) price.push(performance.now() - t);
  }
  console.log(
    `addCost, 100k usages:              ${fmt(price)}  (${((median(price) / 100_000) * 1000).toFixed(2)} µs each; ${(median(price) / median(clone)).toFixed(2)}x structuredClone of the same usages)`,
  );
  rmSync(dir, { recursive: true, force: true });
}

void main();
