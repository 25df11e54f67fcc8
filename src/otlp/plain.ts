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

/** An attribute list or value of the wrong shape (readAt finds where). */
class BadValue extends Error {}

const shown = (v: unknown): string => {
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 80 ? `${text.slice(0, 80)}...` : text;
};

/** OTLP AnyValue -> a plain JSON value (int64 as number when safe, else string); a value of the wrong shape throws BadValue. */
export function anyValue(v: Obj | undefined | null): unknown {
  if (v === undefined || v === null) return null;
  if (typeof v !== "object" || Array.isArray(v)) throw new BadValue(`expected an AnyValue object, got ${shown(v)}`);
  if ("stringValue" in v) return v.stringValue;
  if ("boolValue" in v) return v.boolValue;
  if ("intValue" in v) {
    const n = Number(v.intValue);
    return Number.isSafeInteger(n) ? n : String(v.intValue);
  }
  if ("doubleValue" in v) return Number(v.doubleValue);
  if ("arrayValue" in v) {
    const values: unknown = v.arrayValue?.values ?? [];
    if (!Array.isArray(values)) throw new BadValue(`expected a list, got ${shown(values)}`);
    return values.map(anyValue);
  }
  if ("kvlistValue" in v) return attributes(v.kvlistValue?.values);
  if ("bytesValue" in v) {
    const b: unknown = v.bytesValue;
    if (typeof b === "string") return b;
    if (b instanceof Uint8Array) return Buffer.from(b).toString("base64");
    throw new BadValue(`expected base64 text, got ${shown(b)}`);
  }
  return null;
}

/** OTLP KeyValue list -> an object; a list or value of the wrong shape throws BadValue. */
export function attributes(kvs: Obj[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (kvs === undefined || kvs === null) return out;
  if (!Array.isArray(kvs)) throw new BadValue(`expected a list of {key, value}, got ${shown(kvs)}`);
  for (const kv of kvs) if (kv && typeof kv.key === "string") put(out, kv.key, anyValue(kv.value));
  return out;
}

/** Where under an AnyValue (`list`: a KeyValue list) the first thing anyValue refuses is, and why; the slow walk, only after a refusal. */
function badPart(v: unknown, list: boolean): { path: (string | number)[]; msg: string } | undefined {
  try {
    if (list) attributes(v as Obj[]);
    else anyValue(v as Obj);
    return undefined;
  } catch (err) {
    if (!(err instanceof BadValue)) throw err;
    const inner = (path: (string | number)[], w: unknown, l: boolean) => {
      const found = badPart(w, l);
      return found && { path: [...path, ...found.path], msg: found.msg };
    };
    if (list && Array.isArray(v)) {
      for (const [i, kv] of (v as Obj[]).entries()) {
        const found = kv && typeof kv.key === "string" ? inner([i, "value"], kv.value, false) : undefined;
        if (found) return found;
      }
    } else if (!list && v && typeof v === "object" && !Array.isArray(v)) {
      const o = v as Obj;
      if ("arrayValue" in o && Array.isArray(o.arrayValue?.values))
        for (const [i, w] of (o.arrayValue.values as unknown[]).entries()) {
          const found = inner(["arrayValue", "values", i], w, false);
          if (found) return found;
        }
      else if ("arrayValue" in o) return { path: ["arrayValue", "values"], msg: err.message };
      else if ("kvlistValue" in o) return inner(["kvlistValue", "values"], o.kvlistValue?.values, true);
      else if ("bytesValue" in o) return { path: ["bytesValue"], msg: err.message };
    }
    return { path: [], msg: err.message };
  }
}

/**
 * A KeyValue list (`list`) or an AnyValue read, a wrong shape becoming a ValidationError naming where it is
 * (`at` and `field`, then the place inside `raw`): the request is malformed, not the collector.
 */
export function readAt(raw: unknown, list: boolean, at: readonly (string | number)[], ...field: (string | number)[]): unknown {
  try {
    return list ? attributes(raw as Obj[]) : anyValue(raw as Obj);
  } catch (err) {
    if (!(err instanceof BadValue)) throw err;
    const found = badPart(raw, list) ?? { path: [], msg: err.message };
    const where = [...at, ...field, ...found.path];
    throw new ValidationError([{ loc: where, msg: `${where.join(".")}: ${found.msg}`, type: "otlp_value" }]);
  }
}

/**
 * An OTLP enum (span kind, severity number) as the integer column keeps: OTLP JSON writes the number;
 * a proto3 JSON writer may write the name, which is looked up; anything else is 0 (unspecified).
 */
export function enumValue(v: unknown, names: (name: string) => number | undefined): number {
  const n = typeof v === "string" && /^\d{1,10}$/.test(v) ? Number(v) : v;
  if (typeof n === "number" && Number.isInteger(n) && n >= 0 && n <= 0x7fffffff) return n;
  return (typeof v === "string" && names(v)) || 0;
}

const SPAN_KINDS = [
  "SPAN_KIND_UNSPECIFIED",
  "SPAN_KIND_INTERNAL",
  "SPAN_KIND_SERVER",
  "SPAN_KIND_CLIENT",
  "SPAN_KIND_PRODUCER",
  "SPAN_KIND_CONSUMER",
];
/** A SpanKind's number by its name. */
export const spanKindByName = (name: string): number | undefined => {
  const i = SPAN_KINDS.indexOf(name);
  return i < 0 ? undefined : i;
};

/** JSON OTLP carries ids as hex (the spec) but some exporters send base64: accept both. */
export function hexId(v: unknown, bytes: number): string {
  if (v === undefined || v === null || v === "") return "";
  if (v instanceof Uint8Array) return Buffer.from(v).toString("hex");
  const s = String(v);
  if (s.length === bytes * 2 && /^[0-9a-fA-F]+$/.test(s)) return s.toLowerCase();
  return Buffer.from(s, "base64").toString("hex");
}

/** The last nanosecond a Date can hold (8.64e15 ms after the epoch). */
const MAX_NANOS = 8_640_000_000_000_000_000_000n;

/**
 * OTLP nanoseconds since the epoch as a canonical ISO time ("" when absent). A value that
 * names no time (not an unsigned integer, or past what a date can hold) is a ValidationError
 * naming where it is (`at`, then `field`), so the request is refused as malformed rather than failing inside the collector.
 */
export function nanosToIso(v: unknown, at: readonly (string | number)[] = [], ...field: (string | number)[]): string {
  if (v === undefined || v === null) return "";
  // A number or a decimal string, as OTLP JSON writes int64; an object is a decoder's 64-bit integer (its text is the number).
  let ns = -1n;
  if (typeof v === "string" || typeof v === "object" || (typeof v === "number" && Number.isInteger(v))) {
    try {
      ns = BigInt(typeof v === "object" ? String(v) : v);
    } catch {
      // Not an integer: refused below.
    }
  }
  if (ns < 0n || ns > MAX_NANOS) throw badTime(v, [...at, ...field]);
  const ms = ns / 1_000_000n;
  const micro = (ns / 1000n) % 1000n;
  return new Date(Number(ms)).toISOString().replace(/Z$/, `${micro.toString().padStart(3, "0")}Z`);
}

function badTime(v: unknown, loc: (string | number)[]): ValidationError {
  const shown = JSON.stringify(v) ?? String(v);
  return new ValidationError([
    {
      loc,
      msg: `${loc.join(".")}: not a time in nanoseconds since the epoch: ${shown.length > 80 ? `${shown.slice(0, 80)}...` : shown}`,
      type: "otlp_time",
    },
  ]);
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

/**
 * What a partial export refused (OTLP's partial success): how many spans or log records, and the first
 * refusal. Given to toPlain/toPlainLogs, a malformed item is counted here and the others kept;
 * without it, the first one throws.
 */
export interface Refusals {
  count: number;
  /** The first refusal. */
  first?: ValidationError;
}

/** Counts `n` items refused for `err` (a ValidationError; anything else is the collector's own fault and thrown). */
export function refuse(refusals: Refusals | undefined, err: unknown, n: number): void {
  if (!refusals || !(err instanceof ValidationError)) throw err;
  refusals.first ??= err;
  refusals.count += n;
}

/**
 * A resource's attributes as the JSON its rows keep (`list`: resourceSpans or resourceLogs, at index `ri`),
 * or undefined when they are malformed: then every item (`items`: spans or logRecords) under its scopes is refused.
 */
export function resourceJson(r: Obj, list: string, ri: number, scopes: Obj[], items: string, refusals?: Refusals): string | undefined {
  try {
    return JSON.stringify(readAt(r.resource?.attributes, true, [list, ri, "resource", "attributes"]));
  } catch (err) {
    refuse(
      refusals,
      err,
      scopes.reduce((n, sc) => n + (Array.isArray(sc?.[items]) ? (sc[items] as unknown[]).length : 0), 0),
    );
    return undefined;
  }
}

export function toPlain(req: Obj, refusals?: Refusals): PlainSpan[] {
  const out: PlainSpan[] = [];
  const resources = (req.resourceSpans ?? []) as Obj[];
  for (let ri = 0; ri < resources.length; ri++) {
    const rs = resources[ri]!;
    const scopes = rs.scopeSpans ? "scopeSpans" : "instrumentationLibrarySpans";
    const scopeList = (rs[scopes] ?? []) as Obj[];
    const resource = resourceJson(rs, "resourceSpans", ri, scopeList, "spans", refusals);
    if (resource === undefined) continue;
    for (let si = 0; si < scopeList.length; si++) {
      const ss = scopeList[si]!;
      const spanList = (ss.spans ?? []) as Obj[];
      const scopeObj = ss.scope ?? ss.instrumentationLibrary ?? {};
      let scope: string;
      try {
        scope = JSON.stringify({
          name: scopeObj.name ?? "",
          version: scopeObj.version ?? "",
          attributes: readAt(scopeObj.attributes, true, ["resourceSpans", ri, scopes, si, "scope", "attributes"]),
        });
      } catch (err) {
        refuse(refusals, err, spanList.length);
        continue;
      }
      for (let pi = 0; pi < spanList.length; pi++) {
        try {
          out.push(plainSpan(spanList[pi]!, ["resourceSpans", ri, scopes, si, "spans", pi], resource, scope));
        } catch (err) {
          refuse(refusals, err, 1);
        }
      }
    }
  }
  return out;
}

function plainSpan(s: Obj, at: (string | number)[], resource: string, scope: string): PlainSpan {
  const trace_id = hexId(s.traceId, 16);
  const span_id = hexId(s.spanId, 8);
  if (!trace_id || !span_id) {
    const loc = [...at, trace_id ? "spanId" : "traceId"];
    throw new ValidationError([
      { loc, msg: `${loc.join(".")}: a span without traceId or spanId (name ${JSON.stringify(s.name ?? "")})`, type: "missing" },
    ]);
  }
  const parent_span_id = hexId(s.parentSpanId, 8) || null;
  return {
    trace_id,
    span_id,
    parent_span_id,
    parent_remote: parentRemote(parent_span_id, s.flags),
    name: String(s.name ?? ""),
    kind: enumValue(s.kind, spanKindByName),
    start_time: nanosToIso(s.startTimeUnixNano, at, "startTimeUnixNano"),
    end_time: nanosToIso(s.endTimeUnixNano, at, "endTimeUnixNano"),
    resource,
    scope,
    attributes: JSON.stringify(readAt(s.attributes, true, at, "attributes")),
    events: JSON.stringify(
      ((s.events ?? []) as Obj[]).map((e, ei) => ({
        name: e.name,
        time: nanosToIso(e.timeUnixNano, at, "events", ei, "timeUnixNano"),
        attributes: readAt(e.attributes, true, at, "events", ei, "attributes"),
      })),
    ),
    links: JSON.stringify(
      ((s.links ?? []) as Obj[]).map((l, li) => ({
        trace_id: hexId(l.traceId, 16),
        span_id: hexId(l.spanId, 8),
        attributes: readAt(l.attributes, true, at, "links", li, "attributes"),
      })),
    ),
    status: JSON.stringify({ code: Number(s.status?.code ?? 0), message: s.status?.message ?? "" }),
  };
}
