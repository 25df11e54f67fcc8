/**
 * The OpenTelemetry JS SDK 3 line (api 1.10, `@opentelemetry/sdk-trace` and
 * `sdk-logs` 3.x, `@opentelemetry/instrumentation-openai` 0.22) cannot share
 * the repository's tree with the SDK 2 line, so it is installed in its own
 * fixture folder (test/fixtures/otel-sdk3, `npm ci` there, as .ci/run does).
 * A real chat call, traced there into the compiled package's span and
 * log-record processors, becomes the same run as on the SDK 2 line.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt, ROOT } from "../package/dist.js";
import { startCollector, type Running } from "../helpers/collector.js";
import { fixture, startReplayServer, type ReplayServer } from "../helpers/replay-server.js";
import { onCi } from "../helpers/services.js";
import { meta } from "../helpers/otel.js";

const DIR = join(ROOT, "test", "fixtures", "otel-sdk3");
const installed = existsSync(join(DIR, "node_modules", "@opentelemetry", "sdk-trace", "package.json"));
if (!installed) {
  const msg = `the OTel SDK 3 fixture is not installed (run \`npm ci\` in ${DIR})`;
  if (onCi()) throw new Error(msg);
  process.stderr.write(`\n  NOTICE: ${msg}, so its tests are SKIPPED (with CI=true they fail instead).\n\n`);
}

let vendor: ReplayServer;
let col: Running;
beforeAll(async () => {
  if (!installed) return;
  ensureBuilt();
  vendor = await startReplayServer();
  col = await startCollector();
}, 180_000);
afterAll(async () => {
  await vendor?.close();
  await col?.close();
});

describe.skipIf(!installed)("the OTel JS SDK 3 line", () => {
  it("the official openai instrumentation's chat call becomes an llm run with its log records' messages", async () => {
    vendor.push({ json: fixture("openai-completion.json") });
    const r = await new Promise<{ status: number | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, [join(DIR, "chat.mjs")], {
        cwd: DIR,
        env: {
          ...process.env,
          OPENAI_API_KEY: "sk-test",
          OPENAI_BASE_URL: `${vendor.url}/v1`,
          TRACEPIPE_ENDPOINT: col.url,
          TRACEPIPE_API_KEY: "",
          LANGSMITH_ENDPOINT: "",
          PROJECT: "sdk3",
        },
      });
      let out = "";
      child.stdout.setEncoding("utf8").on("data", (d) => (out += d));
      child.stderr.setEncoding("utf8").on("data", (d) => (out += d));
      const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
      child.on("close", (status) => {
        clearTimeout(timer);
        resolve({ status, out });
      });
    });
    expect(r.status, r.out).toBe(0);
    expect(r.out).toContain('{"held":0,"joined":3}');
    const runs = (await col.collector.store.queryRuns({ project: "sdk3" })).runs;
    expect(runs).toHaveLength(1);
    expect(runs[0]!.inputs).toEqual({
      messages: [
        { role: "system", content: [{ type: "text", text: "Be terse." }] },
        { role: "user", content: [{ type: "text", text: "Weather in Paris?" }] },
      ],
    });
    expect((runs[0]!.outputs as { messages: { content: unknown }[] }).messages[0]!.content).toEqual([
      { type: "text", text: "Paris is 18°C and rainy." },
    ]);
    expect(meta(runs[0]!)).toMatchObject({ trace_provider: "openai", otel: { kind: "client", convention: "otel-genai" } });
  });
});
