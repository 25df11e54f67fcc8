/**
 * POST /otel/v1/traces (OTLP/HTTP, JSON or protobuf). Until the OTel span
 * adapter lands, spans are stored as they came, attributes intact, in
 * `otel_spans`; the answer is OTLP's ExportTraceServiceResponse.
 */
import type { Route } from "../http.js";
import type { SqliteRunStore } from "../store/index.js";
import { decodeOtlp } from "../otlp.js";

export function otelRoutes(store: SqliteRunStore): Route[] {
  return [
    {
      method: "POST",
      path: "/otel/v1/traces",
      handler: async (ctx) => {
        const spans = decodeOtlp(await ctx.body(), String(ctx.headers["content-type"] ?? ""));
        // The project an exporter names (createOtlpTraceExporter's `project`) travels with the spans.
        const project = ctx.headers["x-tracepipe-project"];
        if (typeof project === "string" && project) {
          for (const s of spans) s.resource = JSON.stringify({ ...(JSON.parse(s.resource) as Record<string, unknown>), "tracepipe.project": project });
        }
        store.storeSpans(spans as unknown as Record<string, unknown>[]);
        return { status: 200, body: { partialSuccess: {} } };
      },
    },
  ];
}
