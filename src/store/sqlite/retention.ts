/**
 * Retention in the SQLite store (the contract's RetentionStore): traces older
 * than a cut-off removed with their attachments, pieces and feedback, and the
 * OTLP spans and log records staged for traces that started before it; a
 * slice at a time, each slice one short transaction, with the event loop
 * served in between so the collector keeps answering.
 *
 * Two passes, as the contract defines an old run: first the traces whose root
 * started before the cut-off (through the root-run index), then runs left over
 * whose own record says their trace started before it (a trace whose root
 * never arrived), walking the start-time index.
 */
import type { PruneOptions, PruneResult } from "../contract/retention.js";
import type { SqliteHandle } from "./handle.js";
import { inTraces } from "./trace-members.js";
import { RollupDeltas } from "../rollup.js";
import { groupedContributions, SqliteRollupWriter } from "./rollups.js";
import { ThreadDeltas } from "../thread-rollup.js";
import { groupedThreadContributions, SqliteThreadWriter } from "./thread-table.js";

/** Traces (or left-over runs) removed per slice. */
const SLICE = 200;

const yieldTurn = () => new Promise<void>((r) => setImmediate(r));

/** `2026-11-27T00:00:00.000000Z` and `20261127T000000000000Z`: the cut-off as start times and as a dotted_order's root segment. */
function cutForms(cutoff: Date): { time: string; dotted: string } {
  const time = cutoff.toISOString().replace(/Z$/, "000Z");
  return { time, dotted: time.replace(/[-:.]/g, "") };
}

export async function pruneSqlite(db: SqliteHandle, cutoff: Date, opts: PruneOptions = {}): Promise<PruneResult> {
  const out: PruneResult = { runs: 0, attachments: 0, partitionsDropped: [] };
  const cut = cutForms(cutoff);
  const roots = db.prepare("SELECT id FROM runs WHERE parent_run_id IS NULL AND start_time < ? ORDER BY start_time, id LIMIT ?");
  const leftOver = db.prepare(
    "SELECT id FROM runs WHERE start_time < ? AND (dotted_order IS NULL OR substr(dotted_order, 1, 22) < ?) ORDER BY start_time, id LIMIT ?",
  );
  const rollups = new SqliteRollupWriter(db);
  const threads = new SqliteThreadWriter(db);
  const removeRuns = (ids: string[], wholeTraces: boolean) =>
    db.transaction(() => {
      const list = JSON.stringify(ids);
      const runIds = wholeTraces
        ? `SELECT id FROM runs WHERE ${inTraces("(SELECT value FROM json_each(@list))")} OR id IN (SELECT value FROM json_each(@list))`
        : "SELECT value FROM json_each(@list)";
      // The removed runs leave the monitoring rollups in the same transaction.
      const gone = new RollupDeltas();
      for (const r of groupedContributions(db, `id IN (${runIds})`, { list })) gone.add(r, -1);
      rollups.apply(gone);
      const goneTurns = new ThreadDeltas();
      for (const r of groupedThreadContributions(db, `id IN (${runIds})`, { list })) goneTurns.add(r, -1);
      out.attachments += (db.prepare(`DELETE FROM attachments WHERE run_id IN (${runIds})`).run({ list }) as { changes: number }).changes;
      db.prepare(`DELETE FROM run_pieces WHERE run_id IN (${runIds})`).run({ list });
      db.prepare(`DELETE FROM feedback WHERE run_id IN (${runIds})`).run({ list });
      db.prepare(`DELETE FROM webhook_outbox WHERE run_id IN (${runIds})`).run({ list });
      out.runs += (db.prepare(`DELETE FROM runs WHERE id IN (${runIds})`).run({ list }) as { changes: number }).changes;
      threads.apply(goneTurns);
    })();
  for (;;) {
    if (opts.signal?.aborted) return out;
    const ids = (roots.all(cut.time, SLICE) as { id: string }[]).map((r) => r.id);
    if (ids.length === 0) break;
    removeRuns(ids, true);
    await yieldTurn();
  }
  for (;;) {
    if (opts.signal?.aborted) return out;
    const ids = (leftOver.all(cut.time, cut.dotted, SLICE) as { id: string }[]).map((r) => r.id);
    if (ids.length === 0) break;
    removeRuns(ids, false);
    await yieldTurn();
  }
  // Staged OTLP spans and log records of traces that started before the cut-off (a trace's root span starts first).
  const oldSpans = db.prepare("SELECT DISTINCT trace_id FROM (SELECT trace_id FROM otel_spans WHERE start_time < ? LIMIT ?)");
  for (;;) {
    if (opts.signal?.aborted) return out;
    const traces = (oldSpans.all(cut.time, SLICE) as { trace_id: string }[]).map((r) => r.trace_id);
    if (traces.length === 0) break;
    db.transaction(() => {
      const list = JSON.stringify(traces);
      db.prepare("DELETE FROM otel_spans WHERE trace_id IN (SELECT value FROM json_each(?))").run(list);
      db.prepare("DELETE FROM otel_rootless WHERE trace_id IN (SELECT value FROM json_each(?))").run(list);
      db.prepare("DELETE FROM otel_logs WHERE trace_id IN (SELECT value FROM json_each(?))").run(list);
    })();
    await yieldTurn();
  }
  return out;
}
