import { afterEach, describe, expect, it } from "vitest";
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-node";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { backfill } from "../../src/backfill/pipeline.js";
import { loadCheckpoint } from "../../src/backfill/checkpoint.js";
import type { Progress } from "../../src/backfill/progress.js";
import { Client } from "../../src/ingest/index.js";
import { genericLine, storedLines } from "../helpers/logs.js";
import { tempDir } from "../helpers/runs.js";

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

function embedded(dir: string, project: string): Client {
  const client = new Client({ dbPath: join(dir, "t.db"), project, spoolDir: join(dir, "spool"), exitHooks: false, warn: () => {} });
  cleanup.push(async () => void (await client.shutdown()));
  return client;
}

const deadLetters = (path: string) =>
  existsSync(path)
    ? readFileSync(path, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { line: number })
    : [];

describe("backfill resume edges", () => {
  it("reads a log saved with a UTF-8 byte-order mark and CRLF line ends whole: the first record is not dead-lettered", async () => {
    const dir = tempDir("tp-bf-bom-");
    const p = join(dir, "exported.jsonl");
    // As PowerShell 5's `Out-File -Encoding utf8` or Notepad writes it.
    writeFileSync(
      p,
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from([0, 1, 2].map((i) => genericLine(i)).join("\r\n") + "\r\n")]),
    );
    const client = embedded(dir, "bom");
    const dead = join(dir, "dead.jsonl");
    const r = await backfill({ files: [p], client, project: "bom", deadLetterPath: dead, checkpointPath: join(dir, "cp.json") });
    expect(deadLetters(dead)).toEqual([]);
    expect(r).toMatchObject({ records: 3, sent: 3, delivered: 3, dead_lettered: 0 });
    expect((await storedLines(join(dir, "t.db"), "bom")).lines).toEqual([1, 2, 3]);
  });

  it("leaves a half-written last line of a log still being appended for the next run: sent once then, never dead-lettered, the file not read again from the top", async () => {
    const dir = tempDir("tp-bf-grow-");
    const p = join(dir, "app.jsonl");
    const full = genericLine(2);
    const cut = 70;
    writeFileSync(p, [genericLine(0), genericLine(1), full.slice(0, cut)].join("\n"));
    const client = embedded(dir, "grow");
    const dead = join(dir, "dead.jsonl");
    const opts = { files: [p], client, project: "grow", deadLetterPath: dead, checkpointPath: join(dir, "cp.json") };

    const first = await backfill(opts);
    expect(first).toMatchObject({ sent: 2, dead_lettered: 0 });
    expect(first.unreadable).toEqual([
      expect.objectContaining({ file: p, line: 2, reason: expect.stringContaining("line 3 has no newline") }),
    ]);
    expect(deadLetters(dead)).toEqual([]);

    // The writer finishes the line, and writes one more.
    appendFileSync(p, full.slice(cut) + "\n" + genericLine(3) + "\n");
    const second = await backfill(opts);
    expect(second).toMatchObject({ resumed: true, sent: 4, dead_lettered: 0, unreadable: [] });
    expect(deadLetters(dead)).toEqual([]);
    expect((await storedLines(join(dir, "t.db"), "grow")).lines).toEqual([1, 2, 3, 4]);
    // One entry for the file, continued where the first run stopped (not a second entry read from line 1).
    const cp = loadCheckpoint(join(dir, "cp.json"))!;
    expect(cp.files).toEqual([expect.objectContaining({ line: 4 })]);
    expect(cp.counts).toMatchObject({ lines: 4, records: 4, sent: 4 });
  });

  it("does not dead-letter an OTLP file's bad line twice when a run is stopped part-way and resumed", async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    cleanup.push(() => context.disable());
    const mem = new InMemorySpanExporter();
    const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(mem)] });
    const tracer = provider.getTracer("app");
    for (let i = 0; i < 600; i++) {
      tracer
        .startSpan("chat gpt-4o-mini", {
          attributes: {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.input.messages": JSON.stringify([{ role: "user", parts: [{ type: "text", content: `q${i}` }] }]),
            "gen_ai.usage.input_tokens": 5,
            "gen_ai.usage.output_tokens": 1,
          },
        })
        .end();
    }
    await provider.forceFlush();
    const lines = mem
      .getFinishedSpans()
      .map((s) => JSON.stringify(JSON.parse(Buffer.from(JsonTraceSerializer.serializeRequest([s])!).toString("utf8"))));
    lines[2] = "{not json";
    const dir = tempDir("tp-bf-otlp-stop-");
    const p = join(dir, "traces.jsonl");
    writeFileSync(p, lines.join("\n") + "\n");
    const client = embedded(dir, "otlp-stop");
    const dead = join(dir, "dead.jsonl");
    const opts = { files: [p], client, project: "otlp-stop", deadLetterPath: dead, checkpointPath: join(dir, "cp.json") };

    // Ctrl-C arrives while the file is being read (the progress display is told every 256 lines).
    const stop = new AbortController();
    const progress: Progress = { update: () => stop.abort(), stop: () => {} };
    const first = await backfill({ ...opts, signal: stop.signal, progress });
    expect(first.interrupted).toBe(true);
    expect(deadLetters(dead)).toHaveLength(1);

    const second = await backfill(opts);
    expect(second).toMatchObject({ interrupted: false, unreadable: [] });
    expect(deadLetters(dead)).toEqual([expect.objectContaining({ line: 3 })]);
    expect(await storedLines(join(dir, "t.db"), "otlp-stop")).toMatchObject({ n: 599, d: 599 });
  });
});
