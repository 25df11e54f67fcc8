export { TraceSpanProcessor, type TraceSpanProcessorOptions, type SpanFilter } from "./processor.js";
export { createOtlpTraceExporter, resolveOtlpTarget, parseOtlpHeaders, type OtlpTraceExporterOptions } from "./exporter.js";
