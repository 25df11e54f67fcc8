/**
 * Retention in PostgreSQL (the contract's RetentionStore): traces older than a
 * cut-off removed with their attachments, feedback and run keys, and the OTLP
 * spans and log records staged for traces that started before it.
 *
 * Whole weekly partitions that end at or before the cut-off are dropped: every
 * run in one belongs to a trace that started before the week ended. What is
 * left (the week the cut-off falls in, the default partition) is deleted a
 * slice at a time, each slice its own short transaction, with the event loop
 * served in between, so retention never holds up ingest: first the traces
 * whose root started before the cut-off, then runs whose own trace start says
 * so (a trace whose root never came), in id order. Dropping a partition needs a brief
 * exclusive lock on `runs`: it waits at most LOCK_WAIT for it, and otherwise
 * leaves the partition to the row deletes.
 *
 * Collectors sharing the database prune one at a time: a prune holds a
 * session advisory lock (RETENTION_LOCK) on a connection of its own from start
 * to end, and a prune that finds it taken does nothing (`skipped`), since the
 * one under way removes the same traces. A collector killed mid-prune loses
 * its connection, PostgreSQL releases the lock with it, and the next prune (any
 * collector's) takes the work up where the slices stopped: every slice is a
 * transaction of its own, so what it removed stays removed and nothing is
 * removed twice.
 */
import type pg from "pg";
import type { PruneOptions, PruneResult } from "../contract/retention.js";
import { partitionRange } from "./partitions.js";
import type { PgPool } from "./pool.js";
import { RollupDeltas, type ContributionRow } from "../rollup.js";
import { applyRollups, CONTRIBUTION, groupedContributions } from "./rollups.js";
import { applyThreads, groupedThreadContributions, THREAD_PART } from "./thread-table.js";
import { ThreadDeltas, type ThreadContribution } from "../thread-rollup.js";

/** Take the runs of `table` that `where` picks out of the monitoring rollups (inside the transaction that removes them). */
async function subtractRollups(c: pg.ClientBase, table: string, where: string, args: unknown[]): Promise<void> {
  const d = new RollupDeltas();
  for (const r of await groupedContributions(c, table, where, args)) d.add(r, -1);
  await applyRollups(c, d);
}

/** Traces (or left-over runs) removed per slice. */
const SLICE_TRACES = 200;
/** Runs whose dependents are removed per slice, before their partition is dropped. */
const SLICE_RUNS = 2000;
const LOCK_WAIT = "500ms";

const yieldTurn = () => new Promise<void>((r) => setImmediate(r));

/** Key of the session advisory lock the collector pruning now holds ("rete"); distinct from the schema and per-trace locks. */
export const RETENTION_LOCK = 0x72657465;

export async function pruneTraces(pool: PgPool, cutoff: Date, opts: PruneOptions = {}): Promise<PruneResult> {
  // The lock's own connection stays idle while the slices use the pool's others.
  return pool.withClient(async (lock) => {
    const got = await lock.query<{ ok: boolean }>("SELECT pg_try_advisory_lock($1::bigint) AS ok", [RETENTION_LOCK]);
    if (!got.rows[0]?.ok) return { runs: 0, attachments: 0, partitionsDropped: [], skipped: true };
    try {
      return await pruneUnderLock(pool, cutoff, opts);
    } finally {
      // A connection that could not say unlock must not go back to the pool still holding the lock: ended, its session lets go.
      await lock.query("SELECT pg_advisory_unlock($1::bigint)", [RETENTION_LOCK]).catch(() => lock.end());
    }
  });
}

async function pruneUnderLock(pool: PgPool, cutoff: Date, opts: PruneOptions): Promise<PruneResult> {
  const out: PruneResult = { runs: 0, attachments: 0, partitionsDropped: [] };
  const cut = cutoff.toISOString().replace(/Z$/, "000Z"); // the stored times' form, microseconds included
  const parts = (
    await pool.query<{ name: string }>(
      "SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'runs'::regclass",
    )
  ).rows.map((r) => r.name);
  for (const name of parts.sort()) {
    const range = partitionRange(name);
    if (!range || range.to.getTime() > cutoff.getTime()) continue;
    if (opts.signal?.aborted) return out;
    if (await dropPartition(pool, name, out, opts.signal)) out.partitionsDropped.push(name);
  }
  // Row by row: the roots that started before the cut-off, oldest first, a slice at a time.
  for (;;) {
    if (opts.signal?.aborted) return out;
    const roots = (
      await pool.query<{ id: string }>(
        "SELECT id FROM runs WHERE parent_run_id IS NULL AND start_time < $1 ORDER BY start_time NULLS FIRST, id LIMIT $2",
        [cut, SLICE_TRACES],
      )
    ).rows.map((r) => r.id);
    if (roots.length === 0) break;
    // A root's own row is found by its id (runs_trace leaves out runs whose id is their trace id, trace-members.ts).
    await removeRuns(pool, "(trace_id = ANY($1::text[]) AND trace_id <> id) OR id = ANY($1::text[])", roots, out);
    await yieldTurn();
  }
  // Then what is left of traces that started before it (their root never came), walked by id: the partitions that
  // may hold such runs are the only ones read, through the id index, one pass however many slices it takes.
  let after = "";
  for (;;) {
    if (opts.signal?.aborted) return out;
    const ids = (
      await pool.query<{ id: string }>("SELECT id FROM runs WHERE trace_start < $1::timestamptz AND id > $2 ORDER BY id LIMIT $3", [
        cutoff.toISOString(),
        after,
        SLICE_TRACES,
      ])
    ).rows.map((r) => r.id);
    if (ids.length === 0) break;
    after = ids[ids.length - 1]!;
    await removeRuns(pool, "id = ANY($1::text[])", ids, out);
    await yieldTurn();
  }
  // Staged OTLP spans of traces that started before the cut-off (a trace's root span starts first).
  for (;;) {
    if (opts.signal?.aborted) return out;
    const traces = (
      await pool.query<{ trace_id: string }>(
        "SELECT DISTINCT trace_id FROM (SELECT trace_id FROM otel_spans WHERE start_time < $1 LIMIT $2) s",
        [cut, SLICE_TRACES],
      )
    ).rows.map((r) => r.trace_id);
    if (traces.length === 0) break;
    await pool.transaction(async (c) => {
      await c.query("DELETE FROM otel_spans WHERE trace_id = ANY($1::text[])", [traces]);
      await c.query("DELETE FROM otel_rootless WHERE trace_id = ANY($1::text[])", [traces]);
      await c.query("DELETE FROM otel_logs WHERE trace_id = ANY($1::text[])", [traces]);
    });
    await yieldTurn();
  }
  return out;
}

/** Remove a partition's attachments, feedback and run keys a slice at a time, then the partition itself. False when its lock was not free in time. */
async function dropPartition(pool: PgPool, name: string, out: PruneResult, signal?: AbortSignal): Promise<boolean> {
  let after = "";
  for (;;) {
    if (signal?.aborted) return false;
    const ids = (
      await pool.query<{ id: string }>(`SELECT id FROM ${name} WHERE id > $1 ORDER BY id LIMIT $2`, [after, SLICE_RUNS])
    ).rows.map((r) => r.id);
    if (ids.length === 0) break;
    after = ids[ids.length - 1]!;
    await pool.transaction(async (c) => {
      out.attachments += (await c.query("DELETE FROM attachments WHERE run_id = ANY($1::text[])", [ids])).rowCount ?? 0;
      await c.query("DELETE FROM feedback WHERE run_id = ANY($1::text[])", [ids]);
      await c.query("DELETE FROM webhook_outbox WHERE run_id = ANY($1::text[])", [ids]);
      await c.query("DELETE FROM run_keys WHERE id = ANY($1::text[])", [ids]);
    });
    await yieldTurn();
  }
  return pool.transaction(async (c: pg.PoolClient) => {
    await c.query(`SET LOCAL lock_timeout = '${LOCK_WAIT}'`);
    const n = (await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${name}`)).rows[0]!.n;
    try {
      await c.query("SAVEPOINT drop_partition");
      // Locked first, so what leaves the rollups is exactly what the drop removes; undone with it if the drop cannot go ahead.
      await c.query(`LOCK TABLE runs, ${name} IN ACCESS EXCLUSIVE MODE`);
      await subtractRollups(c, name, "true", []);
      const turns = new ThreadDeltas();
      for (const r of await groupedThreadContributions(c, name)) turns.add(r, -1);
      await c.query(`DROP TABLE ${name}`);
      await applyThreads(c, turns);
    } catch (err) {
      if ((err as { code?: string }).code !== "55P03") throw err;
      await c.query("ROLLBACK TO SAVEPOINT drop_partition");
      return false;
    }
    out.runs += n;
    return true;
  });
}

/** Delete the runs `where` picks (with $1 = `ids`), their attachments, feedback and keys, in one transaction. */
async function removeRuns(pool: PgPool, where: string, ids: string[], out: PruneResult): Promise<void> {
  await pool.transaction(async (c) => {
    const deleted = (
      await c.query<ContributionRow & ThreadContribution & { id: string }>(
        `DELETE FROM runs WHERE ${where} RETURNING id, ${CONTRIBUTION}, ${THREAD_PART}`,
        [ids],
      )
    ).rows;
    // The removed runs leave the monitoring rollups and their threads in the same transaction.
    const d = new RollupDeltas();
    const turns = new ThreadDeltas();
    for (const r of deleted) {
      d.add(r, -1);
      turns.add(r, -1);
    }
    await applyRollups(c, d);
    await applyThreads(c, turns);
    const gone = deleted.map((r) => r.id);
    out.attachments += (await c.query("DELETE FROM attachments WHERE run_id = ANY($1::text[])", [gone])).rowCount ?? 0;
    await c.query("DELETE FROM feedback WHERE run_id = ANY($1::text[])", [gone]);
    await c.query("DELETE FROM webhook_outbox WHERE run_id = ANY($1::text[])", [gone]);
    await c.query("DELETE FROM run_keys WHERE id = ANY($1::text[])", [gone]);
    out.runs += gone.length;
  });
}
