/**
 * The SQLite ingest's reads of stored runs (ingest.ts): the rows of a batch's
 * ids, read together, a row as the merge's state (with the batch's changes
 * applied), and the parts of rows just inserted. A large JSON column is not
 * read with its row: only its size, from the value's header.
 */
import type Database from "better-sqlite3";
import type { Obj } from "../../internal/obj.js";
import { applyChange, type Texts } from "../merge-rules.js";
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

/** Statements kept for 2, 4, 8, ... keys, up to LOAD_MANY: the keys of one read, with the places left over NULL (which matches nothing). */
class PaddedIn {
  private readonly bySize = new Map<number, Database.Statement>();

  constructor(
    private readonly db: Database.Database,
    /** The statement up to `IN`. */
    private readonly sql: string,
  ) {}

  /** Every row whose key is one of `keys`, one statement per LOAD_MANY keys. */
  *rows(keys: readonly unknown[]): Generator<Row> {
    for (let i = 0; i < keys.length; i += LOAD_MANY) {
      const chunk: unknown[] = keys.slice(i, i + LOAD_MANY);
      let size = 2;
      while (size < chunk.length) size *= 2;
      let stmt = this.bySize.get(size);
      if (!stmt) this.bySize.set(size, (stmt = this.db.prepare(`${this.sql} IN (${new Array(size).fill("?").join(", ")})`)));
      while (chunk.length < size) chunk.push(null);
      yield* stmt.all(chunk) as Row[];
    }
  }
}

export class SqliteRunLoader {
  private readonly one: Database.Statement;
  /** The rows of several ids (rows()). */
  private readonly many: PaddedIn;
  /** The parts in the rollups and threads of rows just written, by rowid (partsOf()). */
  private readonly parts: PaddedIn;

  constructor(db: Database.Database) {
    // octet_length and typeof read a value's header only: a large column's bytes stay in the file.
    const sql = `SELECT id, has_post, other, pieces, received_at, ${SCALAR.join(", ")}, ${JSONCOL.map((c) => `typeof(${c}) AS "${c}:type", octet_length(${c}) AS "${c}:bytes", CASE WHEN octet_length(${c}) <= ${IN_ROW_BYTES} THEN ${c} END AS ${c}`).join(", ")},
        ${CONTRIBUTION_IN_ROW}, ${THREAD_PART_IN_ROW} FROM runs WHERE id`;
    this.one = db.prepare(`${sql} = ?`);
    this.many = new PaddedIn(db, sql);
    this.parts = new PaddedIn(db, `SELECT rowid AS rowid, ${CONTRIBUTION_IN_ROW}, ${THREAD_PART_IN_ROW} FROM runs WHERE rowid`);
  }

  /**
   * The part in the rollups and in its thread of each run just inserted, by rowid: read together after a batch's
   * inserts, which is cheaper than each INSERT returning them (RETURNING holds its rows in a table of their own).
   */
  partsOf(rowids: readonly number[]): Map<number, Row> {
    const out = new Map<number, Row>();
    for (const row of this.parts.rows(rowids)) out.set(row.rowid as number, row);
    return out;
  }

  /** The stored rows of these ids: one statement for up to LOAD_MANY of them, not one per id. */
  rows(ids: readonly string[]): Map<string, Row> {
    const out = new Map<string, Row>();
    if (ids.length === 1) {
      const row = this.one.get(ids[0]) as Row | undefined;
      if (row) out.set(row.id, row);
      return out;
    }
    for (const row of this.many.rows(ids)) out.set(row.id, row);
    return out;
  }

  /** The run's state as stored (`row`, none for a new run) with a batch's changes to it applied, and whether they changed it. */
  merged(id: string, changes: { posts: Obj[]; patches: Obj[] }, row: Row | undefined): LoadedRun & { changed: boolean } {
    const loaded = this.state(id, row);
    // Posts first: they only fill gaps, so applying them before or after patches gives the same row.
    let changed = false;
    for (const p of changes.posts) changed = applyChange(loaded.state, p, true, loaded.texts) || changed;
    for (const p of changes.patches) changed = applyChange(loaded.state, p, false, loaded.texts) || changed;
    return { ...loaded, changed };
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
