/**
 * The SQLite ingest's reads of stored runs (ingest.ts): the rows of a batch's
 * ids, read together, and a row as the merge's state. A large JSON column is
 * not read with its row: only its size, from the value's header.
 */
import type Database from "better-sqlite3";
import type { Obj } from "../../internal/obj.js";
import type { Texts } from "../merge-rules.js";
import { JSONCOL, SCALAR, type Row } from "./columns.js";
import { parsePieceMap, type PieceMap } from "./pieces.js";
import { CONTRIBUTION_IN_ROW } from "./rollups.js";
import { THREAD_PART_IN_ROW } from "./thread-table.js";

/**
 * A large JSON column left in the row: most merges (an end time, a status)
 * never read the large fields, so they are neither read into this process nor
 * rewritten from it (the UPDATE names only the columns that changed); read
 * only when the derivation needs them.
 */
export class InRow {
  constructor(
    readonly id: string,
    readonly column: string,
    /** Its stored size (octet_length, read from the row header, not the value; or the size recorded for its pieces). */
    readonly bytes: number,
    /** Stored in pieces (run_pieces), not in the row. */
    readonly inPieces = false,
  ) {}
}
/** Most ids whose rows one statement reads. */
const LOAD_MANY = 64;
/** Stored JSON up to this many bytes is read with the row; larger stays in it until needed. */
const IN_ROW_BYTES = 4096;

/** A stored run as the merge starts from it: its state, its row, the texts of its JSON columns as read, its pieces. */
export interface LoadedRun {
  state: Obj;
  row: Row | undefined;
  texts: Texts;
  pieces: PieceMap | undefined;
}

export class SqliteRunLoader {
  /** The statement up to `WHERE id`, and its forms for several ids by how many (rows()). */
  private readonly sql: string;
  private readonly one: Database.Statement;
  private readonly many = new Map<number, Database.Statement>();

  constructor(private readonly db: Database.Database) {
    // octet_length and typeof read a value's header only: a large column's bytes stay in the file.
    this.sql = `SELECT id, has_post, other, pieces, received_at, ${SCALAR.join(", ")}, ${JSONCOL.map((c) => `typeof(${c}) AS "${c}:type", octet_length(${c}) AS "${c}:bytes", CASE WHEN octet_length(${c}) <= ${IN_ROW_BYTES} THEN ${c} END AS ${c}`).join(", ")},
        ${CONTRIBUTION_IN_ROW}, ${THREAD_PART_IN_ROW} FROM runs WHERE id`;
    this.one = db.prepare(`${this.sql} = ?`);
  }

  /** The stored rows of these ids: one statement for up to LOAD_MANY of them, not one per id. */
  rows(ids: readonly string[]): Map<string, Row> {
    const out = new Map<string, Row>();
    if (ids.length === 1) {
      const row = this.one.get(ids[0]) as Row | undefined;
      if (row) out.set(row.id, row);
      return out;
    }
    for (let i = 0; i < ids.length; i += LOAD_MANY) {
      const chunk: (string | null)[] = ids.slice(i, i + LOAD_MANY);
      // Statements kept for 2, 4, 8, ... ids; the places left over are NULL, which matches no id.
      let size = 2;
      while (size < chunk.length) size *= 2;
      let stmt = this.many.get(size);
      if (!stmt) this.many.set(size, (stmt = this.db.prepare(`${this.sql} IN (${new Array(size).fill("?").join(", ")})`)));
      while (chunk.length < size) chunk.push(null);
      for (const row of stmt.all(chunk) as Row[]) out.set(row.id, row);
    }
    return out;
  }

  /** The run's state as stored (`row`, read by rows()), for the merge. */
  state(id: string, row: Row | undefined): LoadedRun {
    const state: Obj = { id };
    const texts: Texts = {};
    if (!row) return { state, row, texts, pieces: undefined };
    const pieces = parsePieceMap(row.pieces);
    for (const c of SCALAR) if (row[c] !== null) state[c] = row[c];
    for (const c of JSONCOL) {
      const inPieces = pieces?.[c];
      if (inPieces !== undefined) {
        state[c] = new InRow(id, c, inPieces, true);
        continue;
      }
      if (row[`${c}:type`] === "null") continue;
      const text = row[c] as string | null;
      // Large (so neither absent nor a JSON null): stays in the row unless a change or the derivation needs it.
      if (text === null) state[c] = new InRow(id, c, row[`${c}:bytes`] as number);
      else {
        state[c] = JSON.parse(text);
        texts[c] = text;
      }
    }
    if (row.other) state.__other = JSON.parse(row.other);
    return { state, row, texts, pieces };
  }
}
