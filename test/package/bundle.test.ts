import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { startCollector, type Running } from "../helpers/collector.js";
import { fixture, startReplayServer, type ReplayServer } from "../helpers/replay-server.js";
import { tempDir } from "../helpers/runs.js";
import { appDir, ensureBuilt } from "./dist.js";

let vendor: ReplayServer;
let col: Running;
beforeAll(async () => {
  ensureBuilt();
  vendor = await startReplayServer();
  col = await startCollector({ apiKey: "bundle-key" });
}, 180_000);
afterAll(async () => {
  await vendor?.close();
  await col?.close();
});

describe("an esbuild bundle of a wrapper-only app", () => {
  it("starts, traces an OpenAI call and delivers it, with no node_modules beside it", async () => {
    const src = appDir();
    writeFileSync(
      join(src, "app.mjs"),
      `import OpenAI from "openai";
import { wrapOpenAI, traceable, flush } from "tracepipe";
const openai = wrapOpenAI(new OpenAI({ apiKey: "sk-x", baseURL: process.env.VENDOR_URL + "/v1", maxRetries: 0 }));
const ask = traceable(async (q) => (await openai.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: q }] })).choices[0].message.content, { name: "ask" });
console.log(await ask("Weather in Paris?"));
await flush();
`,
    );
    // The app's own dependencies resolve from the checkout's node_modules, as they would from the app's.
    const out = join(tempDir("tp-bundle-"), "app.bundle.mjs");
    await build({
      entryPoints: [join(src, "app.mjs")],
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      outfile: out,
      nodePaths: [join(src, "node_modules/tracepipe/node_modules")],
      logLevel: "silent",
    });
    expect(existsSync(join(out, "..", "node_modules"))).toBe(false);

    vendor.push({ json: fixture("openai-completion.json") });
    const env = {
      ...process.env,
      VENDOR_URL: vendor.url,
      TRACEPIPE_ENDPOINT: col.url,
      TRACEPIPE_API_KEY: "bundle-key",
      TRACEPIPE_PROJECT: "bundled",
      TRACEPIPE_DB: "",
    };
    const r = await new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
      const child = spawn(process.execPath, [out], { cwd: join(out, ".."), env });
      let stdout = "";
      let stderr = "";
      child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
      child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
      child.on("close", (code) => resolve({ code, out: stdout, err: stderr }));
    });
    expect(r.err).not.toContain("Dynamic require");
    expect(r.code, r.err).toBe(0);
    expect(r.out.trim()).toBe("Paris is 18°C and rainy.");

    const res = await fetch(`${col.url}/runs/query`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "bundle-key" },
      body: JSON.stringify({ project: "bundled" }),
    });
    const { runs } = (await res.json()) as { runs: { name: string; run_type: string; parent_run_id?: string | null; id: string }[] };
    expect(runs.map((x) => x.run_type).sort()).toEqual(["chain", "llm"]);
    const parent = runs.find((x) => x.run_type === "chain")!;
    expect(parent.name).toBe("ask");
    expect(runs.find((x) => x.run_type === "llm")!.parent_run_id).toBe(parent.id);
  });
});
