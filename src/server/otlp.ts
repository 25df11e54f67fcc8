/**
 * OTLP/HTTP trace requests, JSON and protobuf, decoded to one plain form.
 * Protobuf goes through protobufjs with the OTLP trace messages described
 * below (field numbers from opentelemetry-proto's trace/v1, common/v1 and
 * resource/v1): data for a well-kept decoder, not a hand-written parser.
 */
import protobuf from "protobufjs";
import { HttpError } from "./http-error.js";
import { ValidationError } from "../errors.js";
import { toPlain, type PlainSpan } from "../otel/otlp-json.js";
import { z } from "zod";
import { tooDeep } from "./depth.js";

export type { PlainSpan };

type Obj = Record<string, any>;

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

/**
 * The envelope's shape, checked before conversion: the converter reads
 * leniently (a string where the span list should be would be walked as
 * characters and yield nothing), so a request of the wrong shape is a 400
 * naming the place, never a 200 with the data silently dropped.
 */
const List = z.array(z.looseObject({})).optional();
const SpanShape = z.looseObject({ attributes: List, events: List, links: List, status: z.looseObject({}).optional().nullable() });
const ScopeSpans = z.looseObject({ scope: z.looseObject({ attributes: List }).optional().nullable(), spans: z.array(SpanShape).optional() });
const Envelope = z.looseObject({
  resourceSpans: z
    .array(
      z.looseObject({
        resource: z.looseObject({ attributes: List }).optional().nullable(),
        scopeSpans: z.array(ScopeSpans).optional(),
        instrumentationLibrarySpans: z.array(ScopeSpans).optional(),
      }),
    )
    .optional(),
});

function checkShape(v: unknown): void {
  const r = Envelope.safeParse(v);
  if (r.success) return;
  const i = r.error.issues[0]!;
  throw new HttpError(400, `not an OTLP ExportTraceServiceRequest: ${i.path.length ? i.path.join(".") : "(root)"}: ${i.message}${r.error.issues.length > 1 ? ` (and ${r.error.issues.length - 1} more problem(s))` : ""}`);
}

/** toPlain, with its validation errors as the 400 the endpoint answers. */
async function plain(req: Record<string, unknown>, maxDepth: number): Promise<PlainSpan[]> {
  if (await tooDeep(req, maxDepth)) throw new HttpError(400, `OTLP request nested more than ${maxDepth} levels deep`);
  checkShape(req);
  try {
    return toPlain(req);
  } catch (err) {
    if (err instanceof ValidationError) throw new HttpError(400, err.issues[0]?.msg ?? err.message);
    throw err;
  }
}

export async function decodeOtlp(body: Buffer, contentType: string, maxDepth = Infinity): Promise<PlainSpan[]> {
  const ct = contentType.split(";")[0]!.trim().toLowerCase();
  if (ct === "application/json") {
    let v: unknown;
    try {
      v = JSON.parse(body.toString("utf8"));
    } catch (err) {
      throw new HttpError(400, `malformed JSON in OTLP body: ${(err as Error).message}`);
    }
    if (typeof v !== "object" || v === null || Array.isArray(v)) throw new HttpError(400, "an OTLP JSON body is an object with resourceSpans");
    return plain(v as Obj, maxDepth);
  }
  if (ct === "application/x-protobuf" || ct === "application/protobuf") {
    let msg: Obj;
    try {
      msg = Request.toObject(Request.decode(body), { longs: String, bytes: Buffer, defaults: false }) as Obj;
    } catch (err) {
      throw new HttpError(400, `malformed OTLP protobuf body: ${(err as Error).message}`);
    }
    return plain(msg, maxDepth);
  }
  throw new HttpError(415, `unsupported Content-Type ${JSON.stringify(contentType)} for OTLP; use application/json or application/x-protobuf`);
}
