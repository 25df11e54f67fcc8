/**
 * Large JSON columns stored in pieces.
 *
 * A run's JSON column whose text is over PIECE_COLUMN_BYTES is not written
 * into its `runs` row: it goes to `run_pieces` as consecutive rows of at most
 * PIECE_CHARS characters, and the row's `pieces` column records which columns
 * live there and their size in bytes. Why: SQLite copies a bound value once
 * (better-sqlite3 binds with SQLITE_TRANSIENT), builds the row's record as a
 * second copy, and holds the dirty pages of its overflow chain in the page
 * cache, so one 60 MB value cost about three times its size in native memory
 * while it was written, on top of the request's own copies. In pieces, each
 * write holds one piece's copies at a time, and the cache spills as it fills.
 *
 * Pieces are cut from the JS string by slicing (V8 makes a slice a view, not
 * a copy) and never between the two halves of a surrogate pair, so their
 * concatenation is the exact text. Readers join them again (runs.ts toStored, ingest.ts
 * value); SQL over the runs table that reads such a column sees
 * NULL, except the trace search, which also searches pieces (traces.ts).
 */
import type { SqliteHandle, SqliteStatement } from "./handle.js";

/** JSON text larger than this (UTF-8 bytes) is stored in pieces. The same size from which a side's native copy is derived on read. */
export const PIECE_COLUMN_BYTES = 1024 * 1024;
/** Characters per piece: at most 768 KiB of UTF-8, so each write's copies stay small. */
export const PIECE_CHARS = 256 * 1024;

/** Which columns of a row are in pieces, with their size in bytes (the `pieces` column, JSON). */
export type PieceMap = Record<string, number>;

export function parsePieceMap(text: unknown): PieceMap | undefined {
  if (typeof text !== "string" || text === "") return undefined;
  const v = JSON.parse(text) as PieceMap;
  return Object.keys(v).length ? v : undefined;
}

/** Where the `i`th piece of `text` ends: PIECE_CHARS on, moved back one when that would split a surrogate pair. */
function pieceEnd(text: string, start: number): number {
  let end = Math.min(start + PIECE_CHARS, text.length);
  if (end < text.length) {
    const c = text.charCodeAt(end - 1);
    if (c >= 0xd800 && c <= 0xdbff) end--;
  }
  return end;
}

export class PieceStore {
  private readonly insertStmt: SqliteStatement;
  private readonly deleteStmt: SqliteStatement;
  private readonly readStmt: SqliteStatement;

  constructor(private readonly db: SqliteHandle) {
    this.insertStmt = db.prepare("INSERT INTO run_pieces (run_id, col, seq, text) VALUES (?, ?, ?, ?)");
    this.deleteStmt = db.prepare("DELETE FROM run_pieces WHERE run_id = ? AND col = ?");
    this.readStmt = db.prepare("SELECT text FROM run_pieces WHERE run_id = ? AND col = ? ORDER BY seq");
  }

  /** Replaces the pieces of one column with `text`'s. */
  write(runId: string, col: string, text: string): void {
    this.deleteStmt.run(runId, col);
    for (let start = 0, seq = 0; start < text.length; seq++) {
      const end = pieceEnd(text, start);
      this.insertStmt.run(runId, col, seq, text.slice(start, end));
      start = end;
    }
  }

  remove(runId: string, col: string): void {
    this.deleteStmt.run(runId, col);
  }

  /** The column's whole text, joined from its pieces (undefined when it has none). */
  read(runId: string, col: string): string | undefined {
    const rows = this.readStmt.all(runId, col) as { text: string }[];
    if (rows.length === 0) return undefined;
    if (rows.length === 1) return rows[0]!.text;
    const parts = new Array<string>(rows.length);
    for (let i = 0; i < rows.length; i++) parts[i] = rows[i]!.text;
    rows.length = 0;
    return parts.join("");
  }
}
