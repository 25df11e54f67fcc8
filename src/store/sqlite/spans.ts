/**
 * OTLP span staging in SQLite: `otel_spans` by (trace id, span id), and
 * `otel_rootless`, the traces that wait for a root with their newest span's time.
 */
import type Database from "better-sqlite3";
import type { SpanInput, StoredSpan } from "../contract/spans.js";

export class SqliteSpans {
  constructor(private readonly db: Database.Database) {}

  store(spans: readonly SpanInput[]): string[] {
    const stmt = this.db.prepare(
      "INSERT OR REPLACE INTO otel_spans (trace_id, span_id, parent_span_id, parent_remote, name, kind, start_time, end_time, resource, scope, attributes, events, links, status, received_at) VALUES (@trace_id, @span_id, @parent_span_id, @parent_remote, @name, @kind, @start_time, @end_time, @resource, @scope, @attributes, @events, @links, @status, @received_at)",
    );
    const now = new Date().toISOString();
    const waiting = this.db.prepare(
      "INSERT INTO otel_rootless (trace_id, last_received_at) VALUES (?, ?) ON CONFLICT(trace_id) DO UPDATE SET last_received_at = excluded.last_received_at",
    );
    const unwait = this.db.prepare("DELETE FROM otel_rootless WHERE trace_id = ?");
    const rooted: string[] = [];
    this.db.transaction(() => {
      for (const s of spans) stmt.run({ ...s, parent_remote: s.parent_remote ?? null, received_at: now });
      // Each trace of the request is now either rooted (converted by the caller) or waiting for its root.
      for (const traceId of new Set(spans.map((s) => String(s.trace_id)))) {
        if (this.hasRoot(traceId)) {
          unwait.run(traceId);
          rooted.push(traceId);
        } else waiting.run(traceId, now);
      }
    })();
    return rooted;
  }

  ofTrace(traceId: string): StoredSpan[] {
    return this.db.prepare("SELECT * FROM otel_spans WHERE trace_id = ? ORDER BY start_time").all(traceId) as StoredSpan[];
  }

  hasRoot(traceId: string): boolean {
    return (
      this.db
        .prepare(
          "SELECT 1 FROM otel_spans WHERE trace_id = ? AND (parent_span_id IS NULL OR parent_span_id = '' OR parent_remote = 1) LIMIT 1",
        )
        .get(traceId) !== undefined
    );
  }

  quietRootless(quietSince: string, limit: number): string[] {
    const rows = this.db
      .prepare("SELECT trace_id FROM otel_rootless WHERE last_received_at <= ? ORDER BY last_received_at LIMIT ?")
      .all(quietSince, limit) as { trace_id: string }[];
    return rows.map((r) => r.trace_id);
  }

  /** Whether the trace waits for a root with no span of it stored after quietSince. */
  waitsQuietly(traceId: string, quietSince: string): boolean {
    return (
      this.db.prepare("SELECT 1 FROM otel_rootless WHERE trace_id = ? AND last_received_at <= ?").get(traceId, quietSince) !== undefined
    );
  }

  forgetRootless(traceId: string, quietSince: string): void {
    this.db.prepare("DELETE FROM otel_rootless WHERE trace_id = ? AND last_received_at <= ?").run(traceId, quietSince);
  }
}
