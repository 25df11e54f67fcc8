import { describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jsonLines, runCli } from "../helpers/cli.js";

const EXAMPLE = new URL("../../examples/normalize/openai-and-anthropic.jsonl", import.meta.url).pathname;

describe("tracepipe normalize", () => {
  it("normalizes the bundled example, one line per record, exit 0", async () => {
    const r = await runCli(["normalize", EXAMPLE]);
    expect(r.code).toBe(0);
    const out = jsonLines(r.stdout) as { format: string; metadata: Record<string, string> }[];
    expect(out.map((o) => o.format)).toEqual(["openai-chat", "anthropic-messages", "openai-chat", "native"]);
    expect(out[0]!.metadata).toEqual({ trace_provider: "openai", trace_model_name: "gpt-4o-2024-08-06" });
    expect(r.stderr).toBe("");
  });

  it("reports a bad line with its number on stderr, runs the rest and exits 1", async () => {
    const input = ['{"model":"gpt-4o","messages":[{"role":"user","content":"a"}]}', "{not json", '{"hello":1}', '["assistant","ok"]'].join(
      "\n",
    );
    const r = await runCli(["normalize", "-"], { input });
    expect(r.code).toBe(1);
    expect(jsonLines(r.stdout)).toHaveLength(2);
    const errs = jsonLines(r.stderr) as { line: number; error: { type: string } }[];
    expect(errs.map((e) => [e.line, e.error.type])).toEqual([
      [2, "json_invalid"],
      [3, "unknown_format"],
    ]);
  });

  it("reports a corrupt first line of a JSONL file as line 1 and normalizes every other record", async () => {
    const good = Array.from({ length: 7 }, (_, i) => JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: `q${i}` }] }));
    const dir = mkdtempSync(join(tmpdir(), "tp-"));
    const file = join(dir, "first-bad.jsonl");
    writeFileSync(file, ['{"model": "gpt-4o", "messages": [BROKEN', ...good].join("\n") + "\n");
    const r = await runCli(["normalize", file]);
    expect(r.code).toBe(1);
    const out = jsonLines(r.stdout) as { inputs: { messages: { content: { text: string }[] }[] } }[];
    expect(out.map((o) => o.inputs.messages[0]!.content[0]!.text)).toEqual(["q0", "q1", "q2", "q3", "q4", "q5", "q6"]);
    expect(jsonLines(r.stderr)).toEqual([{ line: 1, error: expect.objectContaining({ type: "json_invalid" }) }]);
  });

  it("reports a line over --max-line-bytes with its number, skips it, and reads the rest", async () => {
    const rec = (t: string) => JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: t }] });
    const input = [rec("a"), rec("x".repeat(5000)), rec("b")].join("\n");
    const r = await runCli(["normalize", "--max-line-bytes", "1000"], { input });
    expect(r.code).toBe(1);
    expect(jsonLines(r.stdout)).toHaveLength(2);
    expect(jsonLines(r.stderr)).toEqual([
      { line: 2, error: expect.objectContaining({ type: "line_too_long", msg: expect.stringContaining("1000 bytes") }) },
    ]);
  });

  it("reads one pretty-printed JSON document as one record", async () => {
    const doc = JSON.stringify(
      { type: "message", role: "assistant", model: "claude-haiku-4-5", content: [{ type: "text", text: "hi" }] },
      null,
      2,
    );
    const r = await runCli(["normalize"], { input: doc });
    expect(r.code).toBe(0);
    expect(jsonLines(r.stdout)).toHaveLength(1);
  });

  it("names the line of a syntax error inside a multi-line document", async () => {
    const r = await runCli(["normalize"], { input: '{\n  "a": 1,\n  "b": oops\n}' });
    expect(r.code).toBe(1);
    expect((jsonLines(r.stderr)[0] as { line: number }).line).toBe(3);
  });

  it("honours --format and rejects an unknown one with exit 2", async () => {
    const forced = await runCli(["normalize", "--format", "anthropic-messages"], { input: '{"messages":[{"role":"user","content":"x"}]}' });
    expect((jsonLines(forced.stdout)[0] as { format: string }).format).toBe("anthropic-messages");
    const bad = await runCli(["normalize", "--format", "cohere-chat"], { input: "" });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/unknown --format "cohere-chat"/);
  });

  it("names the field of a malformed record under --format, and keeps going (issue 14 items 4, 7)", async () => {
    const input = [
      '{"model":"gpt-4o","messages":"hello"}',
      '{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}}',
      '{"role":"assistant","content":"hi","tool_calls":[]}',
    ].join("\n");
    const r = await runCli(["normalize", "--format", "openai-chat", "-"], { input });
    expect(r.code).toBe(1);
    expect(jsonLines(r.stderr)).toEqual([
      { line: 1, error: { loc: ["messages"], msg: "expected an array, got string", type: "list_type" } },
    ]);
    const out = jsonLines(r.stdout) as { outputs: { messages: { content: { type: string }[] }[] } }[];
    expect(out.map((o) => o.outputs.messages[0]!.content.map((b) => b.type))).toEqual([["tool_call"], ["text"]]);
  });

  it("exits 2 on a missing file and on an unknown option", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tp-"));
    expect((await runCli(["normalize", join(dir, "nope.jsonl")])).code).toBe(2);
    expect((await runCli(["normalize", "--bogus"])).code).toBe(2);
  });

  it("prints help with the defaults", async () => {
    const r = await runCli(["normalize", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/default:\s+"auto"/);
  });
});

describe("tracepipe validate", () => {
  it("passes valid records and reports each problem with line, loc, msg and type", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tp-"));
    const file = join(dir, "in.jsonl");
    writeFileSync(
      file,
      [
        JSON.stringify({ messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] }),
        JSON.stringify({ messages: [{ role: "tool", tool_call_id: "nope", content: [] }] }),
        JSON.stringify([{ role: "user", content: [{ type: "image", url: "https://x.test/i.png" }] }]),
      ].join("\n"),
    );
    const r = await runCli(["validate", file]);
    expect(r.code).toBe(1);
    expect(jsonLines(r.stdout)).toEqual([
      { line: 1, valid: true, errors: 0 },
      { line: 2, valid: false, errors: 1 },
      { line: 3, valid: true, errors: 0 },
    ]);
    expect(jsonLines(r.stderr)).toEqual([
      { line: 2, loc: ["messages", 0, "tool_call_id"], msg: expect.any(String), type: "unknown_tool_call_id" },
    ]);

    const strict = await runCli(["validate", "--strict", file]);
    expect(jsonLines(strict.stderr).map((e) => (e as { line: number }).line)).toEqual([2, 3]);
  });

  it("reports a corrupt first line as line 1 and validates the rest", async () => {
    const ok = JSON.stringify({ messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] });
    const r = await runCli(["validate"], { input: ["{oops", ok, ok].join("\n") + "\n" });
    expect(r.code).toBe(1);
    expect(jsonLines(r.stdout)).toEqual([
      { line: 1, valid: false, errors: 1 },
      { line: 2, valid: true, errors: 0 },
      { line: 3, valid: true, errors: 0 },
    ]);
  });

  it("exits 0 when everything is valid", async () => {
    const r = await runCli(["validate"], { input: '{"messages":[]}\n' });
    expect(r.code).toBe(0);
  });
});
