/** tracepipe: capture, normalize and deliver LLM traces. */
export { normalize, detectFormat, type NormalizeOptions } from "./normalize.js";
export { validate, type ValidateOptions } from "./format/validate.js";
export * as format from "./format/index.js";
export type { Message, ContentBlock, UsageMetadata, Role } from "./format/schema.js";
export { nativeMessagesJsonSchema } from "./format/json-schema.js";
export { Run, RunPatch, RunEvent } from "./run/schema.js";
export { TracepipeError, ValidationError, NormalizeError, RateLimitError, TransportError, ConfigError, type Issue } from "./errors.js";
export { ADAPTERS, FORMAT_NAMES, getAdapter } from "../adapters/index.js";
export type { Adapter, NormalizedRecord, RequestResult, ResponseResult, StreamAccumulator } from "../adapters/types.js";
