/**
 * The write of one run's row for the SQLite ingest (ingest.ts): its columns
 * from the merged state (the JSON columns from the texts received where they
 * say what the state holds, the large ones in pieces, the derived native
 * messages of an llm run), as an INSERT of a new run or an UPDATE of only the
 * columns that changed.
 */
import type Database from "better-sqlite3";
import { isObj, type Obj } from "../../internal/obj.js";
import type { Texts } from "../merge-rules.js";
import { deriveLlm, firstTokenTime, type DerivedLlm } from "../derive.js";
import { CACHE_KIB } from "./connection.js";
import { DERIVE_ON_READ_BYTES, JSONCOL, SCALAR, textBytes, type Row } from "./columns.js";
import { PIECE_COLUMN_BYTES, type PieceMap, type PieceStore } from "./pieces.js";
import { CONTRIBUTION_IN_ROW } from "./rollups.js";
import { THREAD_PART_IN_ROW } from "./thread-table.js";
import { InRow } from "./ingest-load.js";

/** Whether JSON text goes to pieces: over PIECE_COLUMN_BYTES of UTF-8 (only texts that could be are measured). */
function piecesBytes(text: string): number {
  if (text.length * 3 <= PIECE_COLUMN_BYTES) return 0;
  const bytes = Buffer.byteLength(text, "utf8");
  return bytes > PIECE_COLUMN_BYTES ? bytes : 0;
}

/**
 * The page cache while a transaction writes pieces (pieces.ts). SQLite
 * keeps a transaction's dirty pages in the cache until it is as full as its
 * size allows, and only then spills them to the WAL: a 60 MB column held up to
 * 64 MiB of them until commit. With a small cache they go out as they are made.
 */
const PIECES_CACHE_KIB = -8192;

/** Whether the stored row already holds `value` in column `c` (a JSON column over IN_ROW_BYTES was not read: unknown, so no). */
function holds(prev: Row, c: string, value: unknown): boolean {
  if (!(c in prev)) return false;
  const stored = prev[c];
  return value === null ? stored === null && prev[`${c}:type`] !== "text" : stored === value;
}

/** What an update returns: the run's part in the rollups and in its thread, as it stands after the write. */
const PARTS = `RETURNING ${CONTRIBUTION_IN_ROW}, ${THREAD_PART_IN_ROW}`;

/** The row's columns, in the order of the insert's parameters. */
const COLUMNS = [
  "id",
  ...SCALAR,
  ...JSONCOL,
  "has_post",
  "other",
  "detected_format",
  "normalized_inputs",
  "normalized_outputs",
  "normalize_error",
  "first_token_time",
  "pieces",
  "received_at",
  "updated_at",
] as const;
type Column = (typeof COLUMNS)[number];
/** Each column's place among the parameters: a run's values go straight into an array, not through an object by name. */
const AT = Object.fromEntries(COLUMNS.map((c, i) => [c, i])) as Record<Column, number>;
const SCALAR_AT = AT[SCALAR[0]];
const JSON_AT = AT[JSONCOL[0]];
/** A column this write does not set: an update leaves it as stored, an insert writes NULL. */
const UNSET = Symbol("unset");

export class RunRowWriter {
  private readonly insertStmt: Database.Statement;
  /** The insert of a run tried as new before any read of its id: it does nothing where the id is taken. */
  private readonly insertIfAbsentStmt: Database.Statement;
  private readonly updateStmts = new Map<string, Database.Statement>();
  /** The cache is PIECES_CACHE_KIB until the current transaction ends. */
  private smallCache = false;

  constructor(
    private readonly db: Database.Database,
    private readonly pieces: PieceStore,
    /** Derive native messages for llm runs on ingest. */
    private readonly normalizeOnIngest: boolean,
  ) {
    // A plain INSERT: it runs only for an id the load, in the same transaction, found absent, and a deferred
    // transaction whose snapshot another connection overtook fails to write (SQLITE_BUSY_SNAPSHOT) rather than
    // write over it; so the conflict clause of an upsert, which costs a probe of the id index per run, never fires.
    // A run that comes with a post is usually new: it is tried first with INSERT OR IGNORE, whose own probe of the
    // id index is the only look the id gets; only an id found taken is read (and merged into) after all.
    // An update returns the run's part in the rollups and its thread as it now stands; the parts of a batch's new rows
    // are read together once they are all inserted (loader.partsOf), and the load reads the part a run had before.
    // Parameters by position: binding by name makes better-sqlite3 look each name up on the object, per run.
    const values = `(${COLUMNS.join(", ")}) VALUES (${COLUMNS.map(() => "?").join(", ")})`;
    this.insertStmt = db.prepare(`INSERT INTO runs ${values}`);
    this.insertIfAbsentStmt = db.prepare(`INSERT OR IGNORE INTO runs ${values}`);
  }

  /** A JSON value, read from the row if it was left there. */
  value(v: unknown): unknown {
    if (!(v instanceof InRow)) return v;
    if (v.inPieces) {
      const text = this.pieces.read(v.id, v.column);
      return text === undefined ? undefined : JSON.parse(text);
    }
    const r = this.db.prepare(`SELECT ${v.column} AS v FROM runs WHERE id = ?`).get(v.id) as { v: string | null } | undefined;
    return r?.v == null ? undefined : JSON.parse(r.v);
  }

  /** An UPDATE of exactly these columns (statements kept per column set). */
  private update(cols: string[]): Database.Statement {
    const key = cols.join(",");
    let stmt = this.updateStmts.get(key);
    if (!stmt)
      this.updateStmts.set(
        key,
        (stmt = this.db.prepare(`UPDATE runs SET ${cols.map((c) => `${c} = ?`).join(", ")} WHERE id = ? ${PARTS}`)),
      );
    return stmt;
  }

  /** The page cache back to its size once a transaction that wrote pieces ends. */
  restoreCache(): void {
    if (this.smallCache) {
      this.db.pragma(`cache_size = ${CACHE_KIB}`);
      this.smallCache = false;
    }
  }

  /**
   * Writes the run's row: an update returns the run's parts as they now stand, an insert the new row's rowid.
   * `ifAbsent` (a run with no row read): the row is inserted only if the id is free, and nothing is written and
   * undefined returned where it is taken, or where the run has a column for pieces (those are written first).
   */
  save(
    state: Obj,
    prev: Row | undefined,
    hasPost: boolean,
    now: string,
    messagesChanged: boolean,
    texts: Texts,
    pieces: PieceMap | undefined,
  ): Row | number;
  save(
    state: Obj,
    prev: undefined,
    hasPost: boolean,
    now: string,
    messagesChanged: boolean,
    texts: Texts,
    pieces: undefined,
    ifAbsent: true,
  ): number | undefined;
  save(
    state: Obj,
    prev: Row | undefined,
    hasPost: boolean,
    now: string,
    messagesChanged: boolean,
    texts: Texts,
    pieces: PieceMap | undefined,
    ifAbsent = false,
  ): Row | number | undefined {
    const id = state.id as string;
    const values: unknown[] = new Array<unknown>(COLUMNS.length).fill(UNSET);
    values[AT.id] = id;
    values[AT.has_post] = hasPost ? 1 : 0;
    values[AT.received_at] = prev?.received_at ?? now;
    values[AT.updated_at] = now;
    for (let i = 0; i < SCALAR.length; i++) values[SCALAR_AT + i] = state[SCALAR[i]!] ?? null;
    const derive = this.normalizeOnIngest && state.run_type === "llm" && !(prev && !messagesChanged);
    let d: DerivedLlm | undefined;
    if (derive) {
      const extra = this.value(state.extra);
      const metadata = isObj(extra) && isObj(extra.metadata) ? extra.metadata : undefined;
      d = deriveLlm(this.value(state.inputs), this.value(state.outputs), metadata);
      // The model identity the run builder gives an llm run sent without one goes into its stored metadata (derive.ts).
      if (d.metadata) {
        state.extra = { ...(isObj(extra) ? extra : {}), metadata: d.metadata };
        delete texts.extra;
      }
    }
    /** Bytes of the columns written to pieces now. */
    const pieceBytes: Record<string, number> = {};
    let map = pieces;
    let mapChanged = false;
    for (let i = 0; i < JSONCOL.length; i++) {
      const c = JSONCOL[i]!;
      const v = state[c];
      if (v instanceof InRow) continue;
      const text = v === undefined ? null : (texts[c] ?? JSON.stringify(v));
      const bytes = text === null ? 0 : piecesBytes(text);
      if (bytes > 0) {
        if (ifAbsent) return undefined;
        if (!this.smallCache) {
          this.db.pragma(`cache_size = ${PIECES_CACHE_KIB}`);
          this.smallCache = true;
        }
        this.pieces.write(id, c, text!);
        values[JSON_AT + i] = null;
        map = { ...map, [c]: (pieceBytes[c] = bytes) };
        mapChanged = true;
      } else {
        values[JSON_AT + i] = text;
        if (map?.[c] !== undefined) {
          // Was in pieces, now small (or gone): back in the row.
          this.pieces.remove(id, c);
          map = { ...map };
          delete map[c];
          mapChanged = true;
        }
      }
    }
    if (!prev || mapChanged) values[AT.pieces] = map && Object.keys(map).length ? JSON.stringify(map) : null;
    values[AT.other] = state.__other ? JSON.stringify(state.__other) : null;
    // Events left in the row did not change: neither did their first token time.
    if (!(state.events instanceof InRow)) values[AT.first_token_time] = firstTokenTime(state.events);
    if (prev && !messagesChanged) {
      // Nothing the derivation reads changed (an end time, events): what was derived stays as it is.
    } else if (d) {
      const bytes = (c: "inputs" | "outputs") => (state[c] instanceof InRow ? state[c].bytes : (pieceBytes[c] ?? textBytes(values[AT[c]])));
      values[AT.detected_format] = d.detected_format;
      // A large side's native copy is left to the reader (runs.ts): stringifying and binding it costs twice its size again.
      values[AT.normalized_inputs] =
        d.normalized_inputs && bytes("inputs") <= DERIVE_ON_READ_BYTES ? JSON.stringify(d.normalized_inputs) : null;
      values[AT.normalized_outputs] =
        d.normalized_outputs && bytes("outputs") <= DERIVE_ON_READ_BYTES ? JSON.stringify(d.normalized_outputs) : null;
      values[AT.normalize_error] = d.normalize_error;
    } else {
      values[AT.detected_format] = values[AT.normalized_inputs] = values[AT.normalized_outputs] = values[AT.normalize_error] = null;
    }
    if (prev) {
      // Only the columns this change wrote: large columns left in the row are not read and rewritten here, and a
      // column set to what the row already holds is left out too, so the indexes on it are not rewritten.
      // Bound by position, the id last (by name, better-sqlite3 looks each name up on an object).
      const params: unknown[] = [];
      const cols: string[] = [];
      for (let i = 0; i < COLUMNS.length; i++) {
        const c = COLUMNS[i]!;
        const v = values[i];
        if (v === UNSET || c === "id" || c === "received_at" || holds(prev, c, v)) continue;
        cols.push(c);
        params.push(v);
      }
      params.push(id);
      return this.update(cols).get(...params) as Row;
    }
    for (let i = 0; i < values.length; i++) if (values[i] === UNSET) values[i] = null;
    // Spread, not the array: better-sqlite3 binds arguments as they are, but reads an array's elements one by one
    // through V8's generic property lookup, which costs more than binding them.
    if (!ifAbsent) return Number(this.insertStmt.run(...values).lastInsertRowid);
    const done = this.insertIfAbsentStmt.run(...values);
    return done.changes === 1 ? Number(done.lastInsertRowid) : undefined;
  }
}
