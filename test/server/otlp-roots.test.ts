/**
 * Which OTLP traces become runs when: a root span, a span whose parent the
 * exporter flagged remote, or, for a trace that has neither, a quiet time
 * after its last span (remote parents from exporters that do not flag them,
 * or a process that died before its root ended). Real collector, real SQLite
 * file, OTLP JSON as exporters send it and protobuf from the OTel serializer.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { join } from "node:path";
import Database from "better-sqlite3";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { ROOT_CONTEXT, trace, TraceFlags } from "@opentelemetry/api";
import { startCollector, startServeProcess, type Running, sql } from "../helpers/collector.js";
import { tempDir } from "../helpers/runs.js";
import { SqliteStore } from "../../src/store/sqlite/index.js";
import { MIGRATIONS } from "../../src/store/sqlite/migrations.js";
import { parentRemote } from "../../src/otlp/plain.js";
import { RootlessSweep } from "../../src/otlp/sweep.js";

const running: Running[] = [];
afterEach(async () => {
  vi.useRealTimers();
  while (running.length) await running.pop()!.close();
});

/**
 * The quiet time is measured by the clock the store stamps spans with and the sweep reads:
 * frozen here (timers run as usual), so a trace is quiet when the test moves the clock past it,
 * not when a busy machine happens to take that long between two steps.
 */
function freezeClock(): { pass(ms: number): void } {
  vi.useFakeTimers({ toFake: ["Date"] });
  return { pass: (ms) => vi.setSystemTime(Date.now() + ms) };
}
async function collector(opts: Parameters<typeof startCollector>[0] = {}): Promise<Running> {
  const c = await startCollector(opts);
  running.push(c);
  return c;
}

const TRACE = "5b8efff798038103d269b633813fc60c";
const NOW = BigInt(Date.now()) * 1_000_000n;
let next = 0;
/** An OTLP JSON span; `flags` as exporters write it (bits 8 and 9: the parent's remoteness). */
function span(name: string, o: { traceId?: string; parent?: string; flags?: number; chat?: boolean } = {}) {
  const spanId = (++next).toString(16).padStart(16, "0");
  const attributes = o.chat
    ? [
        { key: "gen_ai.operation.name", value: { stringValue: "chat" } },
        { key: "gen_ai.provider.name", value: { stringValue: "openai" } },
        { key: "gen_ai.request.model", value: { stringValue: "gpt-4o" } },
        {
          key: "gen_ai.input.messages",
          value: { stringValue: JSON.stringify([{ role: "user", parts: [{ type: "text", content: `question ${name}` }] }]) },
        },
        { key: "gen_ai.usage.input_tokens", value: { intValue: 3 } },
      ]
    : [{ key: "gen_ai.operation.name", value: { stringValue: "invoke_agent" } }];
  return {
    traceId: o.traceId ?? TRACE,
    spanId,
    ...(o.parent ? { parentSpanId: o.parent } : {}),
    ...(o.flags !== undefined ? { flags: o.flags } : {}),
    name,
    kind: 1,
    startTimeUnixNano: String(NOW + BigInt(next) * 1000n),
    endTimeUnixNano: String(NOW + BigInt(next) * 1000n + 500n),
    attributes,
  };
}
async function post(c: Running, spans: object[], project = "roots") {
  const body = JSON.stringify({ resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ scope: { name: "test" }, spans }] }] });
  const res = await fetch(c.url + "/otel/v1/traces", {
    method: "POST",
    headers: { "content-type": "application/json", "x-tracepipe-project": project },
    body,
  });
  expect(res.status).toBe(200);
}
/** A span row as the store keeps it (toPlain's shape), for filling a store directly. */
const CHAT_ATTRS = JSON.stringify({ "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o" });
function storedSpan(o: { trace_id: string; span_id: string; parent_span_id: string | null; name: string; attributes?: string }) {
  return {
    parent_remote: null,
    kind: 1,
    start_time: "2026-11-01T10:00:00.000000Z",
    end_time: "2026-11-01T10:00:01.000000Z",
    resource: "{}",
    scope: "{}",
    attributes: "{}",
    events: "[]",
    links: "[]",
    status: '{"code":0}',
    ...o,
  };
}
/** The runs of a project (of every project with `null`: spans posted without one). */
const runs = async (c: Running, project: string | null = "roots") =>
  (await c.collector.store.queryRuns(project === null ? {} : { project })).runs;
const waiting = (c: Running) =>
  (sql(c.collector.store).prepare("SELECT trace_id FROM otel_rootless ORDER BY trace_id").all() as { trace_id: string }[]).map(
    (r) => r.trace_id,
  );
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("OTLP span flags: the parent's remoteness", () => {
  it("reads bit 9 only where bit 8 says it is set, and only for a span with a parent", () => {
    expect(parentRemote("ab", 0x301)).toBe(1);
    expect(parentRemote("ab", 0x101)).toBe(0);
    expect(parentRemote("ab", 0x201)).toBeNull(); // bit 9 without bit 8: not said
    expect(parentRemote("ab", undefined)).toBeNull();
    expect(parentRemote("ab", "769")).toBe(1); // digits in a string, as some encoders write numbers
    expect(parentRemote("ab", "0x300")).toBeNull();
    expect(parentRemote("ab", 0x300 + 0.5)).toBeNull();
    expect(parentRemote(null, 0x300)).toBeNull();
  });

  it("keeps them from protobuf as the OTel serializer writes them", async () => {
    const c = await collector();
    const memory = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
    const tracer = provider.getTracer("proto");
    const caller = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: "0af7651916cd43dd8448eb211c80319c",
      spanId: "b7ad6b7169203331",
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
    });
    const server = tracer.startSpan("POST /chat", {}, caller);
    tracer
      .startSpan(
        "chat gpt-4o",
        { attributes: { "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o" } },
        trace.setSpan(caller, server),
      )
      .end();
    server.end();
    const res = await fetch(c.url + "/otel/v1/traces", {
      method: "POST",
      headers: { "content-type": "application/x-protobuf" },
      body: ProtobufTraceSerializer.serializeRequest(memory.getFinishedSpans())!,
    });
    expect(res.status).toBe(200);
    const rows = sql(c.collector.store)
      .prepare("SELECT name, parent_remote FROM otel_spans WHERE trace_id = ? ORDER BY name")
      .all("0af7651916cd43dd8448eb211c80319c");
    expect(rows).toEqual([
      { name: "POST /chat", parent_remote: 1 },
      { name: "chat gpt-4o", parent_remote: 0 },
    ]);
    // The server span is the root of this process's part: its chat span is a run at once.
    expect((await runs(c, null)).map((r) => r.name)).toContain("chat gpt-4o");
  });
});

describe("a trace without a root span", () => {
  it("waits while its parent is local (flagged) or not said, and becomes runs at once when the parent is flagged remote", async () => {
    const c = await collector();
    await post(c, [span("local-parent", { traceId: "1".repeat(32), parent: "00000000000000aa", flags: 0x101, chat: true })]);
    await post(c, [span("not-said", { traceId: "2".repeat(32), parent: "00000000000000bb", chat: true })]);
    await post(c, [span("remote-parent", { traceId: "3".repeat(32), parent: "00000000000000cc", flags: 0x301, chat: true })]);
    expect((await runs(c)).map((r) => r.name)).toEqual(["remote-parent"]);
    expect(waiting(c)).toEqual(["1".repeat(32), "2".repeat(32)]);
    // The default quiet time is 30 s: a sweep now converts nothing.
    await c.collector.sweepRootless();
    expect(await runs(c)).toHaveLength(1);
  });

  it("is converted as it is once quiet, and its runs move under the root when the root comes", async () => {
    const clock = freezeClock();
    const c = await collector({ rootlessAfterMs: 150 });
    const agent = span("agent");
    const chat = span("chat gpt-4o", { parent: agent.spanId, chat: true });
    await post(c, [chat]);
    expect(await runs(c)).toHaveLength(0);
    expect(waiting(c)).toEqual([TRACE]);
    clock.pass(200);
    await c.collector.sweepRootless();
    const early = await runs(c);
    expect(early.map((r) => r.name)).toEqual(["chat gpt-4o"]);
    expect(early[0]!.parent_run_id ?? null).toBeNull();
    expect(early[0]!.trace_id).toBe(early[0]!.id);
    expect(waiting(c)).toEqual([]);

    // The root arrives late (a long agent, a slow exporter): the same run, now under it.
    await post(c, [agent]);
    const late = await runs(c);
    expect(late.map((r) => r.name).sort()).toEqual(["agent", "chat gpt-4o"]);
    const root = late.find((r) => r.name === "agent")!;
    const child = late.find((r) => r.name === "chat gpt-4o")!;
    expect(child.id).toBe(early[0]!.id);
    expect(child.parent_run_id).toBe(root.id);
    expect(child.trace_id).toBe(root.id);
    expect(child.dotted_order.startsWith(root.dotted_order + ".")).toBe(true);
    expect(waiting(c)).toEqual([]);
  });

  it("a span arriving after a sweep puts the trace back to wait, and the next quiet sweep converts it with that span", async () => {
    const clock = freezeClock();
    const c = await collector({ rootlessAfterMs: 100 });
    const a = span("first", { parent: "00000000000000dd", chat: true });
    await post(c, [a]);
    clock.pass(150);
    await c.collector.sweepRootless();
    expect((await runs(c)).map((r) => r.name)).toEqual(["first"]);
    await post(c, [span("second", { parent: "00000000000000dd", chat: true })]);
    expect(waiting(c)).toEqual([TRACE]);
    await c.collector.sweepRootless(); // not quiet yet
    expect(await runs(c)).toHaveLength(1);
    clock.pass(150);
    await c.collector.sweepRootless();
    expect((await runs(c)).map((r) => r.name).sort()).toEqual(["first", "second"]);
  });

  it("a span stored while its trace is being converted keeps the trace waiting", async () => {
    const store = new SqliteStore(join(tempDir("tp-rootless-race-"), "traces.db"));
    try {
      const row = (id: string) => storedSpan({ trace_id: "5".repeat(32), span_id: id, parent_span_id: "00000000000000ab", name: id });
      await store.storeSpans([row("0000000000000001")]);
      const quietSince = new Date(Date.now() + 1).toISOString();
      expect(await store.quietRootlessTraces(quietSince, 10)).toEqual(["5".repeat(32)]);
      // The sweep has read the trace; before it is done, another span of it comes.
      const later = Date.now() + 5;
      while (Date.now() <= later) {
        /* let the clock pass quietSince */
      }
      await store.storeSpans([row("0000000000000002")]);
      await store.forgetRootless("5".repeat(32), quietSince);
      expect(await store.quietRootlessTraces(new Date(Date.now() + 1).toISOString(), 10)).toEqual(["5".repeat(32)]);
    } finally {
      store.close();
    }
  });

  it("a store that fails under the sweep is a warning, never a rejection in a timer", async () => {
    const store = new SqliteStore(join(tempDir("tp-rootless-fail-"), "traces.db"));
    const warnings: string[] = [];
    const sweep = new RootlessSweep(store, 1, (m) => warnings.push(m));
    store.close();
    await expect(sweep.sweep()).resolves.toBeUndefined();
    await sweep.stop();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/sweep of OTLP traces without a root failed: .*not open/);
  });

  it("a backlog is converted whole, in slices that let the event loop run", async () => {
    const c = await collector({ rootlessAfterMs: 1 });
    const n = 600;
    const rows = Array.from({ length: n }, (_, i) => {
      const hex = (i + 1).toString(16).padStart(16, "0");
      return storedSpan({
        trace_id: hex.padStart(32, "9"),
        span_id: hex,
        parent_span_id: "00000000000000ad",
        name: `backlog ${i}`,
        attributes: CHAT_ATTRS,
      });
    });
    await c.collector.store.storeSpans(rows);
    await sleep(5);
    // Turns of the event loop taken while the sweep runs: none if it converted all in one go.
    let turns = 0;
    let ticking = true;
    const tick = () => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    await c.collector.sweepRootless();
    ticking = false;
    expect(await c.collector.store.countRuns()).toBe(n);
    expect(waiting(c)).toEqual([]);
    expect(turns).toBeGreaterThan(1);
  });

  it("converts on its own, without being asked, and over a restart", async () => {
    const dir = tempDir("tp-rootless-");
    const db = join(dir, "traces.db");
    const first = await startCollector({ db, rootlessAfterMs: 60_000 });
    await post(first, [span("before restart", { traceId: "4".repeat(32), parent: "00000000000000ee", chat: true })]);
    await first.close();
    // The next collector on the same file, with a quiet time that has passed: its own timer converts it.
    const second = await collector({ db, rootlessAfterMs: 100 });
    const deadline = Date.now() + 5000;
    while ((await runs(second)).length === 0 && Date.now() < deadline) await sleep(25);
    expect((await runs(second)).map((r) => r.name)).toEqual(["before restart"]);
  });

  it("is never converted with rootlessAfterMs 0", async () => {
    const c = await collector({ rootlessAfterMs: 0 });
    await post(c, [span("orphan", { parent: "00000000000000ff", chat: true })]);
    await sleep(50);
    await c.collector.sweepRootless();
    expect(await runs(c)).toHaveLength(0);
    expect(waiting(c)).toEqual([TRACE]);
  });

  it("stored before the store knew of remote parents: the upgrade queues it, so it is converted at last", async () => {
    const path = join(tempDir("tp-rootless-upgrade-"), "traces.db");
    const old = new SqliteStore(path);
    await old.storeSpans([
      storedSpan({
        trace_id: "6".repeat(32),
        span_id: "0000000000000001",
        parent_span_id: "00000000000000aa",
        name: "orphan",
        attributes: CHAT_ATTRS,
      }),
      storedSpan({ trace_id: "7".repeat(32), span_id: "0000000000000002", parent_span_id: null, name: "rooted" }),
    ]);
    old.close();
    // Back to schema 5, as the previous release left the file.
    const raw = new Database(path);
    raw.exec("DROP TABLE otel_rootless; ALTER TABLE otel_spans DROP COLUMN parent_remote; DROP TABLE otel_logs");
    // Migration 14's start-time indexes as migrations 1 and 3 made them, the run id last.
    raw.exec(
      "DROP INDEX runs_start; DROP INDEX runs_project_start; DROP INDEX runs_roots_start; DROP INDEX runs_roots_project_start;" +
        " CREATE INDEX runs_start ON runs (start_time, id); CREATE INDEX runs_project_start ON runs (session_name, start_time, id);" +
        " CREATE INDEX runs_roots_start ON runs (start_time, id) WHERE parent_run_id IS NULL;" +
        " CREATE INDEX runs_roots_project_start ON runs (session_name, start_time, id) WHERE parent_run_id IS NULL",
    );
    raw.exec("DROP INDEX runs_llm_project_start");
    raw.exec("DROP TABLE feedback; DROP INDEX runs_threads");
    raw.exec("DROP TABLE monitor_rollups; DROP TABLE threads; DROP TABLE webhook_outbox");
    raw.prepare("DELETE FROM schema_migrations WHERE version >= 6").run();
    raw.close();

    const c = await collector({ db: path, rootlessAfterMs: 1 });
    expect(waiting(c)).toEqual(["6".repeat(32)]);
    const versions = (
      sql(c.collector.store).prepare("SELECT version FROM schema_migrations ORDER BY version").all() as { version: number }[]
    ).map((r) => r.version);
    expect(versions).toEqual(MIGRATIONS.map((m) => m.version));
    await c.collector.sweepRootless();
    expect((await runs(c, null)).map((r) => r.name)).toEqual(["orphan"]);
  });

  it("tracepipe serve --rootless-after sets the quiet time", async () => {
    // A process of its own, whose clock the test cannot move: a quiet time long enough that the trace
    // still waits when the test looks right after sending it, however busy the machine, and a wait for
    // the conversion that ends well before the default quiet time (30 s) would have converted it.
    const serve = await startServeProcess(["--no-rate-limit", "--rootless-after", "2000"]);
    try {
      await post(
        { url: serve.url } as Running,
        [span("via serve", { traceId: "8".repeat(32), parent: "00000000000000ac", chat: true })],
        "serve-roots",
      );
      expect(serve.count("serve-roots").n).toBe(0);
      const deadline = Date.now() + 20_000;
      while (serve.count("serve-roots").n === 0 && Date.now() < deadline) await sleep(50);
      expect(serve.count("serve-roots").n).toBe(1);
    } finally {
      await serve.close();
    }
  });
});
