/** tracepipe: capture, normalize and deliver LLM traces. */
// Normalize
export { normalize, detectFormat, type NormalizeOptions } from "./normalize.js";
export { validate, type ValidateOptions } from "./format/validate.js";
export * as format from "./format/index.js";
export type { Message, ContentBlock, UsageMetadata, Role } from "./format/schema.js";
export { nativeMessagesJsonSchema } from "./format/json-schema.js";
export { ADAPTERS, FORMAT_NAMES, getAdapter } from "../adapters/index.js";
export type { Adapter, NormalizedRecord, RequestResult, ResponseResult, StreamAccumulator } from "../adapters/types.js";
// Capture
export { traceable, getCurrentRun, wrapOpenAI, wrapAnthropic, type TraceableOptions, type WrapOptions, type OpenAIWrapOptions } from "./tracing/index.js";
export { Run, RunPatch, RunEvent } from "./run/schema.js";
export { RunTree, MemoryWriter, serialize, uuidv7, type RunWriter } from "./run/index.js";
export { estimateUsage, countTextTokens, freeEncoders } from "./tokens/index.js";
export { TraceSpanProcessor, createOtlpTraceExporter, type TraceSpanProcessorOptions, type SpanFilter, type OtlpTraceExporterOptions } from "./otel/index.js";
export { ADAPTERS as SPAN_ADAPTERS, type SpanAdapter, type SpanLike, type SpanResult } from "../adapters/span-index.js";
// Deliver
export { Client, getDefaultClient, setDefaultClient, flush, type ClientOptions, type Sink } from "./ingest/index.js";
export { RATE_LIMITS, matchLimit, MemoryRateLimiter, type RateLimiter } from "./ratelimit/index.js";
export { RedisRateLimiter, type RedisRateLimiterOptions } from "./ratelimit/redis.js";
export { backfill, type BackfillOptions, type BackfillResult } from "./backfill/pipeline.js";
// Control plane
export { Deployments, ControlPlaneError, type DeploymentsOptions, type WaitOptions } from "./control/client.js";
export { DeploymentCreateRequest, DeploymentPatchRequest, ResourceSpec, type Deployment, type Revision } from "./control/schema.js";
// Webhooks
export { loadWebhookConfig, checkWebhookConfig, type WebhookConfig } from "./webhooks/config.js";
export { vetWebhookUrl, isPublicAddress, WebhookUrlError } from "./webhooks/policy.js";
export { WebhookSender, type WebhookSenderOptions } from "./webhooks/sender.js";
// Serve
export { createCollector, openStore, type CollectorOptions } from "./server/index.js";
// Errors
export { TracepipeError, ValidationError, NormalizeError, ConfigError, type Issue } from "./errors.js";
