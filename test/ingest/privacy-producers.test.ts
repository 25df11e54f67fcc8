/**
 * Masking and sampling live in the Client, so every producer gets them: the
 * wrappers, traceable, the span processor and backfill. A masked value must
 * appear nowhere in what reaches the collector.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import OpenAI from "openai";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backfill } from "../../src/backfill/pipeline.js";
import { Client } from "../../src/ingest/client.js";
import { TraceSpanProcessor } from "../../src/otel/index.js";
import { traceable } from "../../src/tracing/traceable.js";
import { wrapOpenAI } from "../../src/tracing/wrappers.js";
import { sql, startCollector, type Running } from "../helpers/collector.js";
import { fixture, startReplayServer, type ReplayServer } from "../helpers/replay-server.js";
import { tempDir } from "../helpers/runs.js";

const SECRET = "ada.lovelace@example.com";
let col: Running;
let vendor: ReplayServer;
beforeAll(async () => {
  col = await startCollector({ apiKey: "k" });
  vendor = await startReplayServer();
});
afterAll(async () => {
  await col.close();
  await vendor.close();
});

/** Every text the collector stored for a project, columns and all. */
function storedText(project: string): string {
  const rows = sql(col.collector.store).prepare("SELECT * FROM runs WHERE session_name = ?").all(project) as Record<string, unknown>[];
  return JSON.stringify(rows);
}

describe("privacy across producers", () => {
  it("masks every producer's runs before they leave the process", async () => {
    const dir = tempDir("tp-mask-");
    const client = new Client({
      endpoint: col.url,
      apiKey: "k",
      project: "masked",
      spoolDir: join(dir, "spool"),
      exitHooks: false,
      warn: () => {},
      mask: (s) => s.replaceAll(SECRET, "[email]"),
    });

    // Wrapper, inside traceable.
    vendor.push({
      json: {
        ...fixture("openai-completion.json"),
        choices: [
          { index: 0, message: { role: "assistant", content: `Mailed ${SECRET}.`, refusal: null }, finish_reason: "stop", logprobs: null },
        ],
      },
    });
    const openai = wrapOpenAI(new OpenAI({ apiKey: "sk-x", baseURL: `${vendor.url}/v1`, maxRetries: 0 }), { client });
    const chain = traceable(
      async (to: string) =>
        (await openai.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: `mail ${to}` }] })).choices[0]!.message
          .content,
      { name: "send", client },
    );
    await chain(SECRET);

    // Span processor.
    const provider = new NodeTracerProvider({ spanProcessors: [new TraceSpanProcessor({ client })] });
    const span = provider.getTracer("t").startSpan("chat gpt-4o", {
      attributes: {
        "gen_ai.operation.name": "chat",
        "gen_ai.system": "openai",
        "gen_ai.request.model": "gpt-4o",
        "gen_ai.input.messages": JSON.stringify([{ role: "user", parts: [{ type: "text", content: `hi ${SECRET}` }] }]),
      },
    });
    span.end();
    await provider.forceFlush();

    // Backfill.
    const log = join(dir, "log.jsonl");
    writeFileSync(
      log,
      JSON.stringify({
        request: { model: "gpt-4o", messages: [{ role: "user", content: `write to ${SECRET}` }] },
        response: { ...fixture("openai-completion.json") },
      }) + "\n",
    );
    const result = await backfill({ files: [log], client, project: "masked", deadLetterPath: join(dir, "dead.jsonl") });
    expect(result.dead_lettered).toBe(0);
    expect(result.sent).toBe(1);

    await client.shutdown();
    const text = storedText("masked");
    expect(text).toContain("[email]");
    expect(text).not.toContain(SECRET);
    const names = (
      sql(col.collector.store).prepare("SELECT name FROM runs WHERE session_name = 'masked' ORDER BY name").all() as { name: string }[]
    ).map((r) => r.name);
    expect(names).toEqual(expect.arrayContaining(["send", "ChatOpenAI", "chat gpt-4o"]));
    expect(names.length).toBe(4);
  });

  it("hides inputs and outputs, and samples whole traces, counting what it did not send", async () => {
    const dir = tempDir("tp-sample-");
    const client = new Client({
      endpoint: col.url,
      apiKey: "k",
      project: "sampled",
      spoolDir: join(dir, "spool"),
      exitHooks: false,
      warn: () => {},
      samplingRate: 0.5,
      hideInputs: true,
      hideOutputs: true,
    });
    const inner = traceable(async (x: string) => `inner ${x}`, { name: "inner", client });
    const outer = traceable(async (x: string) => inner(x), { name: "outer", client });
    for (let i = 0; i < 200; i++) await outer(`secret-${i}`);
    await client.shutdown();
    const rows = sql(col.collector.store)
      .prepare("SELECT id, trace_id, parent_run_id, name, inputs, outputs, end_time FROM runs WHERE session_name = 'sampled'")
      .all() as Record<string, string | null>[];
    const traces = new Map<string, string[]>();
    for (const r of rows) traces.set(r.trace_id!, [...(traces.get(r.trace_id!) ?? []), r.name!]);
    // Whole traces only: each kept trace has both runs, each ended.
    for (const names of traces.values()) expect(names.sort()).toEqual(["inner", "outer"]);
    expect(rows.every((r) => r.end_time !== null)).toBe(true);
    expect(traces.size).toBeGreaterThan(60);
    expect(traces.size).toBeLessThan(140);
    expect(client.stats.sampledOut).toBe((200 - traces.size) * 4); // two runs per trace, each created and updated
    expect(JSON.stringify(rows)).not.toContain("secret-");
    expect(rows.every((r) => r.inputs === "{}" && r.outputs === "{}")).toBe(true);
  });
});
