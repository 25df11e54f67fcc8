/**
 * tracepipe: capture LLM calls, normalize vendor formats, deliver runs.
 *
 * This entry is what an application that traces imports, so it stays light:
 * no OpenTelemetry SDK, no collector, no SQLite driver, no Redis client
 * (test/package/main-entry.test.ts holds it to that; the embedded store loads
 * on first use). Everything else is a subpath: `tracepipe/otel`,
 * `tracepipe/server`, `tracepipe/backfill`, `tracepipe/control`,
 * `tracepipe/ratelimit`, `tracepipe/adapters/<format>`.
 */
// Capture
// The wrappers touch the client objects they are given; no vendor SDK is imported here.
export {
  traceable,
  getCurrentRun,
  wrapOpenAI,
  wrapAnthropic,
  wrapGemini,
  wrapBedrock,
  type TraceableOptions,
  type WrapOptions,
  type OpenAIWrapOptions,
} from "./tracing/index.js";
// Deliver
export {
  Client,
  getDefaultClient,
  setDefaultClient,
  flush,
  SinkError,
  type ClientOptions,
  type ClientStats,
  type FlushOptions,
  type FlushResult,
  type Sink,
  type SinkLimits,
} from "./ingest/index.js";
// Normalize
export { normalize, detectFormat, type NormalizeOptions } from "./normalize.js";
export { validate, type ValidateOptions } from "./format/validate.js";
export { FORMAT_NAMES } from "../adapters/index.js";
// Costs: the price table in effect (built-in rows, TRACEPIPE_PRICES, your own)
export {
  registerPrices,
  loadPrices,
  resetPrices,
  priceFor,
  costFor,
  type ModelPrice,
  type PriceInput,
  type CostFields,
} from "./tokens/prices/index.js";
// Types (type-only: building the zod schemas of a run is a real share of the import, and only
// the collector validates runs; they are exported from tracepipe/server)
export type { Run, RunPatch, RunEvent } from "./run/schema.js";
export type { RunWriter } from "./run/writer.js";
export type { Message, ContentBlock, UsageMetadata, Role } from "./format/schema.js";
export type { NormalizedRecord } from "../adapters/types.js";
// Errors
export { TracepipeError, ValidationError, NormalizeError, ConfigError, type Issue } from "./errors.js";
