/**
 * Spans that are started and never ended. The official
 * @opentelemetry/instrumentation-openai ends a streamed call's span only after
 * the stream's last chunk, so a program that stops reading a stream early
 * (`for await (const chunk of stream) { ...; break; }`) leaves its span open
 * for good. The span processor must not hold such spans, with their
 * attributes, for the life of the process.
 */
import { describe, expect, it } from "vitest";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { context, trace, type Span } from "@opentelemetry/api";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { TraceSpanProcessor } from "../../src/otel/index.js";
import { join } from "node:path";
import { Client } from "../../src/ingest/index.js";
import { openStore } from "../../src/store/index.js";
import { tempDir } from "../helpers/runs.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
const turn = () => new Promise((r) => setImmediate(r));

const chat = (i: number) => ({
  "gen_ai.operation.name": "chat",
  "gen_ai.provider.name": "openai",
  "gen_ai.request.model": "gpt-4o-mini",
  "gen_ai.input.messages": JSON.stringify([{ role: "user", parts: [{ type: "text", content: `${i} ${"x".repeat(10_000)}` }] }]),
});

describe("TraceSpanProcessor and spans that never end", () => {
  it("forgets the oldest open spans past maxOpenSpans (their memory is freed), keeps parentage of the rest, and still records a forgotten span that ends late", async () => {
    const dir = tempDir("tp-open-spans-");
    const client = new Client({
      dbPath: join(dir, "t.db"),
      project: "open",
      spoolDir: join(dir, "spool"),
      exitHooks: false,
      warn: () => {},
    });
    const processor = new TraceSpanProcessor({ client, maxOpenSpans: 100, estimateUsage: false });
    const provider = new NodeTracerProvider({ spanProcessors: [processor] });
    const tracer = provider.getTracer("app");
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on("warning", onWarning);
    try {
      // 1000 abandoned streams: each span started, its handle dropped, never ended.
      let first: WeakRef<Span> | undefined;
      let late: Span | undefined;
      (() => {
        for (let i = 0; i < 1000; i++) {
          const span = tracer.startSpan("chat gpt-4o-mini", { attributes: chat(i) });
          if (i === 0) first = new WeakRef(span);
          if (i === 1) late = span;
        }
      })();
      await turn();
      gc();
      await turn();
      expect(first!.deref()).toBeUndefined(); // not held by the processor
      expect(processor.stats.evicted).toBe(900);
      expect(warnings.some((m) => m.includes("maxOpenSpans"))).toBe(true);

      // Spans that do end still get their parentage.
      const agent = tracer.startSpan("agent", { attributes: { "gen_ai.operation.name": "invoke_agent" } });
      const child = tracer.startSpan("chat gpt-4o-mini", { attributes: chat(-1) }, trace.setSpan(context.active(), agent));
      child.end();
      agent.end();
      // The one forgotten span that ends after all: recorded, as a root of its own.
      late!.end();
      await processor.forceFlush();
      const store = await openStore(join(dir, "t.db"));
      const runs = (await store.queryRuns({ project: "open", limit: 100 })).runs;
      await store.close();
      const agentRun = runs.find((r) => r.name === "agent")!;
      const childRun = runs.find((r) => r.parent_run_id === agentRun.id);
      expect(childRun).toMatchObject({ run_type: "llm", trace_id: agentRun.id });
      const lateRun = runs.find((r) => JSON.stringify(r.inputs).includes('"1 xxx'));
      expect(lateRun).toMatchObject({ run_type: "llm", trace_id: lateRun!.id });
      expect(lateRun!.parent_run_id ?? null).toBeNull();
      expect(runs).toHaveLength(3);
    } finally {
      process.off("warning", onWarning);
      await provider.shutdown();
      await client.shutdown();
    }
  });
});
