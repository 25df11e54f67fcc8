/**
 * The contract every vendor adapter implements. Adapters are pure functions:
 * no I/O, no globals, no clock. They throw `NormalizeError` and nothing else.
 */
import type { Message, UsageMetadata } from "../src/format/schema.js";

/** Model identification, SPEC §2.6 (`extra.metadata.trace_provider` / `trace_model_name`). */
export interface ModelInfo {
  trace_provider?: string;
  trace_model_name?: string;
}

/** What a request body becomes. */
export interface RequestResult extends ModelInfo {
  messages: Message[];
  /** Invocation parameters (temperature, max tokens, stop, tools, ...): everything but the messages and the model. */
  invocation_params: Record<string, unknown>;
}

/** What a response body (or a whole stream) becomes: the assistant message(s) with usage. */
export interface ResponseResult extends ModelInfo {
  /** One assistant message per choice; `usage_metadata` sits on the first one when reported. */
  messages: Message[];
  usage_metadata?: UsageMetadata;
  /** Finish / stop reason of the first choice, when the vendor gave one. */
  stop_reason?: string;
}

/** The `normalize` output record of DESIGN.md's CLI contract. */
export interface NormalizedRecord {
  format: string;
  inputs?: { messages: Message[] };
  outputs?: { messages: Message[] };
  metadata: ModelInfo;
}

/**
 * What a reply's normalization may need from its request: an OpenAI audio reply
 * carries bytes without a format, which only the request's `audio.format` names.
 */
export interface ResponseContext {
  request?: unknown;
}

/** Incremental stream folding, for wrappers that see one chunk at a time. */
export interface StreamAccumulator {
  /**
   * Fold one chunk/event in. Returns true when this chunk carried the first
   * content token (text, reasoning, tool-call fragment, audio) of the stream,
   * so the caller can stamp the `new_token` event at that moment.
   */
  push(chunk: unknown): boolean;
  /** The result so far; callable at any time (a cancelled stream keeps its partial output). */
  result(): ResponseResult;
}

/** Which kind of payload `detect` recognised. */
export type PayloadKind = "request" | "response" | "stream" | "pair";

export interface Adapter {
  /** The `--format` name, e.g. `openai-chat`. */
  readonly name: string;
  /** Structural recognition; `null` when the payload is not confidently this format. Never throws. */
  detect(payload: unknown): PayloadKind | null;
  normalizeRequest(request: unknown): RequestResult;
  normalizeResponse(response: unknown, ctx?: ResponseContext): ResponseResult;
  normalizeStream(chunks: readonly unknown[], ctx?: ResponseContext): ResponseResult;
  createStreamAccumulator(ctx?: ResponseContext): StreamAccumulator;
  /** A request, a response, an array of chunks, or `{request, response}`: the DESIGN.md output record. */
  normalize(payload: unknown): NormalizedRecord;
}
