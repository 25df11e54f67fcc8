export { TraceSpanProcessor, toSpanRecord, type TraceSpanProcessorOptions, type SpanFilter } from "./processor.js";
export { traceToRuns, spanToRun, spanRunId, readSpan, type SpanRecord, type FilterMode } from "./convert.js";
export { createOtlpTraceExporter, resolveOtlpTarget, parseOtlpHeaders, type OtlpTraceExporterOptions } from "./exporter.js";
