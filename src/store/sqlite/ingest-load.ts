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
import type { ContributionRow } from "../rollup.js";
import { CONTRIBUTION_IN_ROW, CONTRIBUTION_IN_ROW_NAMES, contributionInRawRow, RUN_LATENCY_MS } from "./rollups.js";
import { THREAD_PART_IN_ROW, THREAD_PART_IN_ROW_NAMES, threadPartInRawRow, type ThreadPart } from "./thread-table.js";

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

/** A run's part in the rollups and in its thread. */
export interface RunParts {
  contribution: ContributionRow | undefined;
  thread: ThreadPart | undefined;
}

/**
 * The parts of rows by rowid, each row's latency computed once: the parts' expressions use it several times
 * (its histogram bucket alone five), and each use would parse both times again. Each row's values reach this
 * process as the arguments of one call of PARTS_FUNCTION, not as a result row: better-sqlite3 (under Node 20)
 * builds a result row through one V8 API call per column, which costs more than the expressions themselves,
 * where a function's arguments are converted the same way and passed in one call.
 */
const PARTS_COLUMNS = ["rowid", ...CONTRIBUTION_IN_ROW_NAMES, ...THREAD_PART_IN_ROW_NAMES];
/** The SQL function that hands a row's parts over (registered on the connection, usable only in statements, not in the schema). */
const PARTS_FUNCTION = "tracepipe_ingest_parts";
const PARTS_OF_ROWIDS = [
  `WITH r AS MATERIALIZED (SELECT rowid AS rowid, session_name, start_time, end_time, first_token_time, parent_run_id, run_type, name,
    extra, error, v_usage, ${RUN_LATENCY_MS} AS latency_ms FROM runs WHERE rowid`,
  `), p AS (SELECT rowid, ${`${CONTRIBUTION_IN_ROW}, ${THREAD_PART_IN_ROW}`.split(RUN_LATENCY_MS).join("latency_ms")} FROM r)
    SELECT count(${PARTS_FUNCTION}(${PARTS_COLUMNS.join(", ")})) FROM p`,
] as const;

/** Where the parts function of each connection puts the rows it is handed: the array of the read in progress. */
const partsSinks = new WeakMap<Database.Database, { rows: unknown[][] | undefined }>();

/** The connection's parts function (registered once per connection: every loader on it shares it). */
function partsSink(db: Database.Database): { rows: unknown[][] | undefined } {
  let sink = partsSinks.get(db);
  if (!sink) {
    const s: { rows: unknown[][] | undefined } = { rows: undefined };
    // Not deterministic: each call hands over its row, so none may be left out or reused.
    db.function(PARTS_FUNCTION, { varargs: true, deterministic: false, directOnly: true }, (...row: unknown[]) => {
      if (!s.rows) throw new Error(`${PARTS_FUNCTION} called outside the ingest's read of stored parts`);
      s.rows.push(row);
      // Counted by the statement (count() leaves out NULL): each row it read was handed over.
      return 1;
    });
    partsSinks.set(db, (sink = s));
  }
  return sink;
}

/** Statements kept for 2, 4, 8, ... keys, up to LOAD_MANY: the keys of one read, with the places left over NULL (which matches nothing). */
class PaddedIn<T> {
  private readonly bySize = new Map<number, Database.Statement>();

  constructor(
    private readonly db: Database.Database,
    /** The statement up to `IN`. */
    private readonly sql: string,
    /** The statement after the `IN (...)` list. */
    private readonly after = "",
    /** One value per row (the first column's), not objects. */
    private readonly pluck = false,
  ) {}

  private statement(size: number): Database.Statement {
    let stmt = this.bySize.get(size);
    if (stmt) return stmt;
    stmt = this.db.prepare(`${this.sql} IN (${new Array(size).fill("?").join(", ")})${this.after}`);
    if (this.pluck) stmt.pluck(true);
    this.bySize.set(size, stmt);
    return stmt;
  }

  /** Every row whose key is one of `keys`, one statement per LOAD_MANY keys. */
  rows(keys: readonly unknown[]): T[] {
    const out: T[] = [];
    for (let i = 0; i < keys.length; i += LOAD_MANY) {
      const chunk: unknown[] = keys.slice(i, i + LOAD_MANY);
      let size = 2;
      while (size < chunk.length) size *= 2;
      while (chunk.length < size) chunk.push(null);
      // Spread: bound as arguments, not read back out of an array element by element (run-row.ts says why).
      const rows = this.statement(size).all(...chunk) as T[];
      if (keys.length <= LOAD_MANY) return rows;
      for (const r of rows) out.push(r);
    }
    return out;
  }
}

export class SqliteRunLoader {
  private readonly one: Database.Statement;
  /** The rows of several ids (rows()). */
  private readonly many: PaddedIn<Row>;
  /** The parts in the rollups and threads of rows just written, by rowid (partsOf()): each statement's count of rows handed over. */
  private readonly parts: PaddedIn<number>;
  private readonly partsSink: { rows: unknown[][] | undefined };

  constructor(db: Database.Database) {
    // octet_length and typeof read a value's header only: a large column's bytes stay in the file.
    const sql = `SELECT id, has_post, other, pieces, received_at, ${SCALAR.join(", ")}, ${JSONCOL.map((c) => `typeof(${c}) AS "${c}:type", octet_length(${c}) AS "${c}:bytes", CASE WHEN octet_length(${c}) <= ${IN_ROW_BYTES} THEN ${c} END AS ${c}`).join(", ")},
        ${CONTRIBUTION_IN_ROW}, ${THREAD_PART_IN_ROW} FROM runs WHERE id`;
    this.one = db.prepare(`${sql} = ?`);
    this.many = new PaddedIn(db, sql);
    this.partsSink = partsSink(db);
    this.parts = new PaddedIn(db, PARTS_OF_ROWIDS[0], PARTS_OF_ROWIDS[1], true);
  }

  /**
   * The part in the rollups and in its thread of each run just inserted, by rowid: read together after a batch's
   * inserts, which is cheaper than each INSERT returning them (RETURNING holds its rows in a table of their own).
   */
  partsOf(rowids: readonly number[]): Map<number, RunParts> {
    const out = new Map<number, RunParts>();
    if (!rowids.length) return out;
    const rows: unknown[][] = [];
    this.partsSink.rows = rows;
    let counted = 0;
    try {
      for (const n of this.parts.rows(rowids)) counted += n;
    } finally {
      this.partsSink.rows = undefined;
    }
    if (counted !== rows.length) throw new Error(`the read of stored parts counted ${counted} rows and was handed ${rows.length}`);
    for (const row of rows) {
      if (row.length !== PARTS_COLUMNS.length)
        throw new Error(`the read of stored parts handed ${row.length} values a row, not ${PARTS_COLUMNS.length}`);
      out.set(row[0] as number, {
        contribution: contributionInRawRow(row, 1),
        thread: threadPartInRawRow(row, 1 + CONTRIBUTION_IN_ROW_NAMES.length),
      });
    }
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
    if (!ids.length) return out;
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
    // Each field named: a spread copy that then adds one takes V8's slow path for the added property.
    return { state: loaded.state, row: loaded.row, texts: loaded.texts, pieces: loaded.pieces, changed };
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
