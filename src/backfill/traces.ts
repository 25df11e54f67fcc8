/**
 * OTLP JSON files hold spans, and a trace's spans may be spread over many
 * lines (each line one export request, in the order the exporter flushed:
 * children before their parents). Runs need whole traces, so the spans of a
 * file are first gathered here, in a temporary SQLite file (disk, not RSS,
 * whatever the file's size), then read back one trace at a time.
 */
import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PlainSpan } from "../otel/otlp-json.js";

export class TraceIndex {
  private readonly dir: string;
  private readonly db: Database.Database;
  private readonly put: Database.Statement<[string, string, number, string]>;
  private pending: [string, string, number, string][] = [];
  size = 0;

  constructor() {
    this.dir = mkdtempSync(join(tmpdir(), "tracepipe-traces-"));
    this.db = new Database(join(this.dir, "spans.db"));
    this.db.pragma("journal_mode = OFF");
    this.db.pragma("synchronous = OFF");
    this.db.exec("CREATE TABLE spans (trace_id TEXT NOT NULL, span_id TEXT NOT NULL, line INTEGER NOT NULL, row TEXT NOT NULL, PRIMARY KEY (trace_id, span_id)) WITHOUT ROWID");
    this.put = this.db.prepare("INSERT OR REPLACE INTO spans (trace_id, span_id, line, row) VALUES (?, ?, ?, ?)");
  }

  add(span: PlainSpan, line: number): void {
    this.pending.push([span.trace_id, span.span_id, line, JSON.stringify(span)]);
    if (this.pending.length >= 1000) this.commit();
  }

  commit(): void {
    if (!this.pending.length) return;
    const rows = this.pending;
    this.pending = [];
    this.db.transaction(() => {
      for (const r of rows) this.put.run(...r);
    })();
    this.size += rows.length;
  }

  /** Trace ids in the order their first span appeared in the file. */
  *traceIds(): Generator<string> {
    this.commit();
    for (const r of this.db.prepare("SELECT trace_id FROM spans GROUP BY trace_id ORDER BY MIN(line)").iterate() as Iterable<{ trace_id: string }>) yield r.trace_id;
  }

  spans(traceId: string): PlainSpan[] {
    return (this.db.prepare("SELECT row FROM spans WHERE trace_id = ?").all(traceId) as { row: string }[]).map((r) => JSON.parse(r.row) as PlainSpan);
  }

  close(): void {
    this.db.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
