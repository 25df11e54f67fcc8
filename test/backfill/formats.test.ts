import { afterEach, describe, expect, it } from "vitest";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { backfill } from "../../src/backfill/pipeline.js";
import { Client } from "../../src/ingest/index.js";
import { openStore } from "../../src/store/index.js";
import { ConfigError } from "../../src/errors.js";
import { tempDir } from "../helpers/runs.js";

const jsonl = (rows: unknown[]) => rows.map((r) => (typeof r === "string" ? r : JSON.stringify(r))).join("\n") + "\n";
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

/** Backfill into an embedded store and give back its runs, keyed by custom_id or line. */
async function run(
  files: Record<string, unknown[]>,
  opts: { format?: "auto" | "openai-batch" | "anthropic-batch" | "generic" | "runs"; dryRun?: boolean } = {},
) {
  const dir = tempDir("tp-bf-");
  const paths = Object.entries(files).map(([name, rows]) => {
    const p = join(dir, name);
    writeFileSync(p, jsonl(rows));
    return p;
  });
  const dbPath = join(dir, "traces.db");
  const client = new Client({ dbPath, spoolDir: join(dir, "spool"), project: "bf", exitHooks: false, warn: () => {} });
  cleanup.push(async () => void (await client.shutdown()));
  const deadLetterPath = join(dir, "dead.jsonl");
  const result = await backfill({
    files: paths,
    client: opts.dryRun ? undefined : client,
    dryRun: opts.dryRun,
    deadLetterPath,
    format: opts.format,
    project: "bf",
  });
  await client.flush();
  const store = await openStore(dbPath);
  const runs = (await store.queryRuns({ project: "bf", limit: 1000 })).runs;
  store.close();
  const byKey = new Map(runs.map((r) => [(r.extra as any)?.metadata?.backfill?.key as string, r as any]));
  let dead: any[] = [];
  try {
    dead = readFileSync(deadLetterPath, "utf8")
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  } catch {
    /* none */
  }
  return { result, runs, byKey, dead, paths };
}

const openaiInput = (id: string, content: string) => ({
  custom_id: id,
  method: "POST",
  url: "/v1/chat/completions",
  body: { model: "gpt-4o-mini", max_tokens: 50, messages: [{ role: "user", content }] },
});
const openaiOutput = (id: string, text: string) => ({
  id: `batch_req_${id}`,
  custom_id: id,
  response: {
    status_code: 200,
    request_id: `req_${id}`,
    body: {
      id: `chatcmpl-${id}`,
      object: "chat.completion",
      created: 1763800000,
      model: "gpt-4o-mini-2024-07-18",
      choices: [{ index: 0, message: { role: "assistant", content: text, refusal: null }, finish_reason: "stop", logprobs: null }],
      usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 },
    },
  },
  error: null,
});

describe("backfill formats", () => {
  it("joins OpenAI Batch output to input by custom_id, and records failed requests as error runs", async () => {
    const { result, byKey, dead } = await run({
      "batch_output.jsonl": [
        openaiOutput("r2", "Two."),
        openaiOutput("r1", "One."),
        {
          id: "batch_req_r3",
          custom_id: "r3",
          response: {
            status_code: 400,
            request_id: "req_r3",
            body: { error: { type: "invalid_request_error", message: "max_tokens is too large" } },
          },
          error: null,
        },
        {
          id: "batch_req_r4",
          custom_id: "r4",
          response: null,
          error: { code: "batch_expired", message: "This request could not be executed before the completion window expired." },
        },
      ],
      "batch_input.jsonl": [
        openaiInput("r1", "Say one"),
        openaiInput("r2", "Say two"),
        openaiInput("r3", "Say three"),
        openaiInput("r4", "Say four"),
      ],
    });
    expect(dead).toEqual([]);
    expect(result).toMatchObject({ records: 4, sent: 4, errored_calls: 2, dead_lettered: 0 });
    const r1 = byKey.get("custom_id:r1");
    expect(r1.inputs.messages).toEqual([{ role: "user", content: [{ type: "text", text: "Say one" }] }]);
    expect(r1.outputs.messages[0]).toMatchObject({
      role: "assistant",
      content: [{ type: "text", text: "One." }],
      usage_metadata: { input_tokens: 9, output_tokens: 3, total_tokens: 12 },
    });
    expect(r1.extra.metadata).toMatchObject({
      trace_provider: "openai",
      trace_model_name: "gpt-4o-mini-2024-07-18",
      invocation_params: { max_tokens: 50 },
      custom_id: "r1",
      request_id: "req_r1",
    });
    expect(r1.start_time).toBe("2025-11-22T08:26:40.000000Z");
    expect(byKey.get("custom_id:r3")).toMatchObject({
      error: "HTTP 400: invalid_request_error: max_tokens is too large",
      inputs: { messages: [{ role: "user", content: [{ type: "text", text: "Say three" }] }] },
    });
    expect(byKey.get("custom_id:r4").error).toBe("batch_expired: This request could not be executed before the completion window expired.");
  });

  it("reads Anthropic Message Batches results of every type, joined with the requests", async () => {
    const msg = (text: string) => ({
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5-20250929",
      content: [{ type: "text", text }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 4, cache_read_input_tokens: 5 },
    });
    const { result, byKey, dead } = await run({
      "results.jsonl": [
        { custom_id: "a", result: { type: "succeeded", message: msg("Hello!") } },
        {
          custom_id: "b",
          result: { type: "errored", error: { type: "error", error: { type: "invalid_request_error", message: "bad prompt" } } },
        },
        { custom_id: "c", result: { type: "canceled" } },
        { custom_id: "d", result: { type: "expired" } },
        { custom_id: "e", result: { type: "exploded" } },
      ],
      "requests.jsonl": ["a", "b", "c", "d", "e"].map((id) => ({
        custom_id: id,
        params: { model: "claude-sonnet-4-5", max_tokens: 100, system: "Be kind.", messages: [{ role: "user", content: `Hi ${id}` }] },
      })),
    });
    expect(result).toMatchObject({ records: 5, sent: 4, dead_lettered: 1, errored_calls: 3 });
    const a = byKey.get("custom_id:a");
    expect(a.inputs.messages[0]).toEqual({ role: "system", content: [{ type: "text", text: "Be kind." }] });
    // Priced as claude-sonnet-4-5: 10 uncached at $3, 5 cache hits at $0.30, 4 out at $15 per million.
    expect(a.outputs.messages[0].usage_metadata).toEqual({
      input_tokens: 15,
      output_tokens: 4,
      total_tokens: 19,
      input_token_details: { cache_read: 5 },
      input_cost: 0.0000315,
      output_cost: 0.00006,
      total_cost: 0.0000915,
      input_cost_details: { cache_read: 0.0000015 },
    });
    expect(a.extra.metadata).toMatchObject({ trace_provider: "anthropic", result_type: "succeeded" });
    expect(byKey.get("custom_id:b").error).toBe("errored: invalid_request_error: bad prompt");
    expect(byKey.get("custom_id:c").error).toBe("canceled");
    expect(byKey.get("custom_id:d").error).toBe("expired");
    expect(dead[0]).toMatchObject({ line: 5, errors: [{ loc: ["result", "type"], type: "enum" }] });
  });

  it("turns generic logs into runs with TTFT, estimated usage when none was logged, and the vendor detected per line", async () => {
    const start = "2026-03-01T12:00:00.000Z";
    const { byKey, result } = await run({
      "app.log.jsonl": [
        {
          request: { model: "gpt-4o", messages: [{ role: "user", content: "ping" }] },
          response: {
            id: "x",
            object: "chat.completion",
            created: 1,
            model: "gpt-4o-2024-08-06",
            choices: [{ index: 0, message: { role: "assistant", content: "pong" }, finish_reason: "stop" }],
          },
          start_time: start,
          end_time: "2026-03-01T12:00:01.500Z",
          time_to_first_token_ms: 250,
          tags: ["prod"],
          metadata: { user: "u1" },
        },
        {
          request: { model: "claude-haiku-4-5", max_tokens: 10, messages: [{ role: "user", content: "ping" }] },
          response: {
            id: "m",
            type: "message",
            role: "assistant",
            model: "claude-haiku-4-5",
            content: [{ type: "text", text: "pong" }],
            stop_reason: "end_turn",
            usage: { input_tokens: 3, output_tokens: 1 },
          },
          start_time: 1772366400,
          first_token_time: 1772366400.2,
        },
        "",
        { request: { model: "mystery", prompt: "no messages here" } },
      ],
    });
    expect(result).toMatchObject({ lines: 4, records: 3, sent: 2, dead_lettered: 1, estimated_usage: 1 });
    const r1 = byKey.get("line:1");
    expect(r1).toMatchObject({
      name: "ChatOpenAI",
      start_time: "2026-03-01T12:00:00.000000Z",
      end_time: "2026-03-01T12:00:01.500000Z",
      first_token_time: "2026-03-01T12:00:00.250000Z",
      tags: ["prod"],
    });
    expect(r1.outputs.messages[0].usage_metadata).toMatchObject({ estimated: true, output_tokens: 1 });
    expect(r1.extra.metadata).toMatchObject({ user: "u1", trace_provider: "openai", trace_model_name: "gpt-4o-2024-08-06" });
    const r2 = byKey.get("line:2");
    expect(r2).toMatchObject({
      name: "ChatAnthropic",
      start_time: "2026-03-01T12:00:00.000000Z",
      first_token_time: "2026-03-01T12:00:00.200000Z",
    });
  });

  it("splits files between shards by line: each record once, every shard joins against all requests, a bad request line reported once", async () => {
    const dir = tempDir("tp-bf-shard-");
    const input = join(dir, "batch_input.jsonl");
    const output = join(dir, "batch_output.jsonl");
    const ids = ["s1", "s2", "s3", "s4", "s5", "s6", "s7"];
    writeFileSync(input, jsonl([...ids.map((id) => openaiInput(id, `Say ${id}`)), "{broken request"]));
    writeFileSync(output, jsonl([...ids].reverse().map((id) => openaiOutput(id, `${id}!`))));
    const dbPath = join(dir, "traces.db");
    const dead: unknown[] = [];
    let skipped = 0;
    for (let index = 0; index < 3; index++) {
      const client = new Client({ dbPath, spoolDir: join(dir, `spool${index}`), exitHooks: false, warn: () => {} });
      const deadLetterPath = join(dir, `dead${index}.jsonl`);
      const r = await backfill({ files: [output, input], client, project: "shards", shard: { index, count: 3 }, deadLetterPath });
      await client.shutdown();
      skipped += r.skipped_other_shards;
      dead.push(
        ...readFileSync(deadLetterPath, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l)),
      );
    }
    expect(skipped).toBe(2 * ids.length);
    expect(dead).toEqual([expect.objectContaining({ file: input, line: 8 })]);
    const store = await openStore(dbPath);
    const runs = (await store.queryRuns({ project: "shards", limit: 100 })).runs as any[];
    store.close();
    expect(runs.map((r) => r.extra.metadata.custom_id).sort()).toEqual(ids);
    for (const r of runs) expect(r.inputs.messages[0].content[0].text).toBe(`Say ${r.extra.metadata.custom_id}`);
  });

  it("passes native run records through and dead-letters the invalid ones with the field named", async () => {
    const id = "0196a1b2-0000-7000-8000-000000000001";
    const { result, runs, dead } = await run({
      "runs.jsonl": [
        {
          id,
          trace_id: id,
          dotted_order: `20260301T120000000000Z${id}`,
          name: "old",
          run_type: "chain",
          start_time: "2026-03-01T12:00:00Z",
          inputs: { q: 1 },
        },
        { id: "not-a-uuid", trace_id: id, dotted_order: "x", name: "bad", run_type: "chain", start_time: "2026-03-01T12:00:00Z" },
      ],
    });
    expect(result).toMatchObject({ sent: 1, dead_lettered: 1 });
    expect(runs.map((r) => r.id)).toEqual([id]);
    expect(dead[0].errors[0].loc).toEqual(["id"]);
  });

  it("gives the same ids on a second run of the same file, so nothing is duplicated", async () => {
    const dir = tempDir("tp-bf-");
    const p = join(dir, "twice.jsonl");
    writeFileSync(p, jsonl([openaiOutput("x", "X."), openaiOutput("y", "Y.")]));
    const dbPath = join(dir, "traces.db");
    for (let i = 0; i < 2; i++) {
      const client = new Client({ dbPath, spoolDir: join(dir, "spool"), exitHooks: false, warn: () => {} });
      await backfill({ files: [p], client, deadLetterPath: join(dir, "dead.jsonl"), project: "twice" });
      await client.shutdown();
    }
    const store = await openStore(dbPath);
    expect(await store.countRuns("twice")).toBe(2);
    store.close();
  });

  it("refuses an undetectable file up front with the file named, and sends nothing in a dry run", async () => {
    const dir = tempDir("tp-bf-");
    const p = join(dir, "weird.jsonl");
    writeFileSync(p, jsonl([{ hello: "world" }]));
    const client = new Client({ dbPath: join(dir, "t.db"), spoolDir: join(dir, "spool"), exitHooks: false, warn: () => {} });
    cleanup.push(async () => void (await client.shutdown()));
    await expect(backfill({ files: [p], client, deadLetterPath: join(dir, "d.jsonl") })).rejects.toThrow(ConfigError);
    await expect(backfill({ files: [p], client, deadLetterPath: join(dir, "d.jsonl") })).rejects.toMatchObject({
      issues: [{ loc: ["files", 0], type: "unknown_format" }],
    });
    const dry = await run({ "a.jsonl": [openaiOutput("q", "Q.")] }, { dryRun: true });
    expect(dry.result).toMatchObject({ sent: 1, dry_run: true, delivered: 0 });
    expect(dry.runs).toEqual([]);
  });
});
