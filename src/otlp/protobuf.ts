/**
 * The OTLP messages tracepipe reads and answers, as protobufjs types built
 * from their .proto declarations (field numbers from opentelemetry-proto's
 * collector/{trace,logs}/v1, trace/v1, logs/v1, common/v1 and resource/v1,
 * and google/rpc's Status and RetryInfo for gRPC errors): data for a
 * well-kept decoder, not a hand-written parser. Shared by OTLP/HTTP and
 * OTLP/gRPC, which carry the same messages.
 */
import protobuf from "protobufjs";

/**
 * The messages as a .proto file declares them (camelCase names, as protobufjs
 * gives them to OTLP JSON's shape). The span and log envelopes share one shape:
 * the export request holds resources, each scopes, each the items.
 */
const PROTO = `
syntax = "proto3";
package otlp;

message ExportTraceServiceRequest { repeated ResourceSpans resourceSpans = 1; }
message ExportTraceServiceResponse { ExportTracePartialSuccess partialSuccess = 1; }
message ExportTracePartialSuccess { int64 rejectedSpans = 1; string errorMessage = 2; }
message ExportLogsServiceRequest { repeated ResourceLogs resourceLogs = 1; }
message ExportLogsServiceResponse { ExportLogsPartialSuccess partialSuccess = 1; }
message ExportLogsPartialSuccess { int64 rejectedLogRecords = 1; string errorMessage = 2; }

message ResourceSpans { Resource resource = 1; repeated ScopeSpans scopeSpans = 2; string schemaUrl = 3; }
message ResourceLogs { Resource resource = 1; repeated ScopeLogs scopeLogs = 2; string schemaUrl = 3; }
message Resource { repeated KeyValue attributes = 1; uint32 droppedAttributesCount = 2; }
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; string schemaUrl = 3; }
message ScopeLogs { InstrumentationScope scope = 1; repeated LogRecord logRecords = 2; string schemaUrl = 3; }
message InstrumentationScope { string name = 1; string version = 2; repeated KeyValue attributes = 3; uint32 droppedAttributesCount = 4; }

message Span {
  bytes traceId = 1; bytes spanId = 2; string traceState = 3; bytes parentSpanId = 4; fixed32 flags = 16;
  string name = 5; int32 kind = 6; fixed64 startTimeUnixNano = 7; fixed64 endTimeUnixNano = 8;
  repeated KeyValue attributes = 9; uint32 droppedAttributesCount = 10;
  repeated Event events = 11; uint32 droppedEventsCount = 12; repeated Link links = 13; uint32 droppedLinksCount = 14;
  Status status = 15;
}
message Event { fixed64 timeUnixNano = 1; string name = 2; repeated KeyValue attributes = 3; uint32 droppedAttributesCount = 4; }
message Link {
  bytes traceId = 1; bytes spanId = 2; string traceState = 3; repeated KeyValue attributes = 4; uint32 droppedAttributesCount = 5;
  fixed32 flags = 6;
}
message Status { string message = 2; int32 code = 3; }
message LogRecord {
  fixed64 timeUnixNano = 1; fixed64 observedTimeUnixNano = 11; int32 severityNumber = 2; string severityText = 3;
  AnyValue body = 5; repeated KeyValue attributes = 6; uint32 droppedAttributesCount = 7; fixed32 flags = 8;
  bytes traceId = 9; bytes spanId = 10; string eventName = 12;
}

message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue {
  oneof value {
    string stringValue = 1; bool boolValue = 2; int64 intValue = 3; double doubleValue = 4;
    ArrayValue arrayValue = 5; KeyValueList kvlistValue = 6; bytes bytesValue = 7;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }

// google.rpc.Status and the RetryInfo detail, for gRPC errors that say when to retry.
message RpcStatus { int32 code = 1; string message = 2; repeated Any details = 3; }
message Any { string typeUrl = 1; bytes value = 2; }
message RetryInfo { Duration retryDelay = 1; }
message Duration { int64 seconds = 1; int32 nanos = 2; }
`;

const root = protobuf.parse(PROTO, { keepCase: true }).root;
const type = (name: string) => root.lookupType(`otlp.${name}`);

export const TraceRequest = type("ExportTraceServiceRequest");
export const TraceResponse = type("ExportTraceServiceResponse");
export const LogsRequest = type("ExportLogsServiceRequest");
export const LogsResponse = type("ExportLogsServiceResponse");
export const RpcStatus = type("RpcStatus");
export const RetryInfo = type("RetryInfo");

type Obj = Record<string, unknown>;

/** A protobuf message to the object shape OTLP JSON has (int64 as decimal strings, bytes as Buffers). */
export function decodeMessage(t: protobuf.Type, bytes: Uint8Array): Obj {
  return t.toObject(t.decode(bytes), { longs: String, bytes: Buffer, defaults: false }) as Obj;
}

/**
 * An Export*ServiceResponse in protobuf, for a request sent in protobuf (OTLP answers in the request's
 * encoding); `partialSuccess` empty when nothing was refused.
 */
export function exportResponse(signal: "traces" | "logs", partialSuccess: object): Uint8Array {
  const t = signal === "traces" ? TraceResponse : LogsResponse;
  return t.encode(t.create(Object.keys(partialSuccess).length ? { partialSuccess } : {})).finish();
}

/** google.rpc.Status with a RetryInfo detail: what an OTLP/gRPC client reads to know when to retry. */
export function retryStatus(code: number, message: string, retryAfterMs: number): Buffer {
  const retry = RetryInfo.encode(
    RetryInfo.create({ retryDelay: { seconds: Math.floor(retryAfterMs / 1000), nanos: (retryAfterMs % 1000) * 1_000_000 } }),
  ).finish();
  const status = RpcStatus.create({ code, message, details: [{ typeUrl: "type.googleapis.com/google.rpc.RetryInfo", value: retry }] });
  return Buffer.from(RpcStatus.encode(status).finish());
}
