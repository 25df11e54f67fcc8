/**
 * The gemini adapter is known wherever formats are auto-detected: generic
 * backfill logs (`{request, response, ...}` per line, runs landing in a real
 * embedded store) and the collector's derivation of stored runs.
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

describe("Gemini in the pipelines", () => {
  it("detects a Gemini request/response pair and a streamed one, with provider, model, usage and TTFT", async () => {
    const dir = tempDir("tp-bf-gemini-");
    const file = join(dir, "gemini.log.jsonl");
    const rest = {
      model: "models/gemini-2.5-flash",
      systemInstruction: { parts: [{ text: "Be brief." }] },
      contents: [{ role: "user", parts: [{ text: "Weather in Paris?" }] }],
      generationConfig: { temperature: 0.2 },
    };
    const lines = [
      {
        request: rest,
        response: fixture("gemini-response.json"),
        start_time: "2026-03-01T12:00:00.000Z",
        end_time: "2026-03-01T12:00:01.000Z",
      },
      {
        request: { model: "gemini-2.5-flash", contents: "Say hello in French" },
        response: fixture("gemini-stream.json"),
        start_time: "2026-03-01T12:01:00.000Z",
        end_time: "2026-03-01T12:01:02.000Z",
        time_to_first_token_ms: 300,
      },
    ];
    writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    const dbPath = join(dir, "traces.db");
    const client = new Client({ dbPath, spoolDir: join(dir, "spool"), project: "bf", exitHooks: false, warn: () => {} });
    cleanup.push(async () => void (await client.shutdown()));
    const result = await backfill({ files: [file], client, deadLetterPath: join(dir, "dead.jsonl"), project: "bf" });
    expect(result).toMatchObject({ records: 2, sent: 2, dead_lettered: 0, estimated_usage: 0 });
    await client.flush();
    const store = await openStore(dbPath);
    const runs = (await store.queryRuns({ project: "bf", limit: 10 })).runs as any[];
    store.close();
    const byKey = new Map(runs.map((r) => [r.extra.metadata.backfill.key as string, r]));

    const r1 = byKey.get("line:1");
    expect(r1).toMatchObject({ run_type: "llm", name: "ChatGoogleGenerativeAI", start_time: "2026-03-01T12:00:00.000000Z" });
    expect(r1.extra.metadata).toMatchObject({
      trace_provider: "google",
      trace_model_name: "gemini-2.5-flash",
      invocation_params: { generationConfig: { temperature: 0.2 } },
    });
    expect(r1.inputs.messages.map((m: { role: string }) => m.role)).toEqual(["system", "user"]);
    expect(r1.outputs.messages[0].usage_metadata).toMatchObject({ input_tokens: 24, output_tokens: 21, total_tokens: 45 });

    const r2 = byKey.get("line:2");
    expect(r2).toMatchObject({ name: "ChatGoogleGenerativeAI", first_token_time: "2026-03-01T12:01:00.300000Z" });
    expect(r2.outputs.messages[0].content).toEqual([{ type: "text", text: "Bonjour ! Comment allez-vous ?" }]);
    expect(r2.outputs.messages[0].usage_metadata).toMatchObject({ input_tokens: 8, output_tokens: 25 });
  });

  it("the collector derives native messages from a run logged with Gemini SDK parameters and response", () => {
    const d = deriveLlm(
      { model: "gemini-2.5-flash", contents: "Weather in Paris?", config: { systemInstruction: "Be brief." } },
      fixture("gemini-response.json"),
    );
    expect(d.detected_format).toBe("gemini");
    expect(d.normalize_error).toBeNull();
    expect(d.normalized_inputs!.messages.map((m) => (m as { role: string }).role)).toEqual(["system", "user"]);
    expect((d.normalized_outputs!.messages[0] as { content: { type: string }[] }).content.map((b) => b.type)).toEqual([
      "reasoning",
      "text",
    ]);
  });
});
