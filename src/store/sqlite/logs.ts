/**
 * OTLP log staging in SQLite: `otel_logs` by (trace id, span id, record key),
 * beside the staged spans (spans.ts), whose `otel_rootless` it also touches:
 * records of a trace still waiting for its root start its quiet time again.
 */
import type Database from "better-sqlite3";
import type { LogInput, StoredLog } from "../contract/logs.js";
import type { SqliteSpans } from "./spans.js";

export class SqliteLogs {
  constructor(
    private readonly db: Database.Database,
    private readonly spans: SqliteSpans,
  ) {}

  store(logs: readonly LogInput[]): string[] {
    const stmt = this.db.prepare(
      "INSERT OR REPLACE INTO otel_logs (trace_id, span_id, record_key, seq, time, event_name, severity, body, attributes, resource, scope, received_at) VALUES (@trace_id, @span_id, @record_key, @seq, @time, @event_name, @severity, @body, @attributes, @resource, @scope, @received_at)",
    );
    const hasSpans = this.db.prepare("SELECT 1 FROM otel_spans WHERE trace_id = ? LIMIT 1");
    const waiting = this.db.prepare(
      "INSERT INTO otel_rootless (trace_id, last_received_at) VALUES (?, ?) ON CONFLICT(trace_id) DO UPDATE SET last_received_at = excluded.last_received_at",
    );
    const now = new Date().toISOString();
    const rooted: string[] = [];
    this.db.transaction(() => {
      for (const l of logs) stmt.run({ ...l, received_at: now });
      for (const traceId of new Set(logs.map((l) => l.trace_id))) {
        if (!traceId) continue;
        if (this.spans.hasRoot(traceId)) rooted.push(traceId);
        else if (hasSpans.get(traceId)) waiting.run(traceId, now);
      }
    })();
    return rooted;
  }

  ofTrace(traceId: string): StoredLog[] {
    return this.db.prepare("SELECT * FROM otel_logs WHERE trace_id = ? ORDER BY time, seq").all(traceId) as StoredLog[];
  }
}
