/**
 * OTLP JSON files hold spans, and a trace's spans may be spread over many
 * lines (each line one export request, in the order the exporter flushed:
 * children before their parents). Runs need whole traces, so the spans of a
 * file are first gathered in a scratch SQLite file (disk, not RSS, whatever
 * the file's size), then read back one trace at a time.
 */
import type { PlainSpan } from "../otlp/plain.js";
import { ScratchTable } from "../store/scratch.js";

export class TraceIndex {
  private readonly table = new ScratchTable<[string, string, number, string]>(
    "tracepipe-traces-",
    "CREATE TABLE spans (trace_id TEXT NOT NULL, span_id TEXT NOT NULL, line INTEGER NOT NULL, row TEXT NOT NULL, PRIMARY KEY (trace_id, span_id)) WITHOUT ROWID",
    "INSERT OR REPLACE INTO spans (trace_id, span_id, line, row) VALUES (?, ?, ?, ?)",
    1000,
  );

  private readonly ofTrace = this.table.query<[string], { row: string }>("SELECT row FROM spans WHERE trace_id = ?");

  add(span: PlainSpan, line: number): void {
    this.table.add([span.trace_id, span.span_id, line, JSON.stringify(span)]);
  }

  /** Trace ids in the order their first span appeared in the file. */
  *traceIds(): Generator<string> {
    this.table.commit();
    for (const r of this.table.query<[], { trace_id: string }>("SELECT trace_id FROM spans GROUP BY trace_id ORDER BY MIN(line)").iterate())
      yield r.trace_id;
  }

  spans(traceId: string): PlainSpan[] {
    return this.ofTrace.all(traceId).map((r) => JSON.parse(r.row) as PlainSpan);
  }

  close(): void {
    this.table.close();
  }
}
