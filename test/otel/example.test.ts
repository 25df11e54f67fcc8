import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { tempDir } from "../helpers/runs.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

describe("examples/otel/route-llm-spans.mjs", () => {
  it("runs as documented: non-LLM spans go elsewhere, one run per LLM call reaches tracepipe", () => {
    // The example imports the package by name, i.e. the compiled dist/ that `npm install` builds.
    const r = spawnSync(process.execPath, [join(ROOT, "examples/otel/route-llm-spans.mjs")], {
      cwd: ROOT,
      env: { ...process.env, TRACEPIPE_DB: join(tempDir("tp-otel-ex-"), "t.db"), TRACEPIPE_ENDPOINT: "" },
      encoding: "utf8",
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain("elsewhere <- SELECT users");
    expect(r.stdout).toContain("elsewhere <- POST /ask");
    expect(r.stdout).not.toContain("elsewhere <- chat");
    expect(r.stdout).toContain("tracepipe stored 1 run(s)");
    // gpt-4o-mini's price: 30 in at $0.15, 3 out at $0.60 per million.
    expect(r.stdout).toContain(
      '3 input messages, usage {"input_tokens":30,"output_tokens":3,"total_tokens":33,"input_cost":0.0000045,"output_cost":0.0000018,"total_cost":0.0000063}',
    );
  });
});
