/**
 * Bedrock Converse records from logs: a generic backfill line `{request, response}`
 * (the response a Converse body or the ConverseStream events) becomes an llm run in
 * the embedded store, the collector derives native messages from a run logged
 * with Converse payloads, and `tracepipe normalize` reads the same records.
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
import { jsonLines, runCli } from "../helpers/cli.js";
import { costFor } from "../../src/tokens/prices/index.js";
import type { UsageMetadata } from "../../src/format/schema.js";

const MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";

/** Reported tokens and, since Bedrock's Claude ids resolve to a priced model, their cost. */
function priced(tokens: UsageMetadata): UsageMetadata {
  const cost = costFor(tokens, MODEL);
  expect(cost?.total_cost).toBeGreaterThan(0);
  return { ...tokens, ...cost };
}
// As Bedrock's own JSON (and a JSON log) carries it: bytes as base64 text.
const request = {
  modelId: MODEL,
  system: [{ text: "Answer in French." }],
  messages: [{ role: "user", content: [{ text: "Weather in Paris?" }, { image: { format: "png", source: { bytes: "iVBORw0KGgo=" } } }] }],
  inferenceConfig: { maxTokens: 200 },
};

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

describe("backfill: generic logs with Converse calls", () => {
  it("stores each line as a ChatBedrockConverse run with native messages, the modelId and the reported usage", async () => {
    const dir = tempDir("tp-bf-bedrock-");
    const file = join(dir, "app.log.jsonl");
    const lines = [
      { request, response: fixture("bedrock-converse.json"), start_time: "2026-03-01T12:00:00.000Z", end_time: "2026-03-01T12:00:00.612Z" },
      {
        request,
        response: fixture("bedrock-converse-stream.json"),
        start_time: "2026-03-01T12:01:00.000Z",
        end_time: "2026-03-01T12:01:00.400Z",
        time_to_first_token_ms: 120,
      },
    ];
    writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    const dbPath = join(dir, "traces.db");
    const client = new Client({ dbPath, spoolDir: join(dir, "spool"), project: "bf", exitHooks: false, warn: () => {} });
    cleanup.push(async () => void (await client.shutdown()));
    const result = await backfill({ files: [file], client, deadLetterPath: join(dir, "dead.jsonl"), project: "bf" });
    await client.flush();
    expect(result).toMatchObject({ records: 2, sent: 2, dead_lettered: 0, estimated_usage: 0 });
    const store = await openStore(dbPath);
    const runs = (await store.queryRuns({ project: "bf", limit: 10 })).runs as any[];
    store.close();
    const byKey = new Map(runs.map((r) => [r.extra.metadata.backfill.key as string, r]));
    const whole = byKey.get("line:1");
    expect(whole).toMatchObject({ run_type: "llm", name: "ChatBedrockConverse", end_time: "2026-03-01T12:00:00.612000Z" });
    expect(whole.extra.metadata).toMatchObject({
      trace_provider: "bedrock",
      trace_model_name: MODEL,
      invocation_params: { inferenceConfig: { maxTokens: 200 } },
    });
    expect(whole.inputs.messages[1].content[1]).toEqual({ type: "image", base64: "iVBORw0KGgo=", mime_type: "image/png" });
    expect(whole.outputs.messages[0].usage_metadata).toEqual(
      priced({ input_tokens: 1221, output_tokens: 14, total_tokens: 1235, input_token_details: { cache_read: 1024, cache_creation: 176 } }),
    );
    const streamed = byKey.get("line:2");
    expect(streamed).toMatchObject({ name: "ChatBedrockConverse", first_token_time: "2026-03-01T12:01:00.120000Z" });
    expect(streamed.outputs.messages[0].content).toEqual([{ type: "text", text: "Bonjour ! Il fait 18 °C." }]);
  });
});

describe("the collector's derivation", () => {
  it("reads a run logged with a Converse request and response (or its stream, as `{output: events}`)", () => {
    for (const response of [fixture("bedrock-converse-tool-use.json"), { output: fixture("bedrock-converse-tool-stream.json") }]) {
      const d = deriveLlm(request, response);
      expect(d.detected_format).toBe("bedrock-converse");
      expect(d.normalize_error).toBeNull();
      expect(d.normalized_inputs!.messages.map((m) => (m as { role: string }).role)).toEqual(["system", "user"]);
      expect((d.normalized_outputs!.messages[0] as { content: { type: string }[] }).content.map((b) => b.type)).toContain("tool_call");
    }
  });
});

describe("tracepipe normalize with Converse records", () => {
  it("detects them, and honours --format bedrock-converse", async () => {
    const input = [
      JSON.stringify({ request, response: fixture("bedrock-converse-tool-use.json") }),
      JSON.stringify(fixture("bedrock-converse-tool-stream.json")),
    ].join("\n");
    for (const args of [["normalize"], ["normalize", "--format", "bedrock-converse"]]) {
      const r = await runCli(args, { input });
      expect(r.code, r.stderr).toBe(0);
      const [pair, stream] = jsonLines(r.stdout) as {
        format: string;
        metadata: Record<string, string>;
        outputs: { messages: { content: { type: string }[] }[] };
      }[];
      expect(pair!.format).toBe("bedrock-converse");
      expect(pair!.metadata).toEqual({ trace_provider: "bedrock", trace_model_name: MODEL });
      expect(pair!.outputs.messages[0]!.content.map((b) => b.type)).toEqual(["reasoning", "text", "tool_call"]);
      expect(stream!.outputs.messages[0]!.content.map((b) => b.type)).toEqual(["reasoning", "tool_call"]);
    }
  });
});
