/** The user documentation stays true to the code it describes. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { RATE_LIMITS } from "../src/ratelimit/table.js";

const doc = (name: string) => readFileSync(new URL(`../docs/${name}`, import.meta.url), "utf8");

describe("docs", () => {
  it("lists every rate-limit row with its limits and window", () => {
    const rows = doc("rate-limits.md")
      .split("\n")
      .filter((l) => l.startsWith("| `"))
      .map((l) => l.split("|").map((c) => c.trim()));
    expect(rows.map((r) => r[1]!.replaceAll("`", ""))).toEqual(RATE_LIMITS.map((r) => r.id));
    for (const [i, r] of RATE_LIMITS.entries()) {
      const limit = r.limit.us === r.limit.eu ? `${r.limit.us}` : `${r.limit.us} (US) / ${r.limit.eu} (EU)`;
      expect(rows[i]![4]).toBe(limit);
      expect(rows[i]![5]).toBe(`${r.intervalSeconds} s`);
      expect(rows[i]![6]).toBe(r.category);
    }
  });

  it("documents the query body the collector accepts", () => {
    const body = /```json\n(\{"project"[\s\S]*?)\n```/.exec(doc("collector-api.md"))![1]!;
    const keys = Object.keys(JSON.parse(body.replace(/"…"/g, '"x"')) as object).sort();
    expect(keys).toEqual(["cursor", "limit", "project", "run_type", "start_time_gte", "start_time_lt", "trace_id"]);
  });
});
