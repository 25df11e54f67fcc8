/**
 * OTLP log data in its JSON form (ExportLogsServiceRequest; protobuf is
 * decoded into the same object shape) to plain log rows, the form the store
 * keeps. A record's event name is its own `eventName` (OTLP 1.5), else the
 * `event.name` attribute that earlier emitters set.
 */
import { createHash } from "node:crypto";
import { ValidationError } from "../errors.js";
import type { LogInput } from "../store/contract/logs.js";
import { anyValue, attributes, hexId, nanosToIso } from "./plain.js";

/** A log record as the store keeps it: ids in hex (empty when the record belongs to no span), JSON columns as text. */
export type PlainLog = LogInput;

type Obj = Record<string, any>;

export function toPlainLogs(req: Obj): PlainLog[] {
  const out: PlainLog[] = [];
  const seen = new Map<string, number>();
  for (const [ri, rl] of ((req.resourceLogs ?? []) as Obj[]).entries()) {
    const resource = JSON.stringify(attributes(rl.resource?.attributes));
    for (const [si, sl] of ((rl.scopeLogs ?? []) as Obj[]).entries()) {
      const scopeObj = sl.scope ?? {};
      const scope = JSON.stringify({ name: scopeObj.name ?? "", version: scopeObj.version ?? "" });
      for (const [li, r] of ((sl.logRecords ?? []) as Obj[]).entries()) {
        const attrs = attributes(r.attributes);
        const named = typeof r.eventName === "string" && r.eventName ? r.eventName : attrs["event.name"];
        const timeField = r.timeUnixNano && String(r.timeUnixNano) !== "0" ? "timeUnixNano" : "observedTimeUnixNano";
        const time = nanosToIso(r[timeField], ["resourceLogs", ri, "scopeLogs", si, "logRecords", li, timeField]);
        const trace_id = hexId(r.traceId, 16);
        const span_id = hexId(r.spanId, 8);
        if (span_id && !trace_id)
          throw new ValidationError([
            {
              loc: ["resourceLogs", "scopeLogs", "logRecords", "traceId"],
              msg: "a log record with a spanId but no traceId",
              type: "missing",
            },
          ]);
        const row = {
          trace_id,
          span_id,
          record_key: "",
          seq: out.length,
          time: time || new Date(0).toISOString(),
          event_name: typeof named === "string" ? named : "",
          severity: Number(r.severityNumber ?? 0),
          body: JSON.stringify(anyValue(r.body) ?? null),
          attributes: JSON.stringify(attrs),
          resource,
          scope,
        };
        const digest = createHash("sha256")
          .update(JSON.stringify([trace_id, span_id, row.time, row.event_name, row.body, row.attributes]))
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
