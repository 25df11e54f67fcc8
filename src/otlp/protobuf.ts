/**
 * The OTLP messages tracepipe reads and answers, as protobufjs types built
 * from a descriptor (field numbers from opentelemetry-proto's
 * collector/{trace,logs}/v1, trace/v1, logs/v1, common/v1 and resource/v1,
 * and google/rpc's Status and RetryInfo for gRPC errors): data for a
 * well-kept decoder, not a hand-written parser. Shared by OTLP/HTTP and
 * OTLP/gRPC, which carry the same messages.
 */
import protobuf from "protobufjs";

const repeated = (type: string, id: number) => ({ rule: "repeated", type, id });
const KV = (id: number) => repeated("KeyValue", id);

/**
 * One signal's envelope, the same shape for spans and log records: the export
 * request holds Resource{group}s, each Scope{group}s, each the items; the
 * response's partial success counts the items refused.
 */
function signal(name: string, group: string, items: string, item: string, rejected: string) {
  return {
    [`Export${name}ServiceRequest`]: { fields: { [`resource${group}`]: repeated(`Resource${group}`, 1) } },
    [`Export${name}ServiceResponse`]: { fields: { partialSuccess: { type: `Export${name}PartialSuccess`, id: 1 } } },
    [`Export${name}PartialSuccess`]: { fields: { [rejected]: { type: "int64", id: 1 }, errorMessage: { type: "string", id: 2 } } },
    [`Resource${group}`]: {
      fields: { resource: { type: "Resource", id: 1 }, [`scope${group}`]: repeated(`Scope${group}`, 2), schemaUrl: { type: "string", id: 3 } },
    },
    [`Scope${group}`]: {
      fields: { scope: { type: "InstrumentationScope", id: 1 }, [items]: repeated(item, 2), schemaUrl: { type: "string", id: 3 } },
    },
  };
}

const descriptor = {
  nested: {
    otlp: {
      nested: {
        ...signal("Trace", "Spans", "spans", "Span", "rejectedSpans"),
        ...signal("Logs", "Logs", "logRecords", "LogRecord", "rejectedLogRecords"),
        Resource: { fields: { attributes: KV(1), droppedAttributesCount: { type: "uint32", id: 2 } } },
        InstrumentationScope: {
          fields: {
            name: { type: "string", id: 1 },
            version: { type: "string", id: 2 },
            attributes: KV(3),
            droppedAttributesCount: { type: "uint32", id: 4 },
          },
        },
        Span: {
          fields: {
            traceId: { type: "bytes", id: 1 },
            spanId: { type: "bytes", id: 2 },
            traceState: { type: "string", id: 3 },
            parentSpanId: { type: "bytes", id: 4 },
            flags: { type: "fixed32", id: 16 },
            name: { type: "string", id: 5 },
            kind: { type: "int32", id: 6 },
            startTimeUnixNano: { type: "fixed64", id: 7 },
            endTimeUnixNano: { type: "fixed64", id: 8 },
            attributes: KV(9),
            droppedAttributesCount: { type: "uint32", id: 10 },
            events: repeated("Event", 11),
            droppedEventsCount: { type: "uint32", id: 12 },
            links: repeated("Link", 13),
            droppedLinksCount: { type: "uint32", id: 14 },
            status: { type: "Status", id: 15 },
          },
        },
        Event: {
          fields: {
            timeUnixNano: { type: "fixed64", id: 1 },
            name: { type: "string", id: 2 },
            attributes: KV(3),
            droppedAttributesCount: { type: "uint32", id: 4 },
          },
        },
        Link: {
          fields: {
            traceId: { type: "bytes", id: 1 },
            spanId: { type: "bytes", id: 2 },
            traceState: { type: "string", id: 3 },
            attributes: KV(4),
            droppedAttributesCount: { type: "uint32", id: 5 },
            flags: { type: "fixed32", id: 6 },
          },
        },
        Status: { fields: { message: { type: "string", id: 2 }, code: { type: "int32", id: 3 } } },
        LogRecord: {
          fields: {
            timeUnixNano: { type: "fixed64", id: 1 },
            observedTimeUnixNano: { type: "fixed64", id: 11 },
            severityNumber: { type: "int32", id: 2 },
            severityText: { type: "string", id: 3 },
            body: { type: "AnyValue", id: 5 },
            attributes: KV(6),
            droppedAttributesCount: { type: "uint32", id: 7 },
            flags: { type: "fixed32", id: 8 },
            traceId: { type: "bytes", id: 9 },
            spanId: { type: "bytes", id: 10 },
            eventName: { type: "string", id: 12 },
          },
        },
        KeyValue: { fields: { key: { type: "string", id: 1 }, value: { type: "AnyValue", id: 2 } } },
        AnyValue: {
          oneofs: { value: { oneof: ["stringValue", "boolValue", "intValue", "doubleValue", "arrayValue", "kvlistValue", "bytesValue"] } },
          fields: {
            stringValue: { type: "string", id: 1 },
            boolValue: { type: "bool", id: 2 },
            intValue: { type: "int64", id: 3 },
            doubleValue: { type: "double", id: 4 },
            arrayValue: { type: "ArrayValue", id: 5 },
            kvlistValue: { type: "KeyValueList", id: 6 },
            bytesValue: { type: "bytes", id: 7 },
          },
        },
        ArrayValue: { fields: { values: repeated("AnyValue", 1) } },
        KeyValueList: { fields: { values: KV(1) } },
        // google.rpc.Status and the RetryInfo detail, for gRPC errors that say when to retry.
        RpcStatus: {
          fields: { code: { type: "int32", id: 1 }, message: { type: "string", id: 2 }, details: repeated("Any", 3) },
        },
        Any: { fields: { typeUrl: { type: "string", id: 1 }, value: { type: "bytes", id: 2 } } },
        RetryInfo: { fields: { retryDelay: { type: "Duration", id: 1 } } },
        Duration: { fields: { seconds: { type: "int64", id: 1 }, nanos: { type: "int32", id: 2 } } },
      },
    },
  },
};

const root = protobuf.Root.fromJSON(descriptor);
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

/** google.rpc.Status with a RetryInfo detail: what an OTLP/gRPC client reads to know when to retry. */
export function retryStatus(code: number, message: string, retryAfterMs: number): Buffer {
  const retry = RetryInfo.encode(
    RetryInfo.create({ retryDelay: { seconds: Math.floor(retryAfterMs / 1000), nanos: (retryAfterMs % 1000) * 1_000_000 } }),
  ).finish();
  const status = RpcStatus.create({ code, message, details: [{ typeUrl: "type.googleapis.com/google.rpc.RetryInfo", value: retry }] });
  return Buffer.from(RpcStatus.encode(status).finish());
}
