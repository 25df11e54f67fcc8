/** Span adapters (OpenTelemetry conventions), in the order the span processor asks them. */
import type { SpanAdapter } from "./spans.js";
import { otelGenAi } from "./otel-genai/index.js";

export type { SpanAdapter, SpanLike, SpanResult, SpanEventLike, SpanRunType, Attributes, AttrValue } from "./spans.js";
export const ADAPTERS: readonly SpanAdapter[] = [otelGenAi];
export { otelGenAi };
