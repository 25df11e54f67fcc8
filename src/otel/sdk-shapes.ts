/**
 * What the span and log-record processors read of the OpenTelemetry SDK's
 * objects, spelled as shapes over `@opentelemetry/api` alone. The SDK 2 and
 * SDK 3 lines name and declare their classes differently (`SdkLogRecord` /
 * `ReadWriteLogRecord`, `sdk-trace-node` / `sdk-trace`), and a user has one
 * line installed, not both: public types tied to one line's classes would
 * not resolve for the other's users. Both lines' spans, log records,
 * providers and exporters fit these shapes.
 */
import type { Attributes, Context, HrTime, SpanContext, SpanKind, SpanStatus } from "@opentelemetry/api";

/** An ended span (or one still open, for its parentage): the fields conversion reads. */
export interface SpanView {
  readonly name: string;
  readonly kind: SpanKind;
  spanContext(): SpanContext;
  readonly parentSpanContext?: SpanContext;
  readonly startTime: HrTime;
  readonly endTime: HrTime;
  readonly ended: boolean;
  readonly status: SpanStatus;
  readonly attributes: Attributes;
  readonly events: readonly { readonly name: string; readonly time: HrTime; readonly attributes?: Attributes }[];
  readonly droppedAttributesCount: number;
  readonly instrumentationScope?: { readonly name: string; readonly version?: string };
}

/** A tracer provider's span processor, as either SDK line calls it. */
export interface SpanProcessorShape {
  onStart(span: SpanView, parentContext: Context): void;
  onEnd(span: SpanView): void;
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

/** An emitted log record: the fields the log-record processor keeps. */
export interface LogRecordView {
  readonly hrTime: HrTime;
  readonly spanContext?: SpanContext;
  readonly eventName?: string;
  readonly body?: unknown;
  /** The SDKs' log attributes may hold any value (`AnyValueMap`), not only span attribute values. */
  readonly attributes?: Readonly<Record<string, unknown>>;
}

/** A logger provider's log-record processor, as either SDK line calls it. */
export interface LogRecordProcessorShape {
  onEmit(record: LogRecordView, context?: Context): void;
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

/** An export's outcome: `code` 0 is success (the SDK's ExportResultCode). */
export interface ExportOutcome {
  code: number;
  error?: Error;
}

/** A span exporter, as either SDK line's span processors call it. */
export interface SpanExporterShape {
  export(spans: SpanView[], resultCallback: (result: ExportOutcome) => void): void;
  shutdown(): Promise<void>;
  forceFlush(): Promise<void>;
}
