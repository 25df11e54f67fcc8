/**
 * OTLP log staging in PostgreSQL (the LogStore half of PostgresStore):
 * `otel_logs` by (trace id, span id, record key), replaced when sent again,
 * beside the staged spans (spans.ts), whose `otel_rootless` it also touches:
 * records of a trace still waiting for its root start its quiet time again.
 */
import type { LogInput, StoredLog } from "../contract/logs.js";
import { storable } from "./columns.js";
import type { PgPool } from "./pool.js";
import { lockTraces, ROOT_SPAN } from "./spans.js";

const LOG_COLUMNS = [
  "trace_id",
  "span_id",
  "record_key",
  "seq",
  "time",
  "event_name",
  "severity",
  "body",
  "attributes",
  "resource",
  "scope",
  "received_at",
] as const;
const LOG_TYPES: Record<string, string> = { seq: "integer", severity: "integer" };

export class LogStaging {
  constructor(private readonly pool: PgPool) {}

  async storeLogs(logs: readonly LogInput[]): Promise<string[]> {
    if (logs.length === 0) return [];
    const now = new Date().toISOString();
    // One row per (trace, span, key): the last of a request's duplicates wins, as a replace would.
    const unique = [...new Map(logs.map((l) => [`${l.trace_id}/${l.span_id}/${l.record_key}`, l])).values()];
    const value = (l: LogInput, col: (typeof LOG_COLUMNS)[number]) => {
      if (col === "received_at") return now;
      const v = l[col];
      return typeof v === "string" ? storable(v) : v;
    };
    return this.pool.transaction(async (c) => {
      // As for spans (spans.ts): serialized with the conversions and stagings of the same traces.
      await lockTraces(
        c,
        unique.map((l) => l.trace_id).filter((t) => t !== ""),
      );
      await c.query(
        `INSERT INTO otel_logs (${LOG_COLUMNS.join(", ")}) SELECT * FROM unnest(${LOG_COLUMNS.map((col, i) => `$${i + 1}::${LOG_TYPES[col] ?? "text"}[]`).join(", ")})
         ON CONFLICT (trace_id, span_id, record_key) DO UPDATE SET ${LOG_COLUMNS.filter(
           (col) => col !== "trace_id" && col !== "span_id" && col !== "record_key",
         )
           .map((col) => `${col} = excluded.${col}`)
           .join(", ")}`,
        LOG_COLUMNS.map((col) => unique.map((l) => value(l, col))),
      );
      const traces = [...new Set(unique.map((l) => l.trace_id).filter((t) => t !== ""))];
      if (traces.length === 0) return [];
      const rooted = new Set(
        (
          await c.query<{ trace_id: string }>(
            `SELECT DISTINCT trace_id FROM otel_spans WHERE trace_id = ANY($1::text[]) AND ${ROOT_SPAN}`,
            [traces],
          )
        ).rows.map((r) => r.trace_id),
      );
      const waiting = traces.filter((t) => !rooted.has(t));
      if (waiting.length) {
        // Only traces with spans stored wait for a root; records of a trace with none wait for its spans.
        await c.query(
          `INSERT INTO otel_rootless (trace_id, last_received_at) SELECT DISTINCT trace_id, $2 FROM otel_spans WHERE trace_id = ANY($1::text[])
           ON CONFLICT (trace_id) DO UPDATE SET last_received_at = excluded.last_received_at`,
          [waiting, now],
        );
      }
      // In the order the request named them.
      return traces.filter((t) => rooted.has(t));
    });
  }

  async logsOfTrace(traceId: string): Promise<StoredLog[]> {
    return (
      await this.pool.query<StoredLog>(`SELECT ${LOG_COLUMNS.join(", ")} FROM otel_logs WHERE trace_id = $1 ORDER BY time, seq`, [traceId])
    ).rows;
  }
}
