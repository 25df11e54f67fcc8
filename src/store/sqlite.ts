/**
 * SqliteRunStore: the RunStore over better-sqlite3 in WAL mode.
 *
 * Merge rules (idempotent by id, order-independent for one post + patches):
 * - a post fills the fields that are still empty; it never overwrites what a
 *   patch (or an earlier post) already set, so a duplicate post changes nothing
 *   and a post arriving after its patch does not undo the patch;
 * - a patch overwrites the fields it carries with non-null values (end_time,
 *   outputs, error, events, ...): it is the later state of the run;
 * - a patch before its post creates a partial row that the post completes.
 * Each ingest() is one transaction: all of a request lands, or none of it.
 * Derived columns (native messages of vendor payloads, the detected format)
 * are recomputed only when a change touches inputs or outputs. The native
 * copy of a side (inputs or outputs) larger than DERIVE_ON_READ_BYTES is not
 * stored: writing it would double the row and the memory a large request
 * costs (issue 13 item 13); it is derived again, the same way, when the run
 * is read (see toStored), so readers see the same run either way. A JSON
 * column larger than that is itself written in pieces (store/pieces.ts), for
 * the same reason.
 */
import { isUuid } from "../run/ids.js";
import Database from "better-sqlite3";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { ValidationError, type Issue } from "../errors.js";
import type { Run, RunPatch } from "../run/schema.js";
import type { CheckedBatch, IngestBatch, IngestResult, RunQuery, RunStore, StoredRun } from "./types.js";
import { checkPatch, checkPost, isChecked, rawTextOf } from "./validate.js";
import { migrate } from "./migrations.js";
import { canonicalTime } from "./time.js";
import { deriveLlm, firstTokenTime } from "./derive.js";
import { PIECE_COLUMN_BYTES, PieceStore, parsePieceMap, type PieceMap } from "./pieces.js";
import { listProjects, listTraces, traceRuns, type TraceFilter, type TraceRun, type TraceSummary } from "./traces.js";

type Obj = Record<string, unknown>;
/** Per JSON column, the text that already says what the row state holds (received or read from the row), so it is written without JSON.stringify. */
type Texts = Partial<Record<string, string>>;

/**
 * A large JSON column left in the row: most merges (an end time, a status)
 * never read the large fields, so they are neither read into this process nor
 * rewritten from it (the UPDATE names only the columns that changed); read
 * only when the derivation needs them.
 */
class InRow {
  constructor(
    readonly id: string,
    readonly column: string,
    /** Its stored size (octet_length, read from the row header, not the value; or the size recorded for its pieces). */
    readonly bytes: number,
    /** Stored in pieces (run_pieces), not in the row. */
    readonly inPieces = false,
  ) {}
}
/** Stored JSON up to this many bytes is read with the row; larger stays in it until needed. */
const IN_ROW_BYTES = 4096;
/**
 * A side (inputs or outputs) of an llm run whose stored JSON is larger than
 * this keeps no stored native copy; it is derived when read. Derivation is
 * pure, so reading derives exactly what writing would have stored.
 */
export const DERIVE_ON_READ_BYTES = PIECE_COLUMN_BYTES;

/** Size in bytes of a JSON column's text as stored (UTF-8). */
function textBytes(text: unknown): number {
  return typeof text === "string" ? Buffer.byteLength(text, "utf8") : 0;
}

/** Whether JSON text goes to pieces: over PIECE_COLUMN_BYTES of UTF-8 (only texts that could be are measured). */
function piecesBytes(text: string): number {
  if (text.length * 3 <= PIECE_COLUMN_BYTES) return 0;
  const bytes = Buffer.byteLength(text, "utf8");
  return bytes > PIECE_COLUMN_BYTES ? bytes : 0;
}

/** The page cache: ingest is write-heavy, and a bigger cache keeps it off the disk where it can. */
const CACHE_KIB = -65536;
/**
 * The page cache while a transaction writes pieces (store/pieces.ts). SQLite
 * keeps a transaction's dirty pages in the cache until it is as full as its
 * size allows, and only then spills them to the WAL: a 60 MB column held up to
 * 64 MiB of them until commit. With a small cache they go out as they are made.
 */
const PIECES_CACHE_KIB = -8192;

/** Columns holding scalars, and columns holding JSON; everything else goes to `other`. */
const SCALAR = ["trace_id", "parent_run_id", "dotted_order", "name", "run_type", "session_name", "start_time", "end_time", "error"] as const;
const JSONCOL = ["inputs", "outputs", "events", "tags", "extra", "serialized"] as const;
const TIME = new Set(["start_time", "end_time"]);
const KNOWN = new Set<string>(["id", ...SCALAR, ...JSONCOL]);
const JSONCOL_SET = new Set<string>(JSONCOL);
const DERIVED = ["detected_format", "normalized_inputs", "normalized_outputs", "normalize_error"] as const;

interface Row {
  id: string;
  has_post: number;
  other: string | null;
  received_at: string;
  detected_format: string | null;
  normalized_inputs: string | null;
  normalized_outputs: string | null;
  normalize_error: string | null;
  first_token_time: string | null;
  pieces: string | null;
  [k: string]: unknown;
}

export interface SqliteRunStoreOptions {
  /** Derive native messages for llm runs on ingest (the collector does; default true). */
  normalizeOnIngest?: boolean;
}

export class SqliteRunStore implements RunStore {
  /** The file (or `:memory:`). */
  readonly path: string;
  private readonly db: Database.Database;
  private readonly normalizeOnIngest: boolean;
  private readonly getStmt: Database.Statement;
  private readonly upsertStmt: Database.Statement;
  private readonly projectStmt: Database.Statement;
  private readonly loadStmt: Database.Statement;
  private readonly updateStmts = new Map<string, Database.Statement>();
  private readonly pieces: PieceStore;
  /** The cache is PIECES_CACHE_KIB until the current transaction ends. */
  private smallCache = false;

  constructor(path: string, opts: SqliteRunStoreOptions = {}) {
    this.path = path;
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    this.db = new Database(path);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("synchronous = NORMAL");
    this.db.pragma("busy_timeout = 5000");
    // Ingest is write-heavy: a bigger page cache and in-memory temp tables keep it off the disk where they can.
    this.db.pragma(`cache_size = ${CACHE_KIB}`);
    this.db.pragma("temp_store = MEMORY");
    migrate(this.db);
    this.normalizeOnIngest = opts.normalizeOnIngest ?? true;
    this.pieces = new PieceStore(this.db);
    this.getStmt = this.db.prepare("SELECT * FROM runs WHERE id = ?");
    const cols = ["id", ...SCALAR, ...JSONCOL, "has_post", "other", "detected_format", "normalized_inputs", "normalized_outputs", "normalize_error", "first_token_time", "pieces", "received_at", "updated_at"];
    // An upsert, not INSERT OR REPLACE: REPLACE deletes and re-inserts, touching every index twice.
    this.upsertStmt = this.db.prepare(
      `INSERT INTO runs (${cols.join(", ")}) VALUES (${cols.map((c) => "@" + c).join(", ")}) ON CONFLICT(id) DO UPDATE SET ${cols
        .filter((c) => c !== "id" && c !== "received_at")
        .map((c) => `${c} = excluded.${c}`)
        .join(", ")}`,
    );
    this.projectStmt = this.db.prepare("INSERT OR IGNORE INTO projects (name, created_at) VALUES (?, ?)");
    // octet_length and typeof read a value's header only: a large column's bytes stay in the file.
    this.loadStmt = this.db.prepare(
      `SELECT id, has_post, other, pieces, received_at, ${SCALAR.join(", ")}, ${JSONCOL.map((c) => `typeof(${c}) AS "${c}:type", octet_length(${c}) AS "${c}:bytes", CASE WHEN octet_length(${c}) <= ${IN_ROW_BYTES} THEN ${c} END AS ${c}`).join(", ")} FROM runs WHERE id = ?`,
    );
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
    if (!stmt) this.updateStmts.set(key, (stmt = this.db.prepare(`UPDATE runs SET ${cols.map((c) => `${c} = @${c}`).join(", ")} WHERE id = @id`)));
    return stmt;
  }

  /** Apply one post or patch to the current row state (in memory). True when it set inputs or outputs. */
  private apply(row: Obj, change: Obj, isPost: boolean, texts: Texts): boolean {
    let messages = false;
    const raw = rawTextOf(change) as Texts | undefined;
    for (const k in change) {
      if (k === "id") continue;
      let v = change[k];
      if (v === undefined) continue;
      if (TIME.has(k) && typeof v === "string") v = canonicalTime(v) ?? v;
      const target = KNOWN.has(k) ? row : ((row.__other as Obj) ??= {});
      const current = target[k];
      const set = isPost ? current === undefined || current === null : v !== null;
      if (!set) continue;
      target[k] = v;
      if (target === row && JSONCOL_SET.has(k)) texts[k] = raw?.[k];
      if (k === "inputs" || k === "outputs" || k === "run_type") messages = true;
    }
    return messages;
  }

  private load(id: string): { state: Obj; row: Row | undefined; texts: Texts; pieces: PieceMap | undefined } {
    const row = this.loadStmt.get(id) as Row | undefined;
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

  private save(state: Obj, prev: Row | undefined, hasPost: boolean, now: string, messagesChanged: boolean, texts: Texts, pieces: PieceMap | undefined): void {
    const id = state.id as string;
    const params: Obj = { id, has_post: hasPost ? 1 : 0, received_at: prev?.received_at ?? now, updated_at: now };
    for (const c of SCALAR) params[c] = state[c] ?? null;
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
      // Nothing the derivation reads changed (an end time, events, metadata): what was derived stays as it is.
    } else if (this.normalizeOnIngest && state.run_type === "llm") {
      const d = deriveLlm(this.value(state.inputs), this.value(state.outputs));
      const bytes = (c: "inputs" | "outputs") => (state[c] instanceof InRow ? state[c].bytes : (pieceBytes[c] ?? textBytes(params[c])));
      params.detected_format = d.detected_format;
      // A large side's native copy is left to the reader (toStored): stringifying and binding it costs twice its size again.
      params.normalized_inputs = d.normalized_inputs && bytes("inputs") <= DERIVE_ON_READ_BYTES ? JSON.stringify(d.normalized_inputs) : null;
      params.normalized_outputs = d.normalized_outputs && bytes("outputs") <= DERIVE_ON_READ_BYTES ? JSON.stringify(d.normalized_outputs) : null;
      params.normalize_error = d.normalize_error;
    } else {
      params.detected_format = params.normalized_inputs = params.normalized_outputs = params.normalize_error = null;
    }
    if (prev) {
      // Only the columns this change wrote: large columns left in the row are not read and rewritten here.
      const { id: _id, received_at: _received, ...set } = params;
      this.update(Object.keys(set)).run(params);
    } else {
      for (const c of DERIVED) params[c] ??= null;
      params.first_token_time ??= null;
      this.upsertStmt.run(params);
    }
    if (typeof state.session_name === "string") this.projectStmt.run(state.session_name, now);
  }

  /** Validate, then merge and store in one transaction (see RunStore.ingest). */
  async ingest(batch: IngestBatch | CheckedBatch): Promise<IngestResult> {
    return this.ingestNow(batch);
  }

  /** The synchronous body of ingest(), for callers already inside this process's event loop turn. */
  ingestNow(batch: IngestBatch | CheckedBatch): IngestResult {
    const issues: Issue[] = [];
    let post: readonly Run[];
    let patch: readonly RunPatch[];
    if (isChecked(batch)) {
      // Checked by BatchCheck with these same schemas: not checked twice.
      ({ post, patch } = batch);
    } else {
      const b = batch as IngestBatch;
      const locate = b.locate ?? ((kind, i) => [kind, i]);
      const okPost: Run[] = (post = []);
      const okPatch: RunPatch[] = (patch = []);
      (b.post ?? []).forEach((r, i) => {
        const ok = checkPost(r, locate("post", i), issues);
        if (ok) okPost.push(ok);
      });
      (b.patch ?? []).forEach((r, i) => {
        const ok = checkPatch(r, locate("patch", i), issues);
        if (ok) okPatch.push(ok);
      });
    }
    for (const a of batch.attachments ?? []) {
      if (!isUuid(a.runId)) issues.push({ loc: ["attachment", a.runId, a.name], msg: `attachment for run id ${JSON.stringify(a.runId)}, which is not a UUID`, type: "uuid" });
    }
    if (issues.length) throw new ValidationError(issues);
    try {
      return this.write(batch, post, patch);
    } finally {
      if (this.smallCache) {
        this.db.pragma(`cache_size = ${CACHE_KIB}`);
        this.smallCache = false;
      }
    }
  }

  private write(batch: IngestBatch | CheckedBatch, post: readonly Run[], patch: readonly RunPatch[]): IngestResult {
    return this.db.transaction((): IngestResult => {
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
      for (const [id, s] of byId) {
        const { state, row, texts, pieces } = this.load(id);
        // Posts first: they only fill gaps, so applying them before or after patches gives the same row.
        let changed = false;
        for (const p of s.posts) changed = this.apply(state, p, true, texts) || changed;
        for (const p of s.patches) changed = this.apply(state, p, false, texts) || changed;
        this.save(state, row, (row?.has_post ?? 0) === 1 || s.posts.length > 0, now, changed || !row, texts, pieces);
        if (row) updated++;
        else created++;
        const ends = [...s.posts, ...s.patches].some((c) => c.end_time !== undefined && c.end_time !== null);
        if (ends && state.end_time && !state.parent_run_id) completedRoots.push(id);
      }
      for (const a of batch.attachments ?? []) this.putAttachment(a.runId, a.name, a.contentType, a.data, a.sha256);
      return { created, updated, attachments: batch.attachments?.length ?? 0, completedRoots };
    })();
  }

  /** Attachments ride with runs in multipart ingest; stored by (run id, name). */
  private putAttachment(runId: string, name: string, contentType: string | undefined, data: Buffer, sha256: string): void {
    this.db.prepare("INSERT OR REPLACE INTO attachments (run_id, name, content_type, size, sha256, data) VALUES (?, ?, ?, ?, ?, ?)").run(runId, name, contentType ?? null, data.length, sha256, data);
  }

  listAttachments(runId: string): { name: string; content_type: string | null; size: number; sha256: string }[] {
    return this.db.prepare("SELECT name, content_type, size, sha256 FROM attachments WHERE run_id = ? ORDER BY name").all(runId) as { name: string; content_type: string | null; size: number; sha256: string }[];
  }

  private toStored(row: Row): StoredRun {
    const out: Obj = { id: row.id };
    if (row.other) Object.assign(out, JSON.parse(row.other));
    for (const c of SCALAR) if (row[c] !== null) out[c] = row[c];
    const pieces = parsePieceMap(row.pieces);
    for (const c of JSONCOL) {
      const text = pieces?.[c] !== undefined ? this.pieces.read(row.id, c) : (row[c] as string | null);
      if (text != null) out[c] = JSON.parse(text);
    }
    out.detected_format = row.detected_format;
    out.normalized_inputs = row.normalized_inputs ? JSON.parse(row.normalized_inputs) : null;
    out.normalized_outputs = row.normalized_outputs ? JSON.parse(row.normalized_outputs) : null;
    out.normalize_error = row.normalize_error;
    // A side too large to keep a stored native copy (see save): derived now, as ingest would have.
    const deferIn = row.normalized_inputs === null && (pieces?.inputs ?? textBytes(row.inputs)) > DERIVE_ON_READ_BYTES;
    const deferOut = row.normalized_outputs === null && (pieces?.outputs ?? textBytes(row.outputs)) > DERIVE_ON_READ_BYTES;
    if (row.run_type === "llm" && row.detected_format !== null && row.normalize_error === null && (deferIn || deferOut)) {
      const d = deriveLlm(out.inputs, out.outputs);
      if (deferIn) out.normalized_inputs = d.normalized_inputs;
      if (deferOut) out.normalized_outputs = d.normalized_outputs;
    }
    out.first_token_time = row.first_token_time;
    return out as unknown as StoredRun;
  }

  getRun(id: string): StoredRun | undefined {
    const row = this.getStmt.get(id) as Row | undefined;
    return row ? this.toStored(row) : undefined;
  }

  queryRuns(q: RunQuery): { runs: StoredRun[]; cursor: string | null } {
    const where: string[] = [];
    const args: unknown[] = [];
    const cond = (sql: string, value: unknown) => {
      where.push(sql);
      args.push(value);
    };
    if (q.trace_id) cond("trace_id = ?", q.trace_id);
    if (q.project) cond("session_name = ?", q.project);
    if (q.run_type) cond("run_type = ?", q.run_type);
    if (q.start_time_gte) cond("start_time >= ?", canonicalTime(q.start_time_gte) ?? q.start_time_gte);
    if (q.start_time_lt) cond("start_time < ?", canonicalTime(q.start_time_lt) ?? q.start_time_lt);
    if (q.cursor) {
      const [t, id] = decodeCursor(q.cursor);
      where.push("(start_time > ? OR (start_time = ? AND id > ?))");
      args.push(t, t, id);
    }
    const limit = Math.min(Math.max(q.limit ?? 100, 1), 1000);
    const sql = `SELECT * FROM runs ${where.length ? "WHERE " + where.join(" AND ") : ""} ORDER BY start_time, id LIMIT ?`;
    const rows = this.db.prepare(sql).all(...args, limit + 1) as Row[];
    const more = rows.length > limit;
    const page = more ? rows.slice(0, limit) : rows;
    const last = page[page.length - 1];
    return { runs: page.map((r) => this.toStored(r)), cursor: more && last ? encodeCursor(String(last.start_time ?? ""), last.id) : null };
  }

  countRuns(project?: string): number {
    const r = (project === undefined ? this.db.prepare("SELECT COUNT(*) AS n FROM runs").get() : this.db.prepare("SELECT COUNT(*) AS n FROM runs WHERE session_name = ?").get(project)) as { n: number };
    return r.n;
  }

  deleteProject(name: string): number {
    return this.db.transaction(() => {
      this.db.prepare("DELETE FROM attachments WHERE run_id IN (SELECT id FROM runs WHERE session_name = ?)").run(name);
      this.db.prepare("DELETE FROM run_pieces WHERE run_id IN (SELECT id FROM runs WHERE session_name = ?)").run(name);
      const n = this.db.prepare("DELETE FROM runs WHERE session_name = ?").run(name).changes;
      this.db.prepare("DELETE FROM projects WHERE name = ?").run(name);
      return n;
    })();
  }

  /** A page of trace summaries, newest first by default (the viewer's list; see traces.ts). */
  listTraces(filter: TraceFilter = {}): { traces: TraceSummary[]; cursor: string | null } {
    return listTraces(this.db, filter);
  }

  /** The runs of one trace in tree order, without payloads. */
  traceRuns(traceId: string): TraceRun[] {
    return traceRuns(this.db, traceId);
  }

  listProjects(): { name: string; created_at: string }[] {
    return listProjects(this.db);
  }

  /**
   * Store OTLP spans (as `otlp-json.ts` toPlain makes them). Returns the traces
   * among them that now have a root (hasRootSpan): the ones to convert. The
   * others wait in `otel_rootless` for their root or for the quiet time.
   */
  storeSpans(spans: Obj[]): string[] {
    const stmt = this.db.prepare(
      "INSERT OR REPLACE INTO otel_spans (trace_id, span_id, parent_span_id, parent_remote, name, kind, start_time, end_time, resource, scope, attributes, events, links, status, received_at) VALUES (@trace_id, @span_id, @parent_span_id, @parent_remote, @name, @kind, @start_time, @end_time, @resource, @scope, @attributes, @events, @links, @status, @received_at)",
    );
    const now = new Date().toISOString();
    const waiting = this.db.prepare("INSERT INTO otel_rootless (trace_id, last_received_at) VALUES (?, ?) ON CONFLICT(trace_id) DO UPDATE SET last_received_at = excluded.last_received_at");
    const unwait = this.db.prepare("DELETE FROM otel_rootless WHERE trace_id = ?");
    const rooted: string[] = [];
    this.db.transaction(() => {
      for (const s of spans) stmt.run({ ...s, parent_remote: s.parent_remote ?? null, received_at: now });
      // Each trace of the request is now either rooted (converted by the caller) or waiting for its root.
      for (const traceId of new Set(spans.map((s) => String(s.trace_id)))) {
        if (this.hasRootSpan(traceId)) {
          unwait.run(traceId);
          rooted.push(traceId);
        } else waiting.run(traceId, now);
      }
    })();
    return rooted;
  }

  /**
   * Store OTLP log records (as src/otlp/logs.ts makes them). Returns the
   * traces among them that have a root span stored: the ones to convert
   * again now. A trace with spans but no root waits on, its quiet time
   * started again, so the rootless sweep converts it with these records.
   */
  storeLogs(logs: readonly Obj[]): string[] {
    const stmt = this.db.prepare(
      "INSERT OR REPLACE INTO otel_logs (trace_id, span_id, record_key, seq, time, event_name, severity, body, attributes, resource, scope, received_at) VALUES (@trace_id, @span_id, @record_key, @seq, @time, @event_name, @severity, @body, @attributes, @resource, @scope, @received_at)",
    );
    const hasSpans = this.db.prepare("SELECT 1 FROM otel_spans WHERE trace_id = ? LIMIT 1");
    const waiting = this.db.prepare("INSERT INTO otel_rootless (trace_id, last_received_at) VALUES (?, ?) ON CONFLICT(trace_id) DO UPDATE SET last_received_at = excluded.last_received_at");
    const now = new Date().toISOString();
    const rooted: string[] = [];
    this.db.transaction(() => {
      for (const l of logs) stmt.run({ ...l, received_at: now });
      for (const traceId of new Set(logs.map((l) => String(l.trace_id)))) {
        if (!traceId) continue;
        if (this.hasRootSpan(traceId)) rooted.push(traceId);
        else if (hasSpans.get(traceId)) waiting.run(traceId, now);
      }
    })();
    return rooted;
  }

  /** Every stored log record of one trace, by time, then by position in its request. */
  logsOfTrace(traceId: string): Obj[] {
    return this.db.prepare("SELECT * FROM otel_logs WHERE trace_id = ? ORDER BY time, seq").all(traceId) as Obj[];
  }

  /**
   * Traces still without a root whose newest span was stored at or before
   * `quietSince` (an ISO time), oldest first, at most `limit` of them.
   */
  quietRootlessTraces(quietSince: string, limit: number): string[] {
    const rows = this.db.prepare("SELECT trace_id FROM otel_rootless WHERE last_received_at <= ? ORDER BY last_received_at LIMIT ?").all(quietSince, limit) as { trace_id: string }[];
    return rows.map((r) => r.trace_id);
  }

  /**
   * The trace no longer waits for a root (it was converted as it is), unless
   * a span of it came after `quietSince`: then it waits on, to be converted
   * again with that span.
   */
  forgetRootless(traceId: string, quietSince: string): void {
    this.db.prepare("DELETE FROM otel_rootless WHERE trace_id = ? AND last_received_at <= ?").run(traceId, quietSince);
  }

  /** A tracing project, created empty (creating a deployment creates the project of its name). */
  ensureProject(name: string): void {
    this.projectStmt.run(name, new Date().toISOString());
  }

  projectExists(name: string): boolean {
    return this.db.prepare("SELECT 1 FROM projects WHERE name = ?").get(name) !== undefined;
  }

  /** Every stored span of one trace, as stored (JSON columns as text). */
  spansOfTrace(traceId: string): Obj[] {
    return this.db.prepare("SELECT * FROM otel_spans WHERE trace_id = ? ORDER BY start_time").all(traceId) as Obj[];
  }

  /**
   * Whether a root of the trace has arrived: its root span (no parent), or
   * the root of one process's part of it (a span whose parent the exporter
   * flagged as remote: otlp-json.ts isLocalRoot).
   */
  hasRootSpan(traceId: string): boolean {
    return this.db.prepare("SELECT 1 FROM otel_spans WHERE trace_id = ? AND (parent_span_id IS NULL OR parent_span_id = '' OR parent_remote = 1) LIMIT 1").get(traceId) !== undefined;
  }

  close(): void {
    if (!this.db.open) return;
    try {
      this.db.pragma("wal_checkpoint(TRUNCATE)");
    } finally {
      this.db.close();
    }
  }
}

export function encodeCursor(startTime: string, id: string): string {
  return Buffer.from(JSON.stringify([startTime, id])).toString("base64url");
}

export function decodeCursor(cursor: string): [string, string] {
  try {
    const v = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === "string" && typeof v[1] === "string") return [v[0], v[1]];
  } catch {
    // fall through
  }
  throw new RangeError("invalid cursor");
}

export type { Run, RunPatch };
