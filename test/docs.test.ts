/** The user documentation stays true to the code it describes. */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { RATE_LIMITS } from "../src/ratelimit/table.js";

const doc = (name: string) => readFileSync(new URL(`../docs/${name}`, import.meta.url), "utf8");
const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** The pages a reader follows links between: the README, docs/ and the benchmarks' README. */
const PAGES = [
  "README.md",
  "benchmarks/README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

/** Markdown text without its fenced code blocks (a link inside code is not a link). */
const prose = (text: string) => text.replace(/^```[\s\S]*?^```/gm, "");

/** GitHub's anchor for a heading: lower case, punctuation other than `-` and `_` dropped, spaces as `-`. */
const slug = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/ /g, "-");

/** The anchors of a page's headings (a repeated heading gets `-1`, `-2`, ... as on GitHub). */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of prose(text).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(m[1]!.trim());
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

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

  it("links only to files and headings that exist, from the README and every docs page", () => {
    const broken: string[] = [];
    for (const page of PAGES) {
      const text = readFileSync(join(ROOT, page), "utf8");
      for (const m of prose(text).matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/i.test(target)) continue; // http(s):, mailto: and the like are not files here
        const [path, anchor] = target.split("#") as [string, string | undefined];
        const file = path === "" ? join(ROOT, page) : join(dirname(join(ROOT, page)), decodeURI(path));
        if (!existsSync(file)) {
          broken.push(`${page}: ${target} (no file ${relative(ROOT, file)})`);
          continue;
        }
        if (anchor !== undefined && (statSync(file).isDirectory() || !anchors(readFileSync(file, "utf8")).has(anchor)))
          broken.push(`${page}: ${target} (no heading #${anchor})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("computes GitHub's heading anchors, numbering repeats and skipping code blocks", () => {
    expect(anchors("# Costs\n## What `wrapOpenAI` covers\n## Amazon Bedrock: `wrapBedrock`\n## Costs")).toEqual(
      new Set(["costs", "what-wrapopenai-covers", "amazon-bedrock-wrapbedrock", "costs-1"]),
    );
    expect(anchors("```\n# not a heading\n```\n# Real")).toEqual(new Set(["real"]));
  });
});
