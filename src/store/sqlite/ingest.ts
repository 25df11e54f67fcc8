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
 * itself written in pieces (pieces.ts), for the same reason. The reads of
 * stored rows are ingest-load.ts's, the write of a run's row run-row.ts's.
 */
import type Database from "better-sqlite3";
import type { Obj } from "../../internal/obj.js";
import type { Run, RunPatch } from "../../run/schema.js";
import type { CheckedBatch, IngestBatch, IngestResult } from "../contract/runs.js";
import { checkIngestBatch } from "../validate.js";
import { completesRoot } from "../merge-rules.js";
import type { Row } from "./columns.js";
import type { PieceStore } from "./pieces.js";
import type { SqliteAttachments } from "./attachments.js";
import type { SqliteProjects } from "./projects.js";
import type { SqliteOutbox } from "./outbox.js";
import { RollupDeltas, type ContributionRow } from "../rollup.js";
import { contributionInRow, SqliteRollupWriter } from "./rollups.js";
import { ThreadDeltas } from "../thread-rollup.js";
import { SqliteThreadWriter, ThreadBounds, threadPartInRow, type ThreadPart } from "./thread-table.js";
import { SqliteRunLoader } from "./ingest-load.js";
import { RunRowWriter } from "./run-row.js";
import { IngestTail } from "./ingest-tail.js";

export class SqliteIngest {
  private readonly loader: SqliteRunLoader;
  private readonly rows: RunRowWriter;
  private readonly rollups: SqliteRollupWriter;
  private readonly threads: SqliteThreadWriter;

  constructor(
    private readonly db: Database.Database,
    pieces: PieceStore,
    private readonly attachments: SqliteAttachments,
    private readonly projects: SqliteProjects,
    /** Derive native messages for llm runs on ingest. */
    normalizeOnIngest: boolean,
    /** Where a completed root run's webhook delivery is written, when webhooks are configured. */
    private readonly outbox?: SqliteOutbox,
  ) {
    this.rows = new RunRowWriter(db, pieces, normalizeOnIngest);
    this.rollups = new SqliteRollupWriter(db);
    this.threads = new SqliteThreadWriter(db);
    this.loader = new SqliteRunLoader(db);
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
    this.rows.restoreCache();
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
    const toRead: string[] = [];
    for (const [id, s] of byId) if (!s.posts.length) toRead.push(id);
    const stored = this.loader.rows(toRead);
    /** Each run's parts before its write, and after it (an update's) or the rowid to read them from (an insert's). */
    const writes: { before: ContributionRow | undefined; threadBefore: ThreadPart | undefined; written: Row | number }[] = [];
    for (const [id, s] of byId) {
      let row = stored.get(id);
      let m = this.loader.merged(id, s, row);
      const tried = s.posts.length ? this.rows.save(m.state, undefined, true, now, true, m.texts, undefined, true) : undefined;
      let written: Row | number;
      if (tried !== undefined) written = tried;
      else {
        if (s.posts.length) {
          row = this.loader.rows([id]).get(id);
          m = this.loader.merged(id, s, row);
        }
        written = this.rows.save(m.state, row, (row?.has_post ?? 0) === 1 || s.posts.length > 0, now, m.changed || !row, m.texts, m.pieces);
      }
      const { state } = m;
      const before = row && contributionInRow(row);
      const threadBefore = row && threadPartInRow(row);
      writes.push({ before, threadBefore, written });
      if (row) updated++;
      else created++;
      if (completesRoot(state, s.posts, s.patches, (row?.has_post ?? 0) === 1)) {
        completedRoots.push(id);
        this.outbox?.enqueue(id, this.rows.value(state.extra), now);
      }
      if (typeof state.session_name === "string") projects.add(state.session_name);
    }
    const rowids: number[] = [];
    for (const w of writes) if (typeof w.written === "number") rowids.push(w.written);
    const inserted = this.loader.partsOf(rowids);
    for (const { before, threadBefore, written } of writes) {
      const parts =
        typeof written === "number"
          ? inserted.get(written)
          : { contribution: contributionInRow(written), thread: threadPartInRow(written) };
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
