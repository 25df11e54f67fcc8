/**
 * Reading stored runs back: one by id, pages by (start_time, id), counts.
 * A JSON column stored in pieces is joined again, and a side too large to
 * have kept a native copy (DERIVE_ON_READ_BYTES) is derived now, exactly as
 * ingest would have stored it, so readers see the same run either way.
 */
import type Database from "better-sqlite3";
import type { RunPage, RunQuery, StoredRun } from "../contract/runs.js";
import { afterRunCursor, decodeRunCursor, encodeRunCursor, pageLimit, splitPage } from "../paging.js";
import { storedRunOf } from "../run-views.js";
import { canonicalTime } from "../time.js";
import { DERIVE_ON_READ_BYTES, textBytes, type Row } from "./columns.js";
import { parsePieceMap, type PieceStore } from "./pieces.js";
import { metadataConditions } from "./metadata.js";
import { inTrace } from "./trace-members.js";

export class SqliteRuns {
  private readonly getStmt: Database.Statement;

  constructor(
    private readonly db: Database.Database,
    private readonly pieces: PieceStore,
  ) {
    this.getStmt = db.prepare("SELECT * FROM runs WHERE id = ?");
  }

  private toStored(row: Row): StoredRun {
    const pieces = parsePieceMap(row.pieces);
    return storedRunOf(row, {
      json: (c) => (pieces?.[c] !== undefined ? this.pieces.read(row.id, c) : (row[c] as string | null)),
      // A side too large to keep a stored native copy (see ingest.ts save).
      large: (side) => (pieces?.[side] ?? textBytes(row[side])) > DERIVE_ON_READ_BYTES,
    });
  }

  get(id: string): StoredRun | undefined {
    const row = this.getStmt.get(id) as Row | undefined;
    return row ? this.toStored(row) : undefined;
  }

  query(q: RunQuery): RunPage {
    const where: string[] = [];
    const args: unknown[] = [];
    const cond = (sql: string, value: unknown) => {
      where.push(sql);
      args.push(value);
    };
    // The trace id stands three times in the condition (trace-members.ts).
    if (q.trace_id) {
      where.push(inTrace("?"));
      args.push(q.trace_id, q.trace_id, q.trace_id);
    }
    if (q.project) cond("session_name = ?", q.project);
    if (q.run_type) cond("run_type = ?", q.run_type);
    if (q.start_time_gte) cond("start_time >= ?", canonicalTime(q.start_time_gte) ?? q.start_time_gte);
    if (q.start_time_lt) cond("start_time < ?", canonicalTime(q.start_time_lt) ?? q.start_time_lt);
    where.push(...metadataConditions("runs", (v) => (args.push(v), "?"), q.metadata, q.tags));
    if (q.cursor) {
      const [t, id] = decodeRunCursor(q.cursor);
      where.push(afterRunCursor(t, id, (v) => (args.push(v), "?")));
    }
    const limit = pageLimit(q.limit, 100, 1000);
    const sql = `SELECT * FROM runs ${where.length ? "WHERE " + where.join(" AND ") : ""} ORDER BY start_time, id LIMIT ?`;
    const rows = this.db.prepare(sql).all(...args, limit + 1) as Row[];
    const { page, more, last } = splitPage(rows, limit);
    return {
      runs: page.map((r) => this.toStored(r)),
      cursor: more && last ? encodeRunCursor((last.start_time as string | null) ?? null, last.id) : null,
    };
  }

  count(project?: string): number {
    const r = (
      project === undefined
        ? this.db.prepare("SELECT COUNT(*) AS n FROM runs").get()
        : this.db.prepare("SELECT COUNT(*) AS n FROM runs WHERE session_name = ?").get(project)
    ) as { n: number };
    return r.n;
  }
}
