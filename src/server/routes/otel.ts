/**
 * POST /otel/v1/traces (OTLP/HTTP, JSON or protobuf). Spans are stored as they
 * came, attributes intact, in `otel_spans`; the answer is OTLP's
 * ExportTraceServiceResponse.
 *
 * Spans also become runs, with the same span adapters and conversion as the
 * client's TraceSpanProcessor (src/otel/convert.ts): once a trace's root span
 * has arrived (roots end last, so the rest of a process's trace is in by
 * then), the whole stored trace is converted and ingested. Run ids are stable
 * functions of the spans, so a span that arrives after its root converts the
 * trace again and upserts the same runs. Traces whose root never reaches this
 * collector (a remote parent) keep their spans stored but make no runs.
 */
import type { Route } from "../http.js";
import type { SqliteRunStore } from "../../store/index.js";
import { decodeOtlp } from "../otlp.js";
import { traceToRuns } from "../../otel/convert.js";
import { parseJson, plainToSpanRecord, PROJECT_HEADER } from "../../otel/otlp-json.js";

export function otelRoutes(store: SqliteRunStore, maxJsonDepth = Infinity): Route[] {
  return [
    {
      method: "POST",
      path: "/otel/v1/traces",
      handler: async (ctx) => {
        const spans = await decodeOtlp(await ctx.body(), String(ctx.headers["content-type"] ?? ""), maxJsonDepth);
        // The project an exporter names (createOtlpTraceExporter's `project`) travels with the spans.
        const header = ctx.headers[PROJECT_HEADER];
        const project = typeof header === "string" && header ? header : undefined;
        if (project) {
          for (const s of spans) s.resource = JSON.stringify({ ...(JSON.parse(s.resource) as Record<string, unknown>), "tracepipe.project": project });
        }
        store.storeSpans(spans as unknown as Record<string, unknown>[]);
        for (const traceId of new Set(spans.map((s) => s.trace_id))) {
          if (!store.hasRootSpan(traceId)) continue;
          const rows = store.spansOfTrace(traceId);
          const root = rows.find((r) => !r.parent_span_id);
          const traceProject = project ?? parseJson<Record<string, unknown>>(root?.resource, {})["tracepipe.project"];
          const runs = traceToRuns(rows.map(plainToSpanRecord), { project: typeof traceProject === "string" ? traceProject : undefined });
          if (runs.length) await store.ingest({ post: runs });
        }
        return { status: 200, body: { partialSuccess: {} } };
      },
    },
  ];
}
