import { describe, expect, it } from "vitest";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mkdtempSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { jsonLines, runCli } from "../helpers/cli.js";

const ask = (text: string) => JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: text }] });
const firstText = (o: unknown) => (o as { inputs: { messages: { content: { text: string }[] }[] } }).inputs.messages[0]!.content[0]!.text;

function logsDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "tp-glob-"));
  mkdirSync(join(dir, "logs"));
  // Written out of order, so a sorted expansion is visible.
  writeFileSync(join(dir, "logs", "b.jsonl"), ask("from b") + "\n");
  writeFileSync(join(dir, "logs", "a.jsonl"), ask("from a") + "\n" + ask("also a") + "\n");
  writeFileSync(join(dir, "logs", "notes.txt"), "not a log\n");
  return dir;
}

describe("the CLI expands glob patterns itself", () => {
  it("normalize reads a quoted relative pattern's files in sorted order and names the file of a bad record", async () => {
    const dir = logsDir();
    writeFileSync(join(dir, "logs", "c.jsonl"), "{broken\n");
    const r = await runCli(["normalize", "logs/*.jsonl"], { cwd: dir });
    expect(r.code).toBe(1);
    expect(jsonLines(r.stdout).map(firstText)).toEqual(["from a", "also a", "from b"]);
    expect(jsonLines(r.stderr)).toEqual([{ file: "logs/c.jsonl", line: 1, error: expect.objectContaining({ type: "json_invalid" }) }]);
  });

  it("validate expands an absolute pattern and names file and line", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tp-glob-"));
    writeFileSync(join(dir, "1.jsonl"), JSON.stringify({ messages: [] }) + "\n");
    writeFileSync(join(dir, "2.jsonl"), JSON.stringify({ messages: [] }) + "\n" + JSON.stringify({ messages: "x" }) + "\n");
    const r = await runCli(["validate", join(dir, "*.jsonl")]);
    expect(r.code).toBe(1);
    expect(jsonLines(r.stdout)).toEqual([
      { file: join(dir, "1.jsonl"), line: 1, valid: true, errors: 0 },
      { file: join(dir, "2.jsonl"), line: 1, valid: true, errors: 0 },
      { file: join(dir, "2.jsonl"), line: 2, valid: false, errors: 1 },
    ]);
  });

  it("backfill takes 'logs/*.jsonl.gz' as the user typed it, quoted", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tp-glob-"));
    mkdirSync(join(dir, "logs"));
    const example = readFileSync(new URL("../../examples/backfill/generic.jsonl", import.meta.url), "utf8")
      .trim()
      .split("\n");
    writeFileSync(join(dir, "logs", "day1.jsonl.gz"), gzipSync(example.slice(0, 2).join("\n") + "\n"));
    writeFileSync(join(dir, "logs", "day2.jsonl.gz"), gzipSync(example.slice(2).join("\n") + "\n"));
    const r = await runCli(["backfill", "--dry-run", "--progress", "none", "logs/*.jsonl.gz"], { cwd: dir });
    expect(r.stderr).not.toMatch(/no such file|no file matches/);
    expect(r.code).toBe(0);
    const { summary } = jsonLines(r.stdout).at(-1) as { summary: { files: number; records: number; sent: number } };
    expect(summary.files).toBe(2);
    expect(summary.records).toBe(example.length);
    expect(summary.sent).toBe(example.length);
  });

  it("a pattern that matches nothing is a usage error naming the pattern, for each command", async () => {
    const dir = logsDir();
    for (const args of [
      ["normalize", "logs/*.json.gz"],
      ["validate", "logs/*.json.gz"],
      ["backfill", "--dry-run", "logs/*.json.gz"],
    ]) {
      const r = await runCli(args, { cwd: dir });
      expect(r.code, args[0]).toBe(2);
      expect(r.stderr, args[0]).toContain("logs/*.json.gz");
      expect(r.stdout, args[0]).toBe("");
    }
  });

  it("takes an existing path with glob characters as it is, not as a pattern", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tp-glob-"));
    writeFileSync(join(dir, "run[1].jsonl"), ask("literal") + "\n");
    // What `run[1].jsonl` would match as a pattern: must not be read.
    writeFileSync(join(dir, "run1.jsonl"), ask("globbed") + "\n");
    const r = await runCli(["normalize", "run[1].jsonl"], { cwd: dir });
    expect(r.code).toBe(0);
    expect(jsonLines(r.stdout).map(firstText)).toEqual(["literal"]);
  });
});
