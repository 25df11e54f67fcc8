/**
 * OTLP/HTTP trace requests, JSON and protobuf, decoded to one plain form.
 * Protobuf goes through protobufjs with the OTLP trace messages described
 * below (field numbers from opentelemetry-proto's trace/v1, common/v1 and
 * resource/v1): data for a well-kept decoder, not a hand-written parser.
 */
import protobuf from "protobufjs";
import { HttpError } from "./http.js";

const descriptor = {
  nested: {
    otlp: {
      nested: {
        ExportTraceServiceRequest: { fields: { resourceSpans: { rule: "repeated", type: "ResourceSpans", id: 1 } } },
        ResourceSpans: { fields: { resource: { type: "Resource", id: 1 }, scopeSpans: { rule: "repeated", type: "ScopeSpans", id: 2 }, schemaUrl: { type: "string", id: 3 } } },
        Resource: { fields: { attributes: { rule: "repeated", type: "KeyValue", id: 1 }, droppedAttributesCount: { type: "uint32", id: 2 } } },
        ScopeSpans: { fields: { scope: { type: "InstrumentationScope", id: 1 }, spans: { rule: "repeated", type: "Span", id: 2 }, schemaUrl: { type: "string", id: 3 } } },
        InstrumentationScope: { fields: { name: { type: "string", id: 1 }, version: { type: "string", id: 2 }, attributes: { rule: "repeated", type: "KeyValue", id: 3 }, droppedAttributesCount: { type: "uint32", id: 4 } } },
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
            attributes: { rule: "repeated", type: "KeyValue", id: 9 },
            droppedAttributesCount: { type: "uint32", id: 10 },
            events: { rule: "repeated", type: "Event", id: 11 },
            droppedEventsCount: { type: "uint32", id: 12 },
            links: { rule: "repeated", type: "Link", id: 13 },
            droppedLinksCount: { type: "uint32", id: 14 },
            status: { type: "Status", id: 15 },
          },
        },
        Event: { fields: { timeUnixNano: { type: "fixed64", id: 1 }, name: { type: "string", id: 2 }, attributes: { rule: "repeated", type: "KeyValue", id: 3 }, droppedAttributesCount: { type: "uint32", id: 4 } } },
        Link: { fields: { traceId: { type: "bytes", id: 1 }, spanId: { type: "bytes", id: 2 }, traceState: { type: "string", id: 3 }, attributes: { rule: "repeated", type: "KeyValue", id: 4 }, droppedAttributesCount: { type: "uint32", id: 5 }, flags: { type: "fixed32", id: 6 } } },
        Status: { fields: { message: { type: "string", id: 2 }, code: { type: "int32", id: 3 } } },
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
        ArrayValue: { fields: { values: { rule: "repeated", type: "AnyValue", id: 1 } } },
        KeyValueList: { fields: { values: { rule: "repeated", type: "KeyValue", id: 1 } } },
      },
    },
  },
};

const Request = protobuf.Root.fromJSON(descriptor).lookupType("otlp.ExportTraceServiceRequest");

/** A span as the store keeps it: ids in hex, times as canonical ISO strings, attributes as plain values. */
export interface PlainSpan {
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  name: string;
  kind: number;
  start_time: string;
  end_time: string;
  resource: string;
  scope: string;
  attributes: string;
  events: string;
  links: string;
  status: string;
}

type Obj = Record<string, any>;

/** OTLP AnyValue -> a plain JSON value (int64 as number when safe, else string). */
export function anyValue(v: Obj | undefined | null): unknown {
  if (!v) return null;
  if ("stringValue" in v) return v.stringValue;
  if ("boolValue" in v) return v.boolValue;
  if ("intValue" in v) {
    const n = Number(v.intValue);
    return Number.isSafeInteger(n) ? n : String(v.intValue);
  }
  if ("doubleValue" in v) return Number(v.doubleValue);
  if ("arrayValue" in v) return ((v.arrayValue?.values ?? []) as Obj[]).map(anyValue);
  if ("kvlistValue" in v) return attributes(v.kvlistValue?.values);
  if ("bytesValue" in v) return typeof v.bytesValue === "string" ? v.bytesValue : Buffer.from(v.bytesValue).toString("base64");
  return null;
}

export function attributes(kvs: Obj[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of kvs ?? []) if (kv && typeof kv.key === "string") out[kv.key] = anyValue(kv.value);
  return out;
}

/** JSON OTLP carries ids as hex (the spec) but some exporters send base64: accept both. */
function hexId(v: unknown, bytes: number): string {
  if (v === undefined || v === null || v === "") return "";
  if (v instanceof Uint8Array) return Buffer.from(v).toString("hex");
  const s = String(v);
  if (s.length === bytes * 2 && /^[0-9a-fA-F]+$/.test(s)) return s.toLowerCase();
  return Buffer.from(s, "base64").toString("hex");
}

export function nanosToIso(v: unknown): string {
  if (v === undefined || v === null) return "";
  const ns = BigInt(typeof v === "object" ? String(v) : (v as string | number));
  const ms = ns / 1_000_000n;
  const micro = (ns / 1000n) % 1000n;
  return new Date(Number(ms)).toISOString().replace(/Z$/, `${micro.toString().padStart(3, "0")}Z`);
}

function toPlain(req: Obj): PlainSpan[] {
  const out: PlainSpan[] = [];
  for (const rs of (req.resourceSpans ?? []) as Obj[]) {
    const resource = JSON.stringify(attributes(rs.resource?.attributes));
    for (const ss of (rs.scopeSpans ?? rs.instrumentationLibrarySpans ?? []) as Obj[]) {
      const scopeObj = ss.scope ?? ss.instrumentationLibrary ?? {};
      const scope = JSON.stringify({ name: scopeObj.name ?? "", version: scopeObj.version ?? "", attributes: attributes(scopeObj.attributes) });
      for (const s of (ss.spans ?? []) as Obj[]) {
        const trace_id = hexId(s.traceId, 16);
        const span_id = hexId(s.spanId, 8);
        if (!trace_id || !span_id) throw new HttpError(400, `a span without traceId or spanId (name ${JSON.stringify(s.name ?? "")})`);
        out.push({
          trace_id,
          span_id,
          parent_span_id: hexId(s.parentSpanId, 8) || null,
          name: String(s.name ?? ""),
          kind: Number(s.kind ?? 0),
          start_time: nanosToIso(s.startTimeUnixNano),
          end_time: nanosToIso(s.endTimeUnixNano),
          resource,
          scope,
          attributes: JSON.stringify(attributes(s.attributes)),
          events: JSON.stringify(((s.events ?? []) as Obj[]).map((e) => ({ name: e.name, time: nanosToIso(e.timeUnixNano), attributes: attributes(e.attributes) }))),
          links: JSON.stringify(((s.links ?? []) as Obj[]).map((l) => ({ trace_id: hexId(l.traceId, 16), span_id: hexId(l.spanId, 8), attributes: attributes(l.attributes) }))),
          status: JSON.stringify({ code: Number(s.status?.code ?? 0), message: s.status?.message ?? "" }),
        });
      }
    }
  }
  return out;
}

export function decodeOtlp(body: Buffer, contentType: string): PlainSpan[] {
  const ct = contentType.split(";")[0]!.trim().toLowerCase();
  if (ct === "application/json") {
    let v: unknown;
    try {
      v = JSON.parse(body.toString("utf8"));
    } catch (err) {
      throw new HttpError(400, `malformed JSON in OTLP body: ${(err as Error).message}`);
    }
    if (typeof v !== "object" || v === null) throw new HttpError(400, "an OTLP JSON body is an object with resourceSpans");
    return toPlain(v as Obj);
  }
  if (ct === "application/x-protobuf" || ct === "application/protobuf") {
    let msg: Obj;
    try {
      msg = Request.toObject(Request.decode(body), { longs: String, bytes: Buffer, defaults: false }) as Obj;
    } catch (err) {
      throw new HttpError(400, `malformed OTLP protobuf body: ${(err as Error).message}`);
    }
    return toPlain(msg);
  }
  throw new HttpError(415, `unsupported Content-Type ${JSON.stringify(contentType)} for OTLP; use application/json or application/x-protobuf`);
}
