/**
 * OTLP trace data in its JSON form (ExportTraceServiceRequest, as the OTLP
 * exporters and the collector's file exporter write it; protobuf is decoded
 * into the same object shape) to plain span rows, the form the store keeps.
 * Shared by the collector and backfill (OTLP JSON files, one request per line).
 */
import { ValidationError } from "../errors.js";
import type { SpanInput } from "../store/contract/spans.js";
import { put } from "../internal/obj.js";

/** The project of exported spans: set by createOtlpTraceExporter, read by the collector (here, so it never loads the OTel exporter). */
export const PROJECT_HEADER = "x-tracepipe-project";

/** A span as the store keeps it: ids in hex, times as canonical ISO strings, attributes as plain values. */
export interface PlainSpan extends SpanInput {
  /**
   * Whether the parent is in another process (1) or this one (0), from the
   * span's OTLP flags (bits 8 and 9, which SDKs set since OTLP 1.1); null when
   * the span has no parent or the exporter did not say. A span whose parent is
   * remote is the root of its process's part of the trace, as the span
   * processor takes it.
   */
  parent_remote: 0 | 1 | null;
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
  for (const kv of kvs ?? []) if (kv && typeof kv.key === "string") put(out, kv.key, anyValue(kv.value));
  return out;
}

/** JSON OTLP carries ids as hex (the spec) but some exporters send base64: accept both. */
export function hexId(v: unknown, bytes: number): string {
  if (v === undefined || v === null || v === "") return "";
  if (v instanceof Uint8Array) return Buffer.from(v).toString("hex");
  const s = String(v);
  if (s.length === bytes * 2 && /^[0-9a-fA-F]+$/.test(s)) return s.toLowerCase();
  return Buffer.from(s, "base64").toString("hex");
}

/** Unsigned int64 nanoseconds as OTLP JSON writes them: a decimal string, or a number. */
const NANOS = /^\d{0,30}$/;

/**
 * OTLP nanoseconds since the epoch as a canonical ISO time ("" when absent). A value that
 * names no time (not an unsigned integer, or past what a date can hold) is a ValidationError
 * naming `loc`, so the request is refused as malformed rather than failing inside the collector.
 */
export function nanosToIso(v: unknown, loc: readonly (string | number)[] = []): string {
  if (v === undefined || v === null) return "";
  // An object is a 64-bit integer type of a decoder (its text is the decimal number); anything else is as sent.
  const text =
    typeof v === "number" && Number.isInteger(v) && v >= 0
      ? BigInt(v).toString()
      : typeof v === "string"
        ? v
        : typeof v === "object"
          ? String(v)
          : undefined;
  const ns = text !== undefined && NANOS.test(text) ? BigInt(text) : undefined;
  if (ns === undefined || Number.isNaN(new Date(Number(ns / 1_000_000n)).getTime())) {
    const shown = JSON.stringify(v) ?? String(v);
    throw new ValidationError([
      {
        loc: [...loc],
        msg: `${loc.join(".")}: not a time in nanoseconds since the epoch: ${shown.length > 80 ? `${shown.slice(0, 80)}...` : shown}`,
        type: "otlp_time",
      },
    ]);
  }
  const ms = ns / 1_000_000n;
  const micro = (ns / 1000n) % 1000n;
  return new Date(Number(ms)).toISOString().replace(/Z$/, `${micro.toString().padStart(3, "0")}Z`);
}

/** OTLP span flags: bit 8 says whether bit 9 (the parent is remote) is set at all. */
const HAS_IS_REMOTE = 0x100;
const IS_REMOTE = 0x200;

/** PlainSpan.parent_remote from a span's parent id and flags. */
export function parentRemote(parentSpanId: string | null, flags: unknown): 0 | 1 | null {
  // A number, as OTLP JSON writes fixed32 (a string of digits is taken too).
  const f = typeof flags === "number" ? flags : typeof flags === "string" && /^\d{1,10}$/.test(flags) ? Number(flags) : NaN;
  if (!parentSpanId || !Number.isInteger(f) || !(f & HAS_IS_REMOTE)) return null;
  return f & IS_REMOTE ? 1 : 0;
}

/** A span that starts its process's part of a trace: no parent, or a parent flagged remote. */
export function isLocalRoot(r: { parent_span_id?: unknown; parent_remote?: unknown }): boolean {
  return !r.parent_span_id || r.parent_remote === 1;
}

export function toPlain(req: Obj): PlainSpan[] {
  const out: PlainSpan[] = [];
  for (const [ri, rs] of ((req.resourceSpans ?? []) as Obj[]).entries()) {
    const resource = JSON.stringify(attributes(rs.resource?.attributes));
    const scopes = rs.scopeSpans ? "scopeSpans" : "instrumentationLibrarySpans";
    for (const [si, ss] of ((rs[scopes] ?? []) as Obj[]).entries()) {
      const scopeObj = ss.scope ?? ss.instrumentationLibrary ?? {};
      const scope = JSON.stringify({
        name: scopeObj.name ?? "",
        version: scopeObj.version ?? "",
        attributes: attributes(scopeObj.attributes),
      });
      for (const [pi, s] of ((ss.spans ?? []) as Obj[]).entries()) {
        const at = ["resourceSpans", ri, scopes, si, "spans", pi];
        const trace_id = hexId(s.traceId, 16);
        const span_id = hexId(s.spanId, 8);
        if (!trace_id || !span_id)
          throw new ValidationError([
            {
              loc: ["resourceSpans", "scopeSpans", "spans"],
              msg: `a span without traceId or spanId (name ${JSON.stringify(s.name ?? "")})`,
              type: "missing",
            },
          ]);
        const parent_span_id = hexId(s.parentSpanId, 8) || null;
        out.push({
          trace_id,
          span_id,
          parent_span_id,
          parent_remote: parentRemote(parent_span_id, s.flags),
          name: String(s.name ?? ""),
          kind: Number(s.kind ?? 0),
          start_time: nanosToIso(s.startTimeUnixNano, [...at, "startTimeUnixNano"]),
          end_time: nanosToIso(s.endTimeUnixNano, [...at, "endTimeUnixNano"]),
          resource,
          scope,
          attributes: JSON.stringify(attributes(s.attributes)),
          events: JSON.stringify(
            ((s.events ?? []) as Obj[]).map((e, ei) => ({
              name: e.name,
              time: nanosToIso(e.timeUnixNano, [...at, "events", ei, "timeUnixNano"]),
              attributes: attributes(e.attributes),
            })),
          ),
          links: JSON.stringify(
            ((s.links ?? []) as Obj[]).map((l) => ({
              trace_id: hexId(l.traceId, 16),
              span_id: hexId(l.spanId, 8),
              attributes: attributes(l.attributes),
            })),
          ),
          status: JSON.stringify({ code: Number(s.status?.code ?? 0), message: s.status?.message ?? "" }),
        });
      }
    }
  }
  return out;
}
