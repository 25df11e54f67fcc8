import { describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { CLI, jsonLines, runCli } from "../helpers/cli.js";

const EXAMPLE = fileURLToPath(new URL("../../examples/normalize/openai-and-anthropic.jsonl", import.meta.url));

/**
 * `tracepipe normalize FILE | tracepipe validate`, as a user types it: two real
 * processes joined by an OS pipe (bash, with pipefail so either one failing shows).
 */
function pipeNormalizeIntoValidate(file: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // The CLI's arguments (the compiled entry, or tsx and the sources) travel as the bash array `cli`.
    const script = 'set -o pipefail; file="$1"; shift; cli=("$@"); "${cli[@]}" normalize "$file" | "${cli[@]}" validate';
    const child = spawn("bash", ["-c", script, "pipe", file, process.execPath, ...CLI], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const user = (text: string) => ({ role: "user", content: [{ type: "text", text }] });
const call = (id: string) => ({ role: "assistant", content: [{ type: "tool_call", id, name: "get_weather", args: { city: "Paris" } }] });
const result = (id: string) => ({ role: "tool", tool_call_id: id, content: [{ type: "text", text: "18C" }] });
const line = (inputs: unknown[] | undefined, outputs: unknown[] | undefined) =>
  JSON.stringify({
    format: "native",
    ...(inputs ? { inputs: { messages: inputs } } : {}),
    ...(outputs ? { outputs: { messages: outputs } } : {}),
    metadata: {},
  });

describe("tracepipe validate reads tracepipe normalize's output", () => {
  it("accepts `normalize example | validate` through a real pipe, every record valid, exit 0", async () => {
    const r = await pipeNormalizeIntoValidate(EXAMPLE);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const out = jsonLines(r.stdout);
    expect(out).toEqual([1, 2, 3, 4].map((n) => ({ line: n, valid: true, errors: 0 })));
  });

  it("links a tool result in outputs to the call made in inputs", async () => {
    const r = await runCli(["validate"], { input: line([user("weather?"), call("c1")], [result("c1")]) + "\n" });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });

  it("reports a broken normalize line with its line number and an inputs/outputs location", async () => {
    const input = [
      line([user("hi")], [{ role: "assistant", content: [{ type: "text", text: "hello" }] }]),
      line([user("weather?"), call("c1")], [result("c9")]),
      line([user("hi"), { role: "user", content: "not blocks" }], undefined),
      JSON.stringify({ format: "native", outputs: { messages: "nope" }, metadata: {} }),
    ].join("\n");
    const r = await runCli(["validate"], { input });
    expect(r.code).toBe(1);
    expect(jsonLines(r.stdout)).toEqual([
      { line: 1, valid: true, errors: 0 },
      { line: 2, valid: false, errors: 1 },
      { line: 3, valid: false, errors: 1 },
      { line: 4, valid: false, errors: 1 },
    ]);
    const errs = jsonLines(r.stderr) as { line: number; loc: unknown[]; type: string }[];
    expect(errs.map((e) => [e.line, e.loc, e.type])).toEqual([
      [2, ["outputs", "messages", 0, "tool_call_id"], "unknown_tool_call_id"],
      [3, ["inputs", "messages", 1, "content"], expect.any(String)],
      [4, ["outputs", "messages"], "list_type"],
    ]);
  });

  it("still reads plain {messages} records and bare arrays, and refuses a record that is neither", async () => {
    const input = [
      JSON.stringify({ messages: [user("a")] }),
      JSON.stringify([user("b")]),
      JSON.stringify({ format: "native", metadata: {} }),
    ].join("\n");
    const r = await runCli(["validate"], { input });
    expect(r.code).toBe(1);
    expect(jsonLines(r.stdout).map((o) => (o as { valid: boolean }).valid)).toEqual([true, true, false]);
    expect(jsonLines(r.stderr)).toEqual([{ line: 3, loc: [], msg: expect.any(String), type: "record_type" }]);
  });
});
