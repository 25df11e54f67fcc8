/**
 * README and docs snippets run as written: the OpenTelemetry quick start is taken
 * from README.md itself and the official-instrumentation set-up from docs/otel.md,
 * saved inside the package (so `tracepipe` resolves to this checkout, as it would
 * in an app that installed it) and run against the replay server, with the real
 * instrumentation and the compiled package.
 */
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../src/store/index.js";
import { ensureBuilt, ROOT } from "./package/dist.js";
import { fixture, startReplayServer, type ReplayServer } from "./helpers/replay-server.js";
import { tempDir } from "./helpers/runs.js";

/** The code block right after `<!-- tested: test/readme.test.ts<label> ... -->` in `file` (README.md or a docs page). */
function testedBlock(file: string, label = ""): string {
  const text = readFileSync(join(ROOT, file), "utf8");
  const m = new RegExp(
    `<!-- tested: test/readme\\.test\\.ts${label.replace(/[()]/g, "\\$&")} runs[^>]*-->\n\`\`\`js\n([\\s\\S]*?)\n\`\`\``,
  ).exec(text);
  if (!m) throw new Error(`${file} has no tested OpenTelemetry snippet${label}`);
  return m[1]!;
}

/** Run a README block as an app would, against the replay server and a fresh embedded store. */
async function runBlock(code: string, name: string): Promise<{ status: number | null; stdout: string; stderr: string; db: string }> {
  const dir = join(ROOT, "test-output", "readme");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}-${process.pid}.mjs`);
  writeFileSync(file, code);
  const db = join(tempDir("tp-readme-"), "traces.db");
  // Asynchronously: the replay server answers from this process.
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [file], {
      cwd: dir,
      env: {
        ...process.env,
        OPENAI_API_KEY: "sk-test",
        OPENAI_BASE_URL: `${vendor.url}/v1`,
        TRACEPIPE_DB: db,
        TRACEPIPE_ENDPOINT: "",
        LANGSMITH_ENDPOINT: "",
      },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("close", (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr, db });
    });
  });
}

let vendor: ReplayServer;
beforeAll(async () => {
  ensureBuilt();
  vendor = await startReplayServer();
}, 180_000);
afterAll(() => vendor.close());

describe("README", () => {
  it("runs the OpenTelemetry quick start as pasted: one llm run per call reaches the store", async () => {
    vendor.push({ json: fixture("openai-completion.json") });
    const r = await runBlock(testedBlock("README.md"), "otel-quickstart");
    const db = r.db;
    expect(r.status, r.stderr).toBe(0);
    const reply = (fixture("openai-completion.json") as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
    expect(r.stdout).toContain(reply);
    const store = await openStore(db);
    try {
      const runs = (await store.queryRuns({ project: "my-app" })).runs;
      const llm = runs.filter((x) => x.run_type === "llm");
      expect(llm).toHaveLength(1);
      expect((llm[0]!.extra as { metadata: Record<string, unknown> }).metadata).toMatchObject({ trace_provider: "openai" });
      expect(vendor.requests.at(-1)!.path).toBe("/v1/chat/completions");
    } finally {
      store.close();
    }
  });

  it("runs the official-instrumentation set-up as pasted: the run has the messages its log records carried", async () => {
    vendor.push({ json: fixture("openai-completion.json") });
    const r = await runBlock(testedBlock("docs/otel.md", " (official instrumentation)"), "otel-official");
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain("Paris is 18°C and rainy.");
    const store = await openStore(r.db);
    try {
      const llm = (await store.queryRuns({ project: "my-app" })).runs.filter((x) => x.run_type === "llm");
      expect(llm).toHaveLength(1);
      expect(llm[0]!.inputs).toEqual({ messages: [{ role: "user", content: [{ type: "text", text: "Say hi" }] }] });
      expect((llm[0]!.outputs as { messages: { content: unknown }[] }).messages[0]!.content).toEqual([
        { type: "text", text: "Paris is 18°C and rainy." },
      ]);
    } finally {
      await store.close();
    }
  });
});
