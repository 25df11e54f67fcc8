import { afterEach, describe, expect, it } from "vitest";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-node";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { backfill } from "../../src/backfill/pipeline.js";
import { Client } from "../../src/ingest/index.js";
import { openStore } from "../../src/store/index.js";
import { spanRunId, toSpanRecord } from "../../src/otel/index.js";
import { tempDir } from "../helpers/runs.js";

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

/** Real SDK spans: agent -> GET (not an LLM span) -> chat, plus a second trace with one chat span. */
async function makeSpans(): Promise<ReadableSpan[]> {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  cleanup.push(() => context.disable());
  const mem = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(mem)] });
  const tracer = provider.getTracer("app");
  const chat = (content: string) => ({
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": "openai",
    "gen_ai.request.model": "gpt-4o-mini",
    "gen_ai.input.messages": JSON.stringify([{ role: "user", parts: [{ type: "text", content }] }]),
    "gen_ai.output.messages": JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: "ok" }] }]),
    "gen_ai.usage.input_tokens": 5,
    "gen_ai.usage.output_tokens": 1,
  });
  await tracer.startActiveSpan("agent", { attributes: { "gen_ai.operation.name": "invoke_agent" } }, async (agent) => {
    await tracer.startActiveSpan("GET /tool", { attributes: { "http.request.method": "GET" } }, async (http) => {
      tracer.startSpan("chat gpt-4o-mini", { attributes: chat("first") }).end();
      http.end();
    });
    agent.end();
  });
  tracer.startSpan("chat gpt-4o-mini", { attributes: chat("second") }).end();
  await provider.forceFlush();
  return mem.getFinishedSpans();
}

const line = (spans: ReadableSpan[]) =>
  Buffer.from(JSON.stringify(JSON.parse(Buffer.from(JsonTraceSerializer.serializeRequest(spans)!).toString("utf8")))).toString("utf8");

describe("backfill of OTLP JSON exports", () => {
  it("assembles traces across lines (children before their root), re-attaches past dropped spans, dead-letters a bad line, and a rerun duplicates nothing", async () => {
    const spans = await makeSpans();
    const [chat1, http, agent, chat2] = spans; // finish order
    const dir = tempDir("tp-bf-otlp-");
    const file = join(dir, "traces.jsonl");
    // As a file exporter writes them: one export request per line, in flush order.
    writeFileSync(file, [line([chat1!, http!]), "{not json", line([chat2!]), line([agent!])].join("\n") + "\n");
    const db = join(dir, "t.db");
    const client = new Client({ dbPath: db, project: "otlp-bf", spoolDir: join(dir, "spool"), exitHooks: false, warn: () => {} });
    cleanup.push(async () => void (await client.shutdown()));
    const dead = join(dir, "dead.jsonl");
    const first = await backfill({ files: [file], client, project: "otlp-bf", deadLetterPath: dead });
    expect(first).toMatchObject({ lines: 4, records: 4, dead_lettered: 1, sent: 3, delivered: 3 });
    expect(
      readFileSync(dead, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { line: number; reason: string }),
    ).toEqual([expect.objectContaining({ line: 2, reason: expect.stringContaining("malformed JSON") })]);
    const again = await backfill({ files: [file], client, project: "otlp-bf", deadLetterPath: join(dir, "dead2.jsonl") });
    expect(again.sent).toBe(3);
    await client.flush();

    const store = await openStore(db);
    cleanup.push(() => store.close());
    const runs = (await store.queryRuns({ project: "otlp-bf", limit: 100 })).runs;
    expect(runs).toHaveLength(3);
    const agentRun = runs.find((r) => r.name === "agent")!;
    const chat1Run = runs.find((r) => r.id === spanRunId(toSpanRecord(chat1!)))!;
    const chat2Run = runs.find((r) => r.id === spanRunId(toSpanRecord(chat2!)))!;
    expect(agentRun).toMatchObject({ run_type: "chain", id: spanRunId(toSpanRecord(agent!)) });
    expect(chat1Run).toMatchObject({ run_type: "llm", parent_run_id: agentRun.id, trace_id: agentRun.id }); // past the dropped GET span
    expect(chat1Run.dotted_order.startsWith(agentRun.dotted_order + ".")).toBe(true);
    expect(chat2Run.parent_run_id ?? null).toBeNull();
    expect((chat1Run.inputs as { messages: unknown[] }).messages).toEqual([{ role: "user", content: [{ type: "text", text: "first" }] }]);
  });

  it("is one checkpoint unit: a rerun of an unchanged file sends nothing, an appended one is read again whole", async () => {
    const spans = await makeSpans();
    const [chat1, http, agent, chat2] = spans;
    const dir = tempDir("tp-bf-otlp-cp-");
    const file = join(dir, "traces.jsonl");
    writeFileSync(file, [line([chat1!, http!]), line([agent!])].join("\n") + "\n");
    const client = new Client({
      dbPath: join(dir, "t.db"),
      project: "otlp-cp",
      spoolDir: join(dir, "spool"),
      exitHooks: false,
      warn: () => {},
    });
    cleanup.push(async () => void (await client.shutdown()));
    const opts = { client, project: "otlp-cp", deadLetterPath: join(dir, "dead.jsonl"), checkpointPath: join(dir, "cp.json") };
    expect((await backfill({ files: [file], ...opts })).delivered).toBe(2);
    expect((await backfill({ files: [file], ...opts })).delivered).toBe(0);
    appendFileSync(file, line([chat2!]) + "\n");
    const third = await backfill({ files: [file], ...opts });
    expect(third.delivered).toBe(3); // the whole file again: its traces may span the old and new lines
    expect(third.records).toBe(3); // counted once: two lines from the first run, one new
  });

  it("splits a file between shards by trace, so no trace is cut in two", async () => {
    const spans = await makeSpans();
    const [chat1, http, agent, chat2] = spans;
    const dir = tempDir("tp-bf-otlp-shard-");
    const file = join(dir, "traces.jsonl");
    // One span per line, the agent's chat and the agent on lines 1 and 2: split by line, they would part.
    writeFileSync(file, [chat1!, agent!, http!, chat2!].map((s) => line([s])).join("\n") + "\n");
    const db = join(dir, "t.db");
    const sent: number[] = [];
    for (const index of [0, 1]) {
      const client = new Client({
        dbPath: db,
        project: "otlp-shard",
        spoolDir: join(dir, `spool${index}`),
        exitHooks: false,
        warn: () => {},
      });
      const r = await backfill({
        files: [file],
        client,
        project: "otlp-shard",
        shard: { index, count: 2 },
        deadLetterPath: join(dir, `d${index}.jsonl`),
      });
      await client.shutdown();
      sent.push(r.sent);
    }
    expect(sent[0]! + sent[1]!).toBe(3);
    const store = await openStore(db);
    cleanup.push(() => store.close());
    const runs = (await store.queryRuns({ project: "otlp-shard", limit: 100 })).runs;
    expect(runs).toHaveLength(3);
    expect(runs.find((r) => r.id === spanRunId(toSpanRecord(chat1!)))!.parent_run_id).toBe(spanRunId(toSpanRecord(agent!)));
  });
});
