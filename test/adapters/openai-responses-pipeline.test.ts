/**
 * The openai-responses adapter is known wherever formats are auto-detected:
 * backfill's generic logs and the collector's derivation of stored runs.
 */
import { afterEach, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { backfill } from "../../src/backfill/pipeline.js";
import { Client } from "../../src/ingest/index.js";
import { openStore } from "../../src/store/index.js";
import { deriveLlm } from "../../src/store/derive.js";
import { tempDir } from "../helpers/runs.js";
import { fixture } from "../helpers/replay-server.js";

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

const request = {
  model: "gpt-4.1",
  instructions: "Answer briefly.",
  input: [{ role: "user", content: [{ type: "input_text", text: "Weather in Paris?" }] }],
};

describe("openai-responses in the pipelines", () => {
  it("backfill turns generic Responses log lines (JSON and stream) into llm runs with usage", async () => {
    const dir = tempDir("tp-bf-resp-");
    const file = join(dir, "app.jsonl");
    const rows = [
      { request, response: fixture("openai-response.json"), start_time: "2026-03-01T12:00:00.000Z", end_time: "2026-03-01T12:00:01.000Z" },
      { request: { ...request, stream: true }, response: fixture("openai-response-stream.json"), start_time: "2026-03-01T12:01:00.000Z" },
    ];
    writeFileSync(file, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
    const dbPath = join(dir, "traces.db");
    const client = new Client({ dbPath, spoolDir: join(dir, "spool"), project: "bf", exitHooks: false, warn: () => {} });
    cleanup.push(async () => void (await client.shutdown()));
    const result = await backfill({ files: [file], client, deadLetterPath: join(dir, "dead.jsonl"), project: "bf" });
    await client.flush();
    expect(result).toMatchObject({ records: 2, sent: 2, dead_lettered: 0 });
    const store = await openStore(dbPath);
    const runs = (await store.queryRuns({ project: "bf", limit: 10 })).runs as any[];
    store.close();
    const byKey = new Map(runs.map((r) => [r.extra.metadata.backfill.key as string, r]));
    const r1 = byKey.get("line:1");
    expect(r1).toMatchObject({ run_type: "llm", name: "ChatOpenAI" });
    expect(r1.extra.metadata).toMatchObject({ trace_provider: "openai", trace_model_name: "gpt-4.1-2025-04-14" });
    expect(r1.inputs.messages.map((m: { role: string }) => m.role)).toEqual(["system", "user"]);
    expect(r1.outputs.messages[0].usage_metadata).toMatchObject({
      input_tokens: 328,
      output_tokens: 52,
      input_token_details: { cache_read: 256 },
      output_token_details: { reasoning: 32 },
    });
    const r2 = byKey.get("line:2");
    expect(r2.outputs.messages[0].content[0]).toMatchObject({ type: "text", text: "Hi there!" });
    expect(r2.outputs.messages[0].usage_metadata).toMatchObject({ input_tokens: 37, output_tokens: 11 });
  });

  it("the collector derives native messages from a run logged with Responses payloads", () => {
    const d = deriveLlm(request, fixture("openai-response.json"));
    expect(d.detected_format).toBe("openai-responses");
    expect(d.normalize_error).toBeNull();
    expect(d.normalized_inputs!.messages).toHaveLength(2);
    expect((d.normalized_outputs!.messages[0] as { content: { type: string }[] }).content.map((b) => b.type)).toEqual([
      "reasoning",
      "tool_call",
      "text",
    ]);
  });
});
