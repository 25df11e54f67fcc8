/** `tracepipe/otel`: OpenTelemetry spans in (a SpanProcessor, or an OTLP exporter to the collector), runs out. */
export { TraceSpanProcessor, toSpanRecord, type TraceSpanProcessorOptions, type SpanFilter } from "./processor.js";
export { TraceLogRecordProcessor, type TraceLogRecordProcessorOptions, type TraceLogRecordProcessorStats } from "./logs.js";
export { traceToRuns, spanToRun, spanRunId, readSpan, type SpanRecord, type FilterMode } from "../otlp/convert.js";
export { createOtlpTraceExporter, resolveOtlpTarget, parseOtlpHeaders, type OtlpTraceExporterOptions } from "./exporter.js";
export { ADAPTERS as SPAN_ADAPTERS, type SpanAdapter, type SpanLike, type SpanResult } from "../../adapters/span-index.js";
export type {
  SpanView,
  SpanProcessorShape,
  LogRecordView,
  LogRecordProcessorShape,
  SpanExporterShape,
  ExportOutcome,
} from "./sdk-shapes.js";
