/**
 * The contract of span adapters: pure functions from one finished span's
 * attributes and events (no OpenTelemetry SDK types, no I/O, no clock) to
 * what a run needs. Each instrumentation convention (OTel GenAI, OpenLLMetry's
 * indexed attributes, OpenInference, the Vercel AI SDK) is one adapter; the
 * span processor (src/otel) asks them in order.
 */
import type { Issue } from "../src/errors.js";
import type { Message, UsageMetadata } from "../src/format/schema.js";

export type AttrValue = string | number | boolean | readonly (string | number | boolean | null | undefined)[] | null | undefined;
export type Attributes = Readonly<Record<string, AttrValue>>;

export interface SpanEventLike {
  name: string;
  /** Milliseconds after the span's start. */
  offsetMs: number;
  attributes: Attributes;
}

/**
 * A log record that belongs to a span. The official GenAI instrumentations
 * emit message content as log events beside the span (`gen_ai.user.message`,
 * `gen_ai.choice`, ...), not on it.
 */
export interface LogRecordLike {
  /** The event's name: the record's own `eventName`, else its `event.name` attribute. */
  eventName: string;
  /** Any JSON value (OTLP AnyValue): the event's payload. */
  body: unknown;
  /** Log attributes may be structured (maps, lists of maps), unlike span attributes. */
  attributes: Readonly<Record<string, unknown>>;
  /** Microseconds since the epoch, when known. */
  timeUs?: number;
}

export interface SpanLike {
  name: string;
  /** The instrumentation scope's name, when known: some emitters count differently under the same attribute. */
  scope?: string;
  attributes: Attributes;
  events: readonly SpanEventLike[];
  /** The span's log records, oldest first, when the producer joined any. */
  logs?: readonly LogRecordLike[];
}

export type SpanRunType = "llm" | "chain" | "tool" | "retriever" | "embedding" | "prompt" | "parser";

export interface SpanResult {
  /** Which adapter read it, e.g. `otel-genai`. */
  convention: string;
  run_type: SpanRunType;
  /** For llm runs: native messages in and out; usage sits on the first output message. */
  input_messages?: Message[];
  output_messages?: Message[];
  usage_metadata?: UsageMetadata;
  /** For other runs: whatever inputs and outputs the convention records. */
  inputs?: Record<string, unknown>;
  outputs?: Record<string, unknown>;
  trace_provider?: string;
  trace_model_name?: string;
  invocation_params?: Record<string, unknown>;
  /** Delay from the span's start to the first token, when recorded. */
  time_to_first_token_ms?: number;
  /** Attributes or log records that failed to read; what did read is in the fields above. */
  issues?: Issue[];
}

export interface SpanAdapter {
  readonly name: string;
  /** Whether the span follows this convention (cheap: attribute names only). Never throws. */
  detect(span: SpanLike): boolean;
  /** Read the span. Throws NormalizeError naming the attribute when a value is malformed. */
  read(span: SpanLike): SpanResult;
}
