/**
 * OTLP export requests (traces and logs), JSON or protobuf, decoded to the
 * plain rows the store keeps. The one place that reads OTLP's wire forms:
 * the collector's HTTP and gRPC receivers call it, backfill reads JSON lines
 * through toPlain.
 *
 * Errors are ValidationErrors whose first issue says what was wrong; the
 * issue type `unsupported_media_type` marks a Content-Type that is neither
 * form (HTTP answers it 415, everything else 400).
 */
import type protobuf from "protobufjs";
import { z } from "zod";
import { ValidationError } from "../errors.js";
import { toPlainLogs, type PlainLog } from "./logs.js";
import { toPlain, type PlainSpan } from "./plain.js";
import { decodeMessage, LogsRequest, TraceRequest } from "./protobuf.js";

type Obj = Record<string, unknown>;

export type Signal = "traces" | "logs";

export interface DecodeOptions {
  /** Run on the decoded document before it is read: the collector refuses documents nested too deep here. */
  guard?: (doc: Obj) => Promise<void>;
}

/**
 * The envelopes' shape, checked before conversion: the converter reads
 * leniently (a string where the span list should be would be walked as
 * characters and yield nothing), so a request of the wrong shape is an error
 * naming the place, never an answer of success with the data silently dropped.
 */
const List = z.array(z.looseObject({})).optional();
const Scope = z.looseObject({ attributes: List }).optional().nullable();
const Resource = z.looseObject({ attributes: List }).optional().nullable();
const SpanShape = z.looseObject({ attributes: List, events: List, links: List, status: z.looseObject({}).optional().nullable() });
const ScopeSpans = z.looseObject({ scope: Scope, spans: z.array(SpanShape).optional() });
const TraceEnvelope = z.looseObject({
  resourceSpans: z
    .array(
      z.looseObject({
        resource: Resource,
        scopeSpans: z.array(ScopeSpans).optional(),
        instrumentationLibrarySpans: z.array(ScopeSpans).optional(),
      }),
    )
    .optional(),
});
const LogShape = z.looseObject({ attributes: List });
const LogsEnvelope = z.looseObject({
  resourceLogs: z
    .array(
      z.looseObject({
        resource: Resource,
        scopeLogs: z.array(z.looseObject({ scope: Scope, logRecords: z.array(LogShape).optional() })).optional(),
      }),
    )
    .optional(),
});

const SIGNALS = {
  traces: { name: "ExportTraceServiceRequest", list: "resourceSpans", envelope: TraceEnvelope, proto: TraceRequest },
  logs: { name: "ExportLogsServiceRequest", list: "resourceLogs", envelope: LogsEnvelope, proto: LogsRequest },
} as const satisfies Record<Signal, { name: string; list: string; envelope: z.ZodType; proto: protobuf.Type }>;

const fail = (msg: string, type = "otlp", loc: (string | number)[] = []) => new ValidationError([{ loc, msg, type }]);

function checkShape(signal: Signal, v: unknown): void {
  const r = SIGNALS[signal].envelope.safeParse(v);
  if (r.success) return;
  const i = r.error.issues[0]!;
  const more = r.error.issues.length > 1 ? ` (and ${r.error.issues.length - 1} more problem(s))` : "";
  throw fail(
    `not an OTLP ${SIGNALS[signal].name}: ${i.path.length ? i.path.join(".") : "(root)"}: ${i.message}${more}`,
    "otlp_shape",
    i.path as (string | number)[],
  );
}

/** Whether a Content-Type names OTLP's protobuf encoding (its answer is then protobuf too). */
export function isProtobuf(contentType: string): boolean {
  const ct = contentType.split(";")[0]!.trim().toLowerCase();
  return ct === "application/x-protobuf" || ct === "application/protobuf";
}

/** The request as OTLP JSON's object shape, from either wire form. */
export async function decodeDocument(signal: Signal, body: Uint8Array, contentType: string, o: DecodeOptions = {}): Promise<Obj> {
  const ct = contentType.split(";")[0]!.trim().toLowerCase();
  let doc: Obj;
  if (ct === "application/json") {
    let v: unknown;
    try {
      v = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8"));
    } catch (err) {
      throw fail(`malformed JSON in OTLP body: ${(err as Error).message}`, "json_invalid");
    }
    if (typeof v !== "object" || v === null || Array.isArray(v))
      throw fail(`an OTLP JSON body is an object with ${SIGNALS[signal].list}`, "object_type");
    doc = v as Obj;
  } else if (isProtobuf(ct)) {
    doc = decodeProtobuf(signal, body);
  } else {
    throw fail(
      `unsupported Content-Type ${JSON.stringify(contentType)} for OTLP; use application/json or application/x-protobuf`,
      "unsupported_media_type",
    );
  }
  if (o.guard) await o.guard(doc);
  checkShape(signal, doc);
  return doc;
}

export function decodeProtobuf(signal: Signal, body: Uint8Array): Obj {
  try {
    return decodeMessage(SIGNALS[signal].proto, body);
  } catch (err) {
    throw fail(`malformed OTLP protobuf body: ${(err as Error).message}`, "protobuf_invalid");
  }
}

/**
 * A document of the right shape to rows; a span without its ids is the error
 * it names. `required`: a document without `resourceSpans` is an error too
 * (a file line must be a request; an HTTP body may be empty).
 */
export function plainSpans(doc: Obj, o: { required?: boolean } = {}): PlainSpan[] {
  if (o.required && !Array.isArray(doc.resourceSpans))
    throw fail("expected an OTLP ExportTraceServiceRequest with a resourceSpans array", "missing", ["resourceSpans"]);
  checkShape("traces", doc);
  return toPlain(doc);
}

export function plainLogs(doc: Obj): PlainLog[] {
  checkShape("logs", doc);
  return toPlainLogs(doc);
}

export async function decodeTraces(body: Uint8Array, contentType: string, o: DecodeOptions = {}): Promise<PlainSpan[]> {
  return toPlain(await decodeDocument("traces", body, contentType, o));
}

export async function decodeLogs(body: Uint8Array, contentType: string, o: DecodeOptions = {}): Promise<PlainLog[]> {
  return toPlainLogs(await decodeDocument("logs", body, contentType, o));
}
