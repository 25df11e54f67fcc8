/**
 * Backfill prices what it sends: the summary totals the cost and counts the
 * llm runs without a price; `--prices` adds to the table, and a bad price
 * file stops the command (exit 2) naming the row and field.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { openStore } from "../../src/store/index.js";
import { roundUsd } from "../../src/tokens/prices/index.js";
import { jsonLines, runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/runs.js";

const EXAMPLE = fileURLToPath(new URL("../../examples/backfill/generic.jsonl", import.meta.url));
type Summary = Record<string, unknown> & { total_cost: number; unpriced_runs: number };
const summaryOf = (stdout: string) => (jsonLines(stdout).at(-1) as { summary: Summary }).summary;

/** A logged OpenAI call to a model no price table knows. */
const mystery = JSON.stringify({
  request: { model: "mystery-1", messages: [{ role: "user", content: "hi" }] },
  response: {
    id: "chatcmpl-m",
    object: "chat.completion",
    created: 1767268800,
    model: "mystery-1",
    choices: [{ index: 0, message: { role: "assistant", content: "hello" }, finish_reason: "stop" }],
    usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 },
  },
  start_time: "2026-01-01T13:00:00Z",
});

describe("backfill costs", () => {
  it("totals the stored runs' costs in the summary (reported and estimated tokens alike)", async () => {
    const cwd = tempDir("tp-bf-cost-");
    const r = await runCli(["backfill", EXAMPLE], { cwd, env: { TRACEPIPE_ENDPOINT: "", TRACEPIPE_DB: "", TRACEPIPE_PRICES: "" } });
    expect(r.code, r.stderr).toBe(0);
    const summary = summaryOf(r.stdout);
    const store = await openStore(join(cwd, ".tracepipe", "traces.db"));
    try {
      const usages = (await store.queryRuns({ limit: 10 })).runs.map(
        (run) => (run.outputs as { messages: { usage_metadata: Record<string, number> }[] }).messages[0]!.usage_metadata,
      );
      // gpt-4o-mini: 20 in at $0.15 + 1 out at $0.60; claude-sonnet-4-5: 15 in at $3 + 2 out at $15 (per million).
      expect(usages.map((u) => u.total_cost).sort()).toEqual(expect.arrayContaining([0.0000036, 0.000075]));
      // The gpt-4o record reported no usage: estimated, and priced all the same.
      const estimated = usages.find((u) => u.estimated)!;
      expect(estimated.total_cost).toBeGreaterThan(0);
      expect(summary).toMatchObject({ records: 3, sent: 3, estimated_usage: 1, unpriced_runs: 0 });
      expect(summary.total_cost).toBe(roundUsd(usages.reduce((s, u) => s + u.total_cost!, 0)));
    } finally {
      store.close();
    }
    expect(r.stderr).toMatch(/cost \(USD\)\s+0\.000\d+\n/);
  });

  it("counts runs whose model has no price, until --prices gives it one", async () => {
    const dir = tempDir("tp-bf-cost-");
    const log = join(dir, "log.jsonl");
    writeFileSync(log, mystery + "\n");
    const env = { TRACEPIPE_PRICES: "" };
    const without = await runCli(["backfill", log, "--dry-run"], { env });
    expect(without.code, without.stderr).toBe(0);
    expect(summaryOf(without.stdout)).toMatchObject({ sent: 1, total_cost: 0, unpriced_runs: 1 });

    const prices = join(dir, "prices.json");
    writeFileSync(
      prices,
      JSON.stringify({ prices: [{ model: "mystery-1", input: 1, output: 4, source: "internal rate card", date: "2026-11-01" }] }),
    );
    const priced = await runCli(["backfill", log, "--dry-run", "--prices", prices], { env });
    expect(priced.code, priced.stderr).toBe(0);
    // 1000 in at $1 + 500 out at $4 per million.
    expect(summaryOf(priced.stdout)).toMatchObject({ sent: 1, total_cost: 0.003, unpriced_runs: 0 });

    // TRACEPIPE_PRICES does the same without the option.
    const fromEnv = await runCli(["backfill", log, "--dry-run"], { env: { TRACEPIPE_PRICES: prices } });
    expect(summaryOf(fromEnv.stdout)).toMatchObject({ total_cost: 0.003, unpriced_runs: 0 });
  });

  it("stops with exit 2 on a bad price file, naming the row and field, before reading any log", async () => {
    const dir = tempDir("tp-bf-cost-");
    const log = join(dir, "log.jsonl");
    writeFileSync(log, mystery + "\n");
    const prices = join(dir, "prices.json");
    writeFileSync(
      prices,
      JSON.stringify([
        { model: "mystery-1", input: 1, output: 4 },
        { model: "other", input: 1, output: -4 },
      ]),
    );
    const r = await runCli(["backfill", log, "--dry-run", "--prices", prices]);
    expect(r.code).toBe(2);
    const errors = jsonLines(
      r.stderr
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .join("\n"),
    ).map((l) => (l as { error?: { loc: unknown[] } }).error?.loc);
    expect(errors).toContainEqual(["prices", 1, "output"]);
    expect(r.stdout).not.toContain("summary");
  });
});
