// Route only the LLM spans of an OpenTelemetry setup to tracepipe; everything
// else keeps going to the exporter you already have.
//
//   npm install && node examples/otel/route-llm-spans.mjs
//
// Runs offline: the spans below stand in for what instrumentations emit (an
// HTTP server span, a database span, and LLM spans in the OTel GenAI
// conventions, two of them for the same call), and with no TRACEPIPE_ENDPOINT
// set the runs go to the embedded store (.tracepipe/traces.db, or TRACEPIPE_DB).
import { NodeTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-node";
import { Client } from "tracepipe";
import { TraceSpanProcessor } from "tracepipe/otel";
import { openStore } from "tracepipe/server";

// 1. Your existing pipeline: here a stand-in exporter that prints what it gets,
//    behind a processor that passes on everything but LLM spans.
const elsewhere = {
  export(spans, done) {
    for (const s of spans) console.log(`  elsewhere <- ${s.name}`);
    done({ code: 0 });
  },
  shutdown: async () => {},
};
const isLlmSpan = (span) => span.attributes["gen_ai.operation.name"] !== undefined || span.attributes["openinference.span.kind"] === "LLM";
class AllButLlm {
  constructor(inner) {
    this.inner = inner;
  }
  onStart(span, ctx) {
    this.inner.onStart(span, ctx);
  }
  onEnd(span) {
    if (!isLlmSpan(span)) this.inner.onEnd(span);
  }
  forceFlush() {
    return this.inner.forceFlush();
  }
  shutdown() {
    return this.inner.shutdown();
  }
}

// 2. tracepipe sees every span but keeps only LLM calls (the default filter, "genai",
//    would also keep tool, agent and embedding spans; "all" keeps everything).
//
//    Two instrumentations on the same client (say OpenLLMetry's and OpenInference's)
//    produce two LLM spans per call. Keep one of them by instrumentation scope:
const DUPLICATE_SCOPE = "duplicate-instrumentation";
const client = new Client({ project: "otel-example" });
const tracepipe = new TraceSpanProcessor({
  client,
  filter: (span, result) => result?.run_type === "llm" && span.instrumentationScope.name !== DUPLICATE_SCOPE,
});

// 3. Indexed conventions (gen_ai.prompt.{i}.*, llm.input_messages.{i}.*) spend several
//    attributes per message, and the SDK keeps 128 per span by default: a long
//    conversation is cut off (tracepipe marks such runs with otel.dropped_attributes).
//    Raise the limit here, or with OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT=1024.
const provider = new NodeTracerProvider({
  spanLimits: { attributeCountLimit: 1024 },
  spanProcessors: [new AllButLlm(new SimpleSpanProcessor(elsewhere)), tracepipe],
});

const app = provider.getTracer("app");
const genai = (tracer, turns) => {
  const attrs = { "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o-mini" };
  attrs["gen_ai.input.messages"] = JSON.stringify(
    Array.from({ length: turns }, (_, i) => ({ role: "user", parts: [{ type: "text", content: `question ${i}` }] })),
  );
  attrs["gen_ai.output.messages"] = JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: "an answer" }] }]);
  attrs["gen_ai.usage.input_tokens"] = 10 * turns;
  attrs["gen_ai.usage.output_tokens"] = 3;
  tracer.startSpan(`chat gpt-4o-mini`, { attributes: attrs }).end();
};

console.log("spans:");
app.startActiveSpan("POST /ask", { attributes: { "http.request.method": "POST" } }, (http) => {
  app.startSpan("SELECT users", { attributes: { "db.system": "postgresql" } }).end();
  genai(provider.getTracer("openllmetry-like"), 3);
  genai(provider.getTracer(DUPLICATE_SCOPE), 3); // the same call, seen twice
  http.end();
});
await provider.forceFlush();
await provider.shutdown();
await client.shutdown();

const store = await openStore(process.env.TRACEPIPE_DB || ".tracepipe/traces.db");
const { runs } = await store.queryRuns({ project: "otel-example" });
console.log(`tracepipe stored ${runs.length} run(s) in project otel-example:`);
for (const r of runs.slice(-1))
  console.log(
    `  ${r.run_type} ${r.name}: ${r.inputs.messages.length} input messages, usage ${JSON.stringify(r.outputs.messages[0].usage_metadata)}`,
  );
await store.close();
