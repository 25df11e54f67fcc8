/**
 * OTLP log data in its JSON form (ExportLogsServiceRequest; protobuf is
 * decoded into the same object shape) to plain log rows, the form the store
 * keeps. A record's event name is its own `eventName` (OTLP 1.5), else the
 * `event.name` attribute that earlier emitters set.
 */
import { createHash } from "node:crypto";
import { ValidationError } from "../errors.js";
import type { LogInput } from "../store/contract/logs.js";
import { enumValue, hexId, nanosToIso, readAt, refuse, resourceJson, type Refusals } from "./plain.js";

/** A log record as the store keeps it: ids in hex (empty when the record belongs to no span), JSON columns as text. */
export type PlainLog = LogInput;

type Obj = Record<string, any>;

const SEVERITY = /^SEVERITY_NUMBER_(TRACE|DEBUG|INFO|WARN|ERROR|FATAL)([234])?$/;
const SEVERITY_BASE: Record<string, number> = { TRACE: 1, DEBUG: 5, INFO: 9, WARN: 13, ERROR: 17, FATAL: 21 };
/** A SeverityNumber's number by its name (SEVERITY_NUMBER_INFO2 is 10). */
const severityByName = (name: string): number | undefined => {
  const m = SEVERITY.exec(name);
  return m ? SEVERITY_BASE[m[1]!]! + (m[2] ? Number(m[2]) - 1 : 0) : undefined;
};

export function toPlainLogs(req: Obj, refusals?: Refusals): PlainLog[] {
  const out: PlainLog[] = [];
  const seen = new Map<string, number>();
  const resources = (req.resourceLogs ?? []) as Obj[];
  for (let ri = 0; ri < resources.length; ri++) {
    const rl = resources[ri]!;
    const scopeList = (rl.scopeLogs ?? []) as Obj[];
    const resource = resourceJson(rl, "resourceLogs", ri, scopeList, "logRecords", refusals);
    if (resource === undefined) continue;
    for (let si = 0; si < scopeList.length; si++) {
      const sl = scopeList[si]!;
      const scopeObj = sl.scope ?? {};
      const scope = JSON.stringify({ name: scopeObj.name ?? "", version: scopeObj.version ?? "" });
      const records = (sl.logRecords ?? []) as Obj[];
      for (let li = 0; li < records.length; li++) {
        let row: PlainLog;
        try {
          row = plainLog(records[li]!, ["resourceLogs", ri, "scopeLogs", si, "logRecords", li], resource, scope, out.length);
        } catch (err) {
          refuse(refusals, err, 1);
          continue;
        }
        const digest = createHash("sha256")
          .update(JSON.stringify([row.trace_id, row.span_id, row.time, row.event_name, row.body, row.attributes]))
          .digest("hex")
          .slice(0, 32);
        const n = seen.get(digest) ?? 0;
        seen.set(digest, n + 1);
        row.record_key = n ? `${digest}.${n}` : digest;
        out.push(row);
      }
    }
  }
  return out;
}

/** One log record as a row (its record_key is set by the caller, which sees the request's other records). */
function plainLog(r: Obj, at: (string | number)[], resource: string, scope: string, seq: number): PlainLog {
  const attrs = readAt(r.attributes, true, at, "attributes") as Record<string, unknown>;
  const named = typeof r.eventName === "string" && r.eventName ? r.eventName : attrs["event.name"];
  const timeField = r.timeUnixNano && String(r.timeUnixNano) !== "0" ? "timeUnixNano" : "observedTimeUnixNano";
  const time = nanosToIso(r[timeField], at, timeField);
  const trace_id = hexId(r.traceId, 16);
  const span_id = hexId(r.spanId, 8);
  if (span_id && !trace_id) {
    const loc = [...at, "traceId"];
    throw new ValidationError([{ loc, msg: `${loc.join(".")}: a log record with a spanId but no traceId`, type: "missing" }]);
  }
  return {
    trace_id,
    span_id,
    record_key: "",
    seq,
    time: time || new Date(0).toISOString(),
    event_name: typeof named === "string" ? named : "",
    severity: enumValue(r.severityNumber, severityByName),
    body: JSON.stringify(readAt(r.body, false, at, "body") ?? null),
    attributes: JSON.stringify(attrs),
    resource,
    scope,
  };
}
