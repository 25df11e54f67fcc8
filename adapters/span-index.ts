/**
 * Span adapters (OpenTelemetry conventions), in the order the span processor
 * asks them: the most specific first. The Vercel AI SDK also writes a few
 * gen_ai.* attributes, so it goes before the GenAI adapter; OpenInference
 * spans say what they are in openinference.span.kind.
 */
import type { SpanAdapter } from "./spans.js";
import { otelGenAi } from "./otel-genai/index.js";
import { openInference } from "./openinference/index.js";
import { vercelAi } from "./vercel-ai/index.js";

export type { SpanAdapter, SpanLike, SpanResult, SpanEventLike, LogRecordLike, SpanRunType, Attributes, AttrValue } from "./spans.js";
export const ADAPTERS: readonly SpanAdapter[] = [vercelAi, openInference, otelGenAi];
export { otelGenAi, openInference, vercelAi };
