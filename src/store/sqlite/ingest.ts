/**
 * The SQLite store's ingest: the merge engine (validate -> merge -> derive ->
 * store) over the shared connection.
 *
 * Merge rules (idempotent by id, order-independent for one post + patches):
 * - a post fills the fields that are still empty; it never overwrites what a
 *   patch (or an earlier post) already set, so a duplicate post changes nothing
 *   and a post arriving after its patch does not undo the patch;
 * - a patch overwrites the fields it carries with non-null values (end_time,
 *   outputs, error, events, ...): it is the later state of the run;
 * - a patch before its post creates a partial row that the post completes.
 * Each ingest is one transaction: all of a request lands, or none of it.
 * Derived columns (native messages of vendor payloads, the detected format)
 * are recomputed only when a change touches inputs or outputs. The native
 * copy of a side (inputs or outputs) larger than DERIVE_ON_READ_BYTES is not
 * stored: writing it would double the row and the memory a large request
 * costs; it is derived again, the same way, when the run is read (runs.ts),
 * so readers see the same run either way. A JSON column larger than that is
 * itself written in pieces (pieces.ts), for the same reason.
 */
import type Database from "better-sqlite3";
import { isObj, type Obj } from "../../internal/obj.js";
import type { Run, RunPatch } from "../../run/schema.js";
import type { CheckedBatch, IngestBatch, IngestResult } from "../contract/runs.js";
import { checkIngestBatch } from "../validate.js";
import type { Texts } from "../merge-rules.js";
import { deriveLlm, firstTokenTime, type DerivedLlm } from "../derive.js";
import { CACHE_KIB } from "./connection.js";
import { DERIVE_ON_READ_BYTES, JSONCOL, SCALAR, textBytes, type Row } from "./columns.js";
import { PIECE_COLUMN_BYTES, type PieceMap, type PieceStore } from "./pieces.js";
import type { SqliteAttachments } from "./attachments.js";
import type { SqliteProjects } from "./projects.js";
import type { SqliteOutbox } from "./outbox.js";
import { RollupDeltas, type ContributionRow } from "../rollup.js";
import { CONTRIBUTION_IN_ROW, contributionInRow, SqliteRollupWriter } from "./rollups.js";
import { ThreadDeltas } from "../thread-rollup.js";
import { SqliteThreadWriter, THREAD_PART_IN_ROW, ThreadBounds, threadPartInRow, type ThreadPart } from "./thread-table.js";
import { InRow, SqliteRunLoader } from "./ingest-load.js";
import { IngestTail } from "./ingest-tail.js";

/** Per JSON column, the text that already says what the row state holds (received or read from the row), so it is written without JSON.stringify. */

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

export class SqliteIngest {
  private readonly insertStmt: Database.Statement;
  /** The insert of a run tried as new before any read of its id: it does nothing where the id is taken. */
  private readonly insertIfAbsentStmt: Database.Statement;
  /** The insert's columns, in the order of its parameters. */
  private readonly insertCols: readonly string[];
  private readonly loader: SqliteRunLoader;
  private readonly updateStmts = new Map<string, Database.Statement>();
  /** The cache is PIECES_CACHE_KIB until the current transaction ends. */
  private smallCache = false;
  private readonly rollups: SqliteRollupWriter;
  private readonly threads: SqliteThreadWriter;

  constructor(
    private readonly db: Database.Database,
    private readonly pieces: PieceStore,
    private readonly attachments: SqliteAttachments,
    private readonly projects: SqliteProjects,
    /** Derive native messages for llm runs on ingest. */
    private readonly normalizeOnIngest: boolean,
    /** Where a completed root run's webhook delivery is written, when webhooks are configured. */
    private readonly outbox?: SqliteOutbox,
  ) {
    const cols = [
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
    ];
    // A plain INSERT: it runs only for an id the load, in the same transaction, found absent, and a deferred
    // transaction whose snapshot another connection overtook fails to write (SQLITE_BUSY_SNAPSHOT) rather than
    // write over it; so the conflict clause of an upsert, which costs a probe of the id index per run, never fires.
    // A run that comes with a post is usually new: it is tried first with INSERT OR IGNORE, whose own probe of the
    // id index is the only look the id gets; only an id found taken is read (and merged into) after all.
    // An update returns the run's part in the rollups and its thread as it now stands; the parts of a batch's new rows
    // are read together once they are all inserted (loader.partsOf), and the load reads the part a run had before.
    // Parameters by position: binding by name makes better-sqlite3 look each name up on the object, per run.
    this.insertCols = cols;
    this.insertStmt = db.prepare(`INSERT INTO runs (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`);
    this.insertIfAbsentStmt = db.prepare(`INSERT OR IGNORE INTO runs (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`);
    this.rollups = new SqliteRollupWriter(db);
    this.threads = new SqliteThreadWriter(db);
    this.loader = new SqliteRunLoader(db);
  }

  /** A JSON value, read from the row if it was left there. */
  private value(v: unknown): unknown {
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
        (stmt = this.db.prepare(`UPDATE runs SET ${cols.map((c) => `${c} = @${c}`).join(", ")} WHERE id = @id ${PARTS}`)),
      );
    return stmt;
  }

  /**
   * Writes the run's row: an update returns the run's parts as they now stand, an insert the new row's rowid.
   * `ifAbsent` (a run with no row read): the row is inserted only if the id is free, and nothing is written and
   * undefined returned where it is taken, or where the run has a column for pieces (those are written first).
   */
  private save(
    state: Obj,
    prev: Row | undefined,
    hasPost: boolean,
    now: string,
    messagesChanged: boolean,
    texts: Texts,
    pieces: PieceMap | undefined,
  ): Row | number;
  private save(
    state: Obj,
    prev: undefined,
    hasPost: boolean,
    now: string,
    messagesChanged: boolean,
    texts: Texts,
    pieces: undefined,
    ifAbsent: true,
  ): number | undefined;
  private save(
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
    const params: Obj = { id, has_post: hasPost ? 1 : 0, received_at: prev?.received_at ?? now, updated_at: now };
    for (const c of SCALAR) params[c] = state[c] ?? null;
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
    for (const c of JSONCOL) {
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
        params[c] = null;
        map = { ...map, [c]: (pieceBytes[c] = bytes) };
        mapChanged = true;
      } else {
        params[c] = text;
        if (map?.[c] !== undefined) {
          // Was in pieces, now small (or gone): back in the row.
          this.pieces.remove(id, c);
          map = { ...map };
          delete map[c];
          mapChanged = true;
        }
      }
    }
    if (!prev || mapChanged) params.pieces = map && Object.keys(map).length ? JSON.stringify(map) : null;
    params.other = state.__other ? JSON.stringify(state.__other) : null;
    // Events left in the row did not change: neither did their first token time.
    if (!(state.events instanceof InRow)) params.first_token_time = firstTokenTime(state.events);
    if (prev && !messagesChanged) {
      // Nothing the derivation reads changed (an end time, events): what was derived stays as it is.
    } else if (d) {
      const bytes = (c: "inputs" | "outputs") => (state[c] instanceof InRow ? state[c].bytes : (pieceBytes[c] ?? textBytes(params[c])));
      params.detected_format = d.detected_format;
      // A large side's native copy is left to the reader (runs.ts): stringifying and binding it costs twice its size again.
      params.normalized_inputs =
        d.normalized_inputs && bytes("inputs") <= DERIVE_ON_READ_BYTES ? JSON.stringify(d.normalized_inputs) : null;
      params.normalized_outputs =
        d.normalized_outputs && bytes("outputs") <= DERIVE_ON_READ_BYTES ? JSON.stringify(d.normalized_outputs) : null;
      params.normalize_error = d.normalize_error;
    } else {
      params.detected_format = params.normalized_inputs = params.normalized_outputs = params.normalize_error = null;
    }
    if (prev) {
      // Only the columns this change wrote: large columns left in the row are not read and rewritten here, and a
      // column set to what the row already holds is left out too, so the indexes on it are not rewritten.
      const cols = Object.keys(params).filter((c) => c !== "id" && c !== "received_at" && !holds(prev, c, params[c]));
      return this.update(cols).get(params) as Row;
    }
    const values = this.insertCols.map((c) => params[c] ?? null);
    if (!ifAbsent) return Number(this.insertStmt.run(values).lastInsertRowid);
    const done = this.insertIfAbsentStmt.run(values);
    return done.changes === 1 ? Number(done.lastInsertRowid) : undefined;
  }

  /** Validate, then merge and store in one transaction (RunStore.ingest), synchronously. */
  ingest(batch: IngestBatch | CheckedBatch): IngestResult {
    const { post, patch } = checkIngestBatch(batch);
    try {
      return this.db.transaction(() => {
        const tail = new IngestTail();
        const result = this.write(batch, post, patch, tail);
        this.writeTail(tail);
        return result;
      })();
    } finally {
      this.restoreCache();
    }
  }

  /**
   * Validate now (a refused batch throws here, before anything is written); the function returned merges and
   * stores it inside a transaction the caller holds, adding its part in shared rows to `tail`, which the caller
   * writes (writeTail) before that transaction ends; it may be called again if that transaction is undone.
   */
  prepare(batch: IngestBatch | CheckedBatch): (tail: IngestTail) => IngestResult {
    const { post, patch } = checkIngestBatch(batch);
    return (tail) => {
      try {
        return this.write(batch, post, patch, tail);
      } finally {
        this.restoreCache();
      }
    };
  }

  /** The projects and rollup cells that ingests in this transaction added to, each written once. */
  writeTail(tail: IngestTail): void {
    for (const [p, at] of tail.projects) this.projects.ensure(p, at);
    this.rollups.apply(tail.rollups);
  }

  private restoreCache(): void {
    if (this.smallCache) {
      this.db.pragma(`cache_size = ${CACHE_KIB}`);
      this.smallCache = false;
    }
  }

  /** Merge and store, inside the caller's transaction; the part in shared rows goes to `tail`. */
  private write(batch: IngestBatch | CheckedBatch, post: readonly Run[], patch: readonly RunPatch[], tail: IngestTail): IngestResult {
    // Group by id so a post and its patches in one request are one read and one write.
    const byId = new Map<string, { posts: Obj[]; patches: Obj[] }>();
    const slot = (id: string) => {
      let s = byId.get(id);
      if (!s) byId.set(id, (s = { posts: [], patches: [] }));
      return s;
    };
    for (const p of post) slot(p.id).posts.push(p as Obj);
    for (const p of patch) slot(p.id).patches.push(p as Obj);
    const now = new Date().toISOString();
    let created = 0;
    let updated = 0;
    const completedRoots: string[] = [];
    /** Each project named in the batch, made once (not once per run) before the transaction ends (writeTail). */
    const projects = new Set<string>();
    const deltas = new RollupDeltas();
    const threads = new ThreadDeltas();
    const bounds = new ThreadBounds();
    // A run with a post is tried as a new row first (a post usually is); the rows of the others are read together
    // before any is written (the writes of one batch touch only their own ids' rows), and so is one found taken.
    const stored = this.loader.rows([...byId].flatMap(([id, s]) => (s.posts.length ? [] : [id])));
    /** Each run's parts before its write, and after it (an update's) or the rowid to read them from (an insert's). */
    const writes: { before: ContributionRow | undefined; threadBefore: ThreadPart | undefined; written: Row | number }[] = [];
    for (const [id, s] of byId) {
      let row = stored.get(id);
      let m = this.loader.merged(id, s, row);
      const tried = s.posts.length ? this.save(m.state, undefined, true, now, true, m.texts, undefined, true) : undefined;
      let written: Row | number;
      if (tried !== undefined) written = tried;
      else {
        if (s.posts.length) {
          row = this.loader.rows([id]).get(id);
          m = this.loader.merged(id, s, row);
        }
        written = this.save(m.state, row, (row?.has_post ?? 0) === 1 || s.posts.length > 0, now, m.changed || !row, m.texts, m.pieces);
      }
      const { state } = m;
      const before = row && contributionInRow(row);
      const threadBefore = row && threadPartInRow(row);
      writes.push({ before, threadBefore, written });
      if (row) updated++;
      else created++;
      const ends = [...s.posts, ...s.patches].some((c) => c.end_time !== undefined && c.end_time !== null);
      if (ends && state.end_time && !state.parent_run_id) {
        completedRoots.push(id);
        this.outbox?.enqueue(id, this.value(state.extra), now);
      }
      if (typeof state.session_name === "string") projects.add(state.session_name);
    }
    const inserted = this.loader.partsOf(writes.flatMap((w) => (typeof w.written === "number" ? [w.written] : [])));
    for (const { before, threadBefore, written } of writes) {
      const parts = typeof written === "number" ? inserted.get(written) : { contribution: contributionInRow(written), thread: threadPartInRow(written) };
      if (!parts) throw new Error(`the run just inserted as rowid ${String(written)} was not found in the same transaction`);
      if (before) deltas.add(before, -1);
      const after = parts.contribution;
      if (after) deltas.add(after, 1);
      if (threadBefore) threads.add(threadBefore, -1);
      const threadAfter = parts.thread;
      if (threadAfter) threads.add(threadAfter, 1);
      bounds.note(threadBefore, threadAfter);
    }
    this.threads.apply(threads, bounds);
    for (const a of batch.attachments ?? []) this.attachments.put(a);
    tail.add(deltas, projects, now);
    return { created, updated, attachments: batch.attachments?.length ?? 0, completedRoots };
  }
}
